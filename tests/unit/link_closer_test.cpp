// core/link_closer: every descriptor handed over is closed, by threads started only when
// descriptors wait (none for a run that closes nothing), at most 32 of them.
#include "core/link_closer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

namespace dc {
namespace {

size_t thread_count()
{
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

bool is_open(int fd)
{
  return fcntl(fd, F_GETFD) != -1;
}

// `n` descriptors of pipes (both ends).
std::vector<int> open_pipes(size_t n)
{
  std::vector<int> fds;
  while (fds.size() < n) {
    int ends[2];
    if (pipe(ends) != 0)
      break;
    fds.insert(fds.end(), {ends[0], ends[1]});
  }
  return fds;
}

TEST(LinkCloser, StartsNoThreadUntilADescriptorWaits)
{
  size_t before = thread_count();
  link_closer closer;
  EXPECT_EQ(thread_count(), before);
}

TEST(LinkCloser, ClosesEveryDescriptorWithAtMost32Threads)
{
  size_t before = thread_count();
  std::vector<int> fds = open_pipes(100);
  ASSERT_EQ(fds.size(), 100u);
  {
    link_closer closer;
    closer.close_later(fds);
    EXPECT_LE(thread_count(), before + 32);
    EXPECT_GT(thread_count(), before);
    closer.wait_below(1, std::chrono::seconds(10));
    for (int fd : fds) EXPECT_FALSE(is_open(fd)) << fd;
  }
  EXPECT_EQ(thread_count(), before);
}

TEST(LinkCloser, StartsOneThreadForOneDescriptor)
{
  size_t before = thread_count();
  std::vector<int> fds = open_pipes(1);
  ASSERT_EQ(fds.size(), 2u);
  link_closer closer;
  closer.close_later({fds[0]});
  EXPECT_EQ(thread_count(), before + 1);
  closer.close_later({fds[1]});
  EXPECT_LE(thread_count(), before + 2);
  closer.wait_below(1, std::chrono::seconds(10));
  EXPECT_FALSE(is_open(fds[0]));
  EXPECT_FALSE(is_open(fds[1]));
}

}  // namespace
}  // namespace dc
