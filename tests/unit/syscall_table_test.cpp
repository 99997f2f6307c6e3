#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <set>
#include <string>

#include "core/syscall_table.h"

namespace dc {
namespace {

TEST(SyscallTable, NumbersAndNamesAreUniqueAndIndexed)
{
  std::set<int> numbers;
  std::set<std::string_view> names;
  for (const auto& s : traced_syscalls()) {
    EXPECT_TRUE(numbers.insert(s.nr).second) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    ASSERT_EQ(find_syscall(static_cast<uint32_t>(s.nr)), &s);
    EXPECT_EQ(s.spec.traced, 1);
  }
  EXPECT_EQ(find_syscall(SYS_getpid), nullptr);
  EXPECT_EQ(find_syscall(100000), nullptr);
}

TEST(SyscallTable, ArgumentIndexesAreInRange)
{
  for (const auto& s : traced_syscalls()) {
    for (int8_t i : {s.spec.fd_a, s.spec.fd_b})
      EXPECT_TRUE(i == DC_ARG_NONE || i == DC_ARG_RET || (i >= 0 && i < 6)) << s.name;
    for (int8_t i : {s.spec.path_a, s.spec.path_b, s.spec.dirfd_a, s.spec.dirfd_b})
      EXPECT_TRUE(i == DC_ARG_NONE || (i >= 0 && i < 6)) << s.name;
    for (const auto& a : s.args) {
      if (!a.key.empty()) {
        EXPECT_TRUE(a.index >= 0 && a.index < 6) << s.name << " " << a.key;
      }
    }
  }
}

TEST(SyscallTable, CoversTheIssueList)
{
  for (const char* name : {"openat",     "openat2",   "close",    "close_range",     "read",
                           "write",      "pread64",   "pwrite64", "readv",           "writev",
                           "preadv",     "pwritev",   "preadv2",  "pwritev2",        "lseek",
                           "fsync",      "fdatasync", "sync",     "syncfs",          "sync_file_range",
                           "fallocate",  "ftruncate", "truncate", "fstat",           "newfstatat",
                           "statx",      "faccessat", "unlinkat", "renameat2",       "mkdirat",
                           "getdents64", "mmap",      "munmap",   "msync",           "dup",
                           "dup3",       "fcntl",     "splice",   "copy_file_range", "io_uring_enter",
                           "sendto",     "recvfrom",  "sendmsg",  "recvmsg"}) {
    bool found = false;
    for (const auto& s : traced_syscalls()) found |= s.name == name;
    EXPECT_TRUE(found) << name;
  }
}

}  // namespace
}  // namespace dc
