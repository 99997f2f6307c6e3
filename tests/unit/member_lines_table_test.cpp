// sink/member_lines_table: the table the line index reads a member's rows from shows the
// source's lines as they are when a statement runs: offsets counting from the member's first
// byte, each line's length, nothing for a member without lines.
#include "sink/member_lines_table.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace dc {
namespace {

struct member_lines_fixture : ::testing::Test {
  sqlite3* db = nullptr;
  member_lines_source source;
  void SetUp() override
  {
    ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    ASSERT_EQ(register_member_lines(db, &source), SQLITE_OK);
  }
  void TearDown() override { sqlite3_close(db); }
  std::vector<std::pair<int64_t, int64_t>> rows()
  {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT offset, length FROM member_lines", -1, &s, nullptr), SQLITE_OK);
    std::vector<std::pair<int64_t, int64_t>> got;
    while (sqlite3_step(s) == SQLITE_ROW)
      got.emplace_back(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
    sqlite3_finalize(s);
    return got;
  }
};

TEST_F(member_lines_fixture, EachLineIsARowAtItsOffsetInTheTrace)
{
  std::vector<uint32_t> lengths{10, 1, 300, 7};
  source = {lengths.data(), lengths.size(), 5000};
  EXPECT_EQ(rows(),
            (std::vector<std::pair<int64_t, int64_t>>{{5000, 10}, {5010, 1}, {5011, 300}, {5311, 7}}));
  // The next member: the same table shows it, from its own first byte.
  std::vector<uint32_t> next{2, 3};
  source = {next.data(), next.size(), 5318};
  EXPECT_EQ(rows(), (std::vector<std::pair<int64_t, int64_t>>{{5318, 2}, {5320, 3}}));
}

TEST_F(member_lines_fixture, AMemberWithoutLinesHasNoRows)
{
  source = {nullptr, 0, 123};
  EXPECT_TRUE(rows().empty());
}

TEST_F(member_lines_fixture, ItIsNotATableOfTheFile)
{
  // Eponymous and read-only: the index's file gets no table for it, and it cannot be written.
  EXPECT_NE(sqlite3_exec(db, "INSERT INTO member_lines VALUES(1, 2)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(s, 0), 0);
  sqlite3_finalize(s);
}

}  // namespace
}  // namespace dc
