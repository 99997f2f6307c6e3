// The one CSV quoting rule (RFC 4180) and the file writer every CSV table goes through.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "analyze/csv_file.h"
#include "unit/csv_reader.h"

namespace dc::analyze {
namespace {

std::string quoted(std::string_view field)
{
  std::string out;
  append_csv_field(out, field);
  return out;
}

TEST(csv_quoting, plain_fields_are_written_as_they_are)
{
  EXPECT_EQ(quoted("/tmp/data.bin"), "/tmp/data.bin");
  EXPECT_EQ(quoted(""), "");
  EXPECT_EQ(quoted("12345"), "12345");
  EXPECT_EQ(quoted("a b"), "a b");
}

TEST(csv_quoting, commas_quotes_and_line_breaks_are_quoted_with_quotes_doubled)
{
  EXPECT_EQ(quoted("a,b"), "\"a,b\"");
  EXPECT_EQ(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(quoted("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(quoted("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(quoted("\""), "\"\"\"\"");
  EXPECT_EQ(quoted(" lead"), "\" lead\"");
  EXPECT_EQ(quoted("trail "), "\"trail \"");
}

TEST(csv_quoting, a_row_reads_back_field_for_field)
{
  std::vector<std::string> fields = {"/d/a,b\"c.dat", "", "x\r\ny", "plain", "\"\"", ","};
  std::string text;
  append_csv_row(text, fields);
  EXPECT_TRUE(text.ends_with("\r\n"));
  test::csv_rows rows = test::parse_csv(text);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], fields);
}

struct csv_file_test : ::testing::Test {
  std::string dir;
  void SetUp() override
  {
    char tmpl[] = "/tmp/dc_csv_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(csv_file_test, header_then_rows_in_a_new_subdirectory)
{
  auto f = csv_file::create(dir + "/sub/t.csv", {"name", "count", "delta"});
  ASSERT_TRUE(f) << f.error().message;
  f->field("a,\"b\"");
  f->field(uint64_t{18446744073709551615ULL});
  f->field(int64_t{-5});
  f->end_row();
  f->field("plain");
  f->empty_field();
  f->field(int64_t{0});
  f->end_row();
  EXPECT_EQ(f->rows(), 2u);
  ASSERT_TRUE(f->close());
  test::csv_rows rows = test::read_csv(dir + "/sub/t.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "count", "delta"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"a,\"b\"", "18446744073709551615", "-5"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"plain", "", "0"}));
}

TEST_F(csv_file_test, a_file_that_cannot_be_created_is_an_error_naming_it)
{
  std::string blocker = dir + "/file";
  ASSERT_TRUE(csv_file::create(blocker, {"x"})->close());
  auto f = csv_file::create(blocker + "/under_a_file.csv", {"x"});
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find(blocker), std::string::npos) << f.error().message;
}

TEST_F(csv_file_test, a_full_device_is_reported_at_close)
{
  auto f = csv_file::create("/dev/full", {"x"});
  ASSERT_TRUE(f) << f.error().message;
  for (int i = 0; i < 10; ++i) {
    f->field("row");
    f->end_row();
  }
  auto closed = f->close();
  ASSERT_FALSE(closed);
  EXPECT_NE(closed.error().message.find("/dev/full"), std::string::npos) << closed.error().message;
}

}  // namespace
}  // namespace dc::analyze
