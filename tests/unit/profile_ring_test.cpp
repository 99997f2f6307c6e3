// Profile mode's counts sent through the ring (bpf/profile.bpf.h dc_profile_send): profile_reader
// reads an interval's only once the threads' flush of it has been decoded, each count once, summed
// with the other counts of its key. No map here (fd -1: the map part reads nothing), so no root.
#include <gtest/gtest.h>

#include <vector>

#include "collect/profile_reader.h"
#include "core/clock.h"

namespace dc {
namespace {

constexpr uint64_t interval_ns = 1'000'000'000;

profile_sample sample(uint64_t epoch, uint64_t ino, uint64_t count)
{
  profile_sample s{};
  s.key.epoch = epoch;
  s.key.file = {.ino = ino, .dev = 34, .mode = 0100644};
  s.key.tgid = 99;
  s.key.layer = DC_PROF_POSIX;
  s.key.op = 0;
  s.counts = {count, count * 10, count * 4096, 0};
  return s;
}

TEST(profile_ring, AnIntervalsCountsAreReadOnceItsThreadsFlushWasDecoded)
{
  std::vector<uint64_t> asked;
  profile_reader reader(
      -1, interval_ns,
      [&](uint64_t below) {
        asked.push_back(below);
        return result<>{};
      },
      profile_reader::reading::key_by_key);
  // Decoded up to the middle of interval e, an interval the flushes below finish before.
  uint64_t e = monotonic_now_ns() / interval_ns + 10, half = interval_ns / 2;
  auto first = reader.take(e * interval_ns + half, false, {sample(e - 2, 1, 1), sample(e - 1, 2, 1)});
  EXPECT_TRUE(first.empty()) << "interval e-2 ended, but what its threads' flush sent is not decoded yet";
  EXPECT_EQ(asked, std::vector<uint64_t>{e - 1});
  EXPECT_FALSE(reader.read_through());

  // One interval later the flush of e-2 was decoded (its count of file 1 arrived with it).
  auto second = reader.take((e + 1) * interval_ns + half, false, {sample(e - 2, 1, 3)});
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].key.epoch, e - 2);
  EXPECT_EQ(second[0].counts.count, 4u) << "both counts of one key, summed";
  EXPECT_EQ(second[0].counts.bytes, 4u * 4096);
  EXPECT_EQ(asked, (std::vector<uint64_t>{e - 1, e}));
  EXPECT_EQ(reader.read_through(), e - 2);

  // The flush of e-1, asked by the take before, finished before this decoding too.
  auto third = reader.take((e + 1) * interval_ns + half, false, {});
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].key.epoch, e - 1);
  EXPECT_TRUE(reader.take((e + 1) * interval_ns + half, false, {}).empty()) << "read already: never twice";
  auto rest = reader.take(0, true, {sample(e + 1, 3, 5)});
  ASSERT_EQ(rest.size(), 1u) << "at the end, every count left";
  EXPECT_EQ(rest[0].key.epoch, e + 1);
  EXPECT_EQ(rest[0].counts.count, 5u);
  EXPECT_TRUE(reader.flush_status());
}

TEST(profile_ring, WithoutAFlushAnIntervalIsReadOnceItEndedAWholeIntervalBeforeTheDecoding)
{
  profile_reader reader(-1, interval_ns, nullptr, profile_reader::reading::key_by_key);
  auto out = reader.take(5 * interval_ns + 1, false, {sample(3, 1, 2), sample(4, 1, 1)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key.epoch, 3u);
  EXPECT_EQ(reader.read_through(), 3u);
}

}  // namespace
}  // namespace dc
