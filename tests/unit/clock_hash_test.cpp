#include <gtest/gtest.h>

#include <ctime>

#include "core/clock.h"
#include "core/hash.h"

namespace dc {
namespace {

TEST(Clock, OffsetMatchesTheSystemClocks)
{
  clock_offset off = measure_clock_offset();
  timespec mono{}, real{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  uint64_t mono_ns = static_cast<uint64_t>(mono.tv_sec) * 1'000'000'000 + mono.tv_nsec;
  uint64_t real_us = static_cast<uint64_t>(real.tv_sec) * 1'000'000 + real.tv_nsec / 1000;
  uint64_t converted = to_epoch_us(mono_ns, off);
  EXPECT_LE(converted, real_us + 1);
  EXPECT_GE(converted + 1000, real_us);  // within a millisecond
}

TEST(Clock, SpansFloorBothEndsSoNestingSurvives)
{
  clock_offset off{1'000'000'000'000'000};
  // parent [1000.9 us, 1010.2 us), child [1001.5 us, 1010.1 us)
  us_span parent = to_span(1'000'900, 9'300, off);
  us_span child = to_span(1'001'500, 8'600, off);
  EXPECT_EQ(parent.ts_us, 1'000'000'000'000u + 1000);
  EXPECT_EQ(parent.dur_us, 10u);
  EXPECT_GE(child.ts_us, parent.ts_us);
  EXPECT_LE(child.ts_us + child.dur_us, parent.ts_us + parent.dur_us);
  EXPECT_EQ(to_span(5'999, 1, off).dur_us, 1u);  // crosses a microsecond boundary
  EXPECT_EQ(to_span(5'000, 999, off).dur_us, 0u);
}

TEST(Hash, IsStableAndFitsInADouble)
{
  static_assert(string_hash("") == (0xcbf29ce484222325ULL & ((1ULL << 53) - 1)));
  // The published FNV-1a 64 test vectors, truncated to 53 bits: a hash written by any build
  // names the same string.
  EXPECT_EQ(string_hash("a"), 0xaf63dc4c8601ec8cULL & ((1ULL << 53) - 1));
  EXPECT_EQ(string_hash("foobar"), 0x85944171f73967e8ULL & ((1ULL << 53) - 1));
  EXPECT_NE(string_hash("/tmp/a"), string_hash("/tmp/b"));
  for (const char* s : {"a", "/very/long/path/name/that/goes/on", "vm"})
    EXPECT_LT(string_hash(s), 1ULL << 53);
}

}  // namespace
}  // namespace dc
