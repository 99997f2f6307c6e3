// The table of file identities to paths stays bounded however many files a workload creates,
// and keeps what is still in use (core/names.h).
#include <gtest/gtest.h>

#include "core/names.h"

namespace dc {
namespace {

TEST(FileTable, KeepsTwoGenerationsAndWhatIsStillLookedUp)
{
  file_table files(4);
  files.name({1, 100}, 1000);  // looked up all along: never forgotten
  for (uint64_t ino = 1; ino <= 20; ++ino) {
    files.name({1, ino}, ino);
    EXPECT_EQ(files.find({1, 100}), 1000u) << "after " << ino << " files";
    EXPECT_LE(files.size(), 8u);
  }
  EXPECT_EQ(files.find({1, 20}), 20u);
  EXPECT_EQ(files.find({1, 19}), 19u);
  EXPECT_FALSE(files.find({1, 1}).has_value());   // created and never seen again: forgotten
  EXPECT_FALSE(files.find({2, 20}).has_value());  // same inode, another device
}

// The last file found is answered without a lookup; it is still kept as in use, across the
// generations that pass while a storm reads only it.
TEST(FileTable, AFileFoundAgainAndAgainIsKeptAcrossGenerations)
{
  file_table files(4);
  files.name({1, 100}, 1000);
  for (uint64_t ino = 1; ino <= 20; ++ino) {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(files.find({1, 100}), 1000u) << "after " << ino << " files";
    files.name({1, ino}, ino);
    EXPECT_LE(files.size(), 8u);
  }
  EXPECT_EQ(files.find({1, 100}), 1000u);
  EXPECT_EQ(files.find({1, 20}), 20u);
  EXPECT_FALSE(files.find({1, 1}).has_value());
  EXPECT_FALSE(files.find({1, 100 + (uint64_t{1} << 32)}).has_value());  // another file: not the last one
}

// Profile mode: files are forgotten only once the counters of the intervals they were named in
// have been read (and the interval after), however many files were named meanwhile.
TEST(FileTable, HeldForCountersAFileIsKeptUntilItsIntervalsCountersAreRead)
{
  file_table files(4);
  files.hold_for_counters();
  for (uint64_t ino = 1; ino <= 20; ++ino) files.name({1, ino}, ino);
  EXPECT_EQ(files.size(), 20u) << "named in intervals whose counters are not read yet";
  files.counters_read(0, 5);  // named by records of intervals up to 5
  for (uint64_t ino = 21; ino <= 30; ++ino) files.name({1, ino}, ino);
  files.counters_read(5, 7);  // a call that began in 5 may end in 6: its counter is still unread
  EXPECT_EQ(files.size(), 30u);
  EXPECT_EQ(files.find({1, 20}), 20u);
  files.counters_read(6, 8);
  EXPECT_FALSE(files.find({1, 1}).has_value()) << "interval 6's counters were read: forgotten";
  EXPECT_EQ(files.find({1, 20}), 20u) << "looked up after interval 5: still in use, kept";
  EXPECT_EQ(files.find({1, 30}), 30u);
  EXPECT_EQ(files.size(), 11u);
}

TEST(FileTable, ANameGivenAgainReplacesTheOld)
{
  file_table files(4);
  files.name({1, 7}, 70);
  EXPECT_EQ(files.find({1, 7}), 70u);
  files.name({1, 7}, 71);  // the inode reused by a new file
  EXPECT_EQ(files.find({1, 7}), 71u);
  EXPECT_EQ(files.size(), 1u);
}

}  // namespace
}  // namespace dc
