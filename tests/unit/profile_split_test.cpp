// Profile mode's folded counters (bpf/counters.h folded_fs): a POSIX counter whose calls each
// ended a buffered FS operation becomes that counter and the FS operation's, each summed with the
// counter of its key that was counted apart (collect/profile_reader.h split_folded).
#include <gtest/gtest.h>

#include "collect/profile_reader.h"

namespace dc {
namespace {

dc_profile_key key_of(uint32_t layer, uint32_t op, uint32_t folded, uint64_t epoch = 7)
{
  dc_profile_key k{};
  k.epoch = epoch;
  k.file = {.ino = 12, .dev = 34, .mode = 0100644};
  k.tgid = 99;
  k.layer = layer;
  k.op = op;
  k.folded_fs = folded;
  return k;
}

TEST(profile_split, AFoldedCounterIsTheCallsAndItsFsOperationsBothWhole)
{
  auto out = split_folded({{key_of(DC_PROF_POSIX, 17, DC_FS_BUFFERED_READ), {5, 5000, 20480, 5}}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key.layer, DC_PROF_POSIX);
  EXPECT_EQ(out[0].key.op, 17u);
  EXPECT_EQ(out[0].key.folded_fs, 0u);
  EXPECT_EQ(out[0].counts.count, 5u);
  EXPECT_EQ(out[0].counts.pages, 5u);
  EXPECT_EQ(out[1].key.layer, DC_PROF_FS);
  EXPECT_EQ(out[1].key.op, static_cast<uint32_t>(DC_FS_BUFFERED_READ));
  EXPECT_EQ(out[1].key.folded_fs, 0u);
  EXPECT_EQ(out[1].key.file.ino, 12u);
  EXPECT_EQ(out[1].counts.count, 5u);
  EXPECT_EQ(out[1].counts.time_ns, 5000u);
  EXPECT_EQ(out[1].counts.bytes, 20480u);
  EXPECT_EQ(out[1].counts.pages, 0u) << "the page cache's pages are the call's alone";
}

TEST(profile_split, CountersOfOneKeyCountedApartAreSummed)
{
  auto out = split_folded({
      {key_of(DC_PROF_POSIX, 17, DC_FS_BUFFERED_READ), {5, 5000, 20480, 5}},
      {key_of(DC_PROF_POSIX, 17, 0), {2, 300, 0, 0}},                // calls whose FS part was apart
      {key_of(DC_PROF_FS, DC_FS_BUFFERED_READ, 0), {1, 90, 10, 0}},  // an FS operation counted apart
      {key_of(DC_PROF_POSIX, 17, 0, 8), {1, 1, 1, 1}},               // the next interval
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key.epoch, 7u);
  EXPECT_EQ(out[0].counts.count, 7u);
  EXPECT_EQ(out[0].counts.time_ns, 5300u);
  EXPECT_EQ(out[1].key.layer, DC_PROF_FS);
  EXPECT_EQ(out[1].counts.count, 6u);
  EXPECT_EQ(out[1].counts.bytes, 20490u);
  EXPECT_EQ(out[2].key.epoch, 8u);
  EXPECT_EQ(out[2].counts.count, 1u);
}

}  // namespace
}  // namespace dc
