// The uprobe warm-up (probe/uprobe_warmup.h): it registers do-nothing uprobes on this
// executable's entry point while it runs, stops when told, hands its links over, and while it
// runs a registration does not wait for the grace period a cold one waits for.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include "probe/uprobe_warmup.h"

namespace dc {
namespace {

constexpr uint32_t link_type_uprobe_multi = 12;  // BPF_LINK_TYPE_UPROBE_MULTI (Linux 6.6+)

uint32_t link_type(int fd)
{
  bpf_link_info info{};
  uint32_t length = sizeof(info);
  return bpf_obj_get_info_by_fd(fd, &info, &length) == 0 ? info.type : 0;
}

TEST(uprobe_warmup, RegistersUntilStoppedAndHandsOverItsLinks)
{
  ASSERT_EQ(geteuid(), 0u) << "uprobes need root";
  uprobe_warmup warm;
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  warm.stop();
  EXPECT_EQ(warm.error(), "");
  unsigned made = warm.links_made();
  // One every 4 ms, the first after a grace period at most: several in 60 ms.
  EXPECT_GE(made, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(warm.links_made(), made) << "it registered after stop()";
  std::vector<int> links = warm.take_links();
  EXPECT_EQ(links.size(), made);
  for (int fd : links) {
    EXPECT_EQ(link_type(fd), link_type_uprobe_multi) << "fd " << fd;
    close(fd);
  }
  EXPECT_TRUE(warm.take_links().empty()) << "handed over twice";
}

// The median time of `n` registrations of one do-nothing uprobe, each closed at once after.
double median_registration_ms(int prog, int n)
{
  std::vector<double> ms;
  std::vector<int> made;
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    int link = link_at_entry(prog);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    EXPECT_GE(link, 0) << "errno " << -link;
    if (link >= 0)
      made.push_back(link);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));  // cold again, but warmed
  }
  for (int fd : made) close(fd);  // each waits for grace periods of its own: after the timing
  std::ranges::sort(ms);
  return ms[ms.size() / 2];
}

TEST(uprobe_warmup, WhileItRunsARegistrationSkipsTheGracePeriod)
{
  ASSERT_EQ(geteuid(), 0u) << "uprobes need root";
  int prog = load_empty_uprobe_program();
  ASSERT_GE(prog, 0) << "the kernel refuses an empty uprobe_multi program";
  uprobe_warmup warm;
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // its first grace period passed
  ASSERT_EQ(warm.error(), "");
  // Warm, a registration is a few walks of this process's mappings (~0.1 ms); cold, it waits
  // for an RCU grace period first (5-30 ms on the machines of this project).
  double warm_ms = median_registration_ms(prog, 5);
  warm.stop();
  EXPECT_LT(warm_ms, 2.0) << "a registration during the warm-up waited as a cold one does";
  std::cout << "figure: uprobe registration during the warm-up, median of 5: " << warm_ms << " ms\n";
  for (int fd : warm.take_links()) close(fd);
  close(prog);
}

}  // namespace
}  // namespace dc
