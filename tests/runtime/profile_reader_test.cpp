// collect/profile_reader against a real BPF hash map of profile counters (root): read in batches,
// as on this kernel, and key by key, the way a kernel without batch operations on hash maps is
// read (CI's kernel has them, so this is the only run of that path). Either way, each ended
// counter comes out exactly once with its counts, and counters of intervals not yet ended stay.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "collect/profile_reader.h"
#include "core/bpf_map_keys.h"

namespace dc {
namespace {

constexpr uint64_t interval_ns = 1'000'000'000;
constexpr uint64_t files_per_interval = 3000;  // 6 intervals: 18,000 counters, batches of 4,096

struct owned_fd {
  int fd;
  ~owned_fd()
  {
    if (fd >= 0)
      close(fd);
  }
};

dc_profile_key key_of(uint64_t epoch, uint64_t ino)
{
  dc_profile_key k;
  std::memset(&k, 0, sizeof(k));  // padding too: the kernel hashes the key's bytes
  k.epoch = epoch;
  k.tgid = 4242;
  k.layer = DC_PROF_POSIX;
  k.op = 17;
  k.file = {ino, 8, 0100644};
  return k;
}

// Counters as the programs leave them: intervals 0-5, one per file, counts that name their key.
int filled_map()
{
  LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
  int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "dc_profile_t", sizeof(dc_profile_key),
                          sizeof(dc_profile_counts), 1 << 16, &opts);
  for (uint64_t epoch = 0; fd >= 0 && epoch < 6; ++epoch)
    for (uint64_t ino = 1; ino <= files_per_interval; ++ino) {
      dc_profile_key k = key_of(epoch, ino);
      dc_profile_counts c{ino, epoch * 1000 + ino, ino * 4096, 0};
      EXPECT_EQ(bpf_map_update_elem(fd, &k, &c, BPF_NOEXIST), 0);
    }
  return fd;
}

size_t keys_in(int fd)
{
  size_t n = 0;
  for_each_map_key<dc_profile_key>(fd, [&](const dc_profile_key&) { ++n; });
  return n;
}

void expect_intervals(const std::vector<profile_sample>& samples, uint64_t first, uint64_t last)
{
  ASSERT_EQ(samples.size(), (last - first + 1) * files_per_interval);
  size_t i = 0;
  for (uint64_t epoch = first; epoch <= last; ++epoch)
    for (uint64_t ino = 1; ino <= files_per_interval; ++ino, ++i) {
      const profile_sample& s = samples[i];  // in key order: interval, then file
      ASSERT_EQ(s.key.epoch, epoch);
      ASSERT_EQ(s.key.file.ino, ino);
      ASSERT_EQ(s.counts.count, ino);
      ASSERT_EQ(s.counts.time_ns, epoch * 1000 + ino);
      ASSERT_EQ(s.counts.bytes, ino * 4096);
    }
}

class profile_reader_map : public testing::TestWithParam<profile_reader::reading> {};

TEST_P(profile_reader_map, EndedCountersAreReadOnceAndTheRestStay)
{
  if (geteuid() != 0)
    GTEST_SKIP() << "BPF maps need root";
  owned_fd map{filled_map()};
  ASSERT_GE(map.fd, 0) << std::strerror(errno);
  profile_reader reader(map.fd, interval_ns, nullptr, GetParam());
  // Decoded up to 4.5 s: intervals 0-2 ended a whole interval before, 3 and 4 did not.
  expect_intervals(reader.take(4'500'000'000, false, {}), 0, 2);
  EXPECT_EQ(keys_in(map.fd), 3 * files_per_interval) << "intervals 3-5 stay for a later take";
  EXPECT_TRUE(reader.take(4'900'000'000, false, {}).empty()) << "read already: never twice";
  expect_intervals(reader.take(0, true, {}), 3, 5);
  EXPECT_EQ(keys_in(map.fd), 0u);
  EXPECT_TRUE(reader.flush_status());
}

INSTANTIATE_TEST_SUITE_P(reading, profile_reader_map,
                         testing::Values(profile_reader::reading::batches,
                                         profile_reader::reading::key_by_key),
                         [](const auto& info) {
                           return info.param == profile_reader::reading::batches ? "batches" : "key_by_key";
                         });

}  // namespace
}  // namespace dc
