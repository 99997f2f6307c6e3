// The block layer where requests merge (an I/O scheduler on the device): a request merged into
// another ends without completing, and the next request the kernel makes at its address (they
// are preallocated per tag) must not inherit its owner. A traced fio writes 4-KiB blocks in
// random order, 64 at once, so that neighbours merge in mq-deadline; meanwhile an untraced
// writer of the test's own writes elsewhere on the same device. Ground truth: fio's own bytes.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr uint64_t block = 4096;
constexpr uint64_t fio_region = 256 * 1024;  // fio's blocks: [0, 256 KiB)
constexpr int loops = 100;
constexpr uint64_t untraced_at = 64 << 20;  // the untraced writer's blocks: [64 MiB, 72 MiB)

struct block_merge_test : runtime_test {};

TEST_F(block_merge_test, AMergedRequestLeavesNoOwnerToTheNextRequestAtItsAddress)
{
  loop_fs disk(dir.path, "raw", 128);
  disk.set_scheduler("mq-deadline");
  std::string job = dir.path + "/merge.fio";
  std::ofstream(job) << "[merge]\nfilename=" << disk.device()
                     << "\ndirect=1\nioengine=libaio\niodepth=64\niodepth_batch_submit=64\n"
                        "iodepth_batch_complete_min=64\nbs=4k\nsize="
                     << fio_region << "\nloops=" << loops << "\nrw=randwrite\n";

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> untraced_writes{0};
  std::thread untraced([&] {
    int fd = open(disk.device().c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    void* buf = nullptr;
    if (fd < 0 || posix_memalign(&buf, block, block) != 0)
      return;
    for (uint64_t at = 0; !stop; at = (at + block) % (8 << 20))
      if (pwrite(fd, buf, block, static_cast<off_t>(untraced_at + at)) == static_cast<ssize_t>(block))
        ++untraced_writes;
    free(buf);
    close(fd);
  });
  // fio, then a second of quiet in which only the untraced writer makes requests.
  auto run = trace_command(dir, "fio --output=/dev/null " + shell_quote(job) + " && sleep 1");
  stop = true;
  untraced.join();
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_GT(untraced_writes.load(), 1000u) << "the untraced writer hardly ran: nothing to inherit";

  uint64_t fio_bytes = 0, fio_requests = 0, untraced_region_bytes = 0;
  for (const auto& e : complete_events(run.trace)) {
    if (e["cat"] != "BLOCK" || e["args"]["major"] != disk.device_major() ||
        e["args"]["minor"] != disk.device_minor())
      continue;
    uint64_t bytes = e["args"]["bytes"];
    if (e["args"]["sector"].get<uint64_t>() * 512 >= untraced_at)
      untraced_region_bytes += bytes;
    else if (e["name"] == "write") {
      fio_bytes += bytes;
      ++fio_requests;
    }
  }
  EXPECT_EQ(untraced_region_bytes, 0u) << "the untraced writer's requests were charged to the traced command";
  EXPECT_EQ(fio_bytes, fio_region * loops);
  // The premise: fio's writes merged (into fewer requests than writes).
  EXPECT_LT(fio_requests, fio_region * loops / block) << "no write merged: the test did not exercise merges";
}

}  // namespace
}  // namespace dc::test
