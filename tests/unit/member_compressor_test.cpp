// The trace's gzip members as igzip makes them, read back by zlib (an independent inflater):
// every level gives a whole standard member with the text, text that does not compress grows
// the output as needed, and a level igzip does not have is refused.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

#include "sink/member_compressor.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

std::string lines(int n)
{
  std::string text;
  for (int i = 0; i < n; ++i)
    text += R"({"id":)" + std::to_string(i) + R"(,"name":"pread64","cat":"POSIX","ts":)" +
            std::to_string(1000 + 3 * i) + "}\n";
  return text;
}

void expect_member(std::string_view text, const std::string& out, size_t n)
{
  ASSERT_GT(n, 18u);
  ASSERT_LE(n, out.size());
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(out[1]), 0x8b);
  auto got = test::inflate_member({out.data(), n});
  EXPECT_EQ(got.status, Z_STREAM_END);  // zlib checked the CRC-32 and the size
  EXPECT_EQ(got.used, n);
  EXPECT_EQ(got.text, text);
}

TEST(MemberCompressor, EveryLevelMakesOneWholeStandardMember)
{
  std::string text = lines(20000);
  for (int level = member_compressor::lowest_level; level <= member_compressor::highest_level; ++level) {
    SCOPED_TRACE(level);
    auto c = member_compressor::create(level);
    ASSERT_TRUE(c);
    std::string out;
    size_t n = c->compress(text, out);
    expect_member(text, out, n);
    EXPECT_LT(n, text.size() / 4);
    // Used again with the larger buffer of the first: the member is its first n bytes.
    std::string small = lines(3);
    size_t m = c->compress(small, out);
    expect_member(small, out, m);
    size_t e = c->compress("", out);
    expect_member("", out, e);
  }
}

TEST(MemberCompressor, TextThatDoesNotCompressIsWholeToo)
{
  std::mt19937_64 random(42);
  std::string text(3 << 20, '\0');
  for (char& ch : text) ch = static_cast<char>(random());
  auto c = member_compressor::create(1);
  ASSERT_TRUE(c);
  std::string out(10, '\0');  // far too small: it grows
  size_t n = c->compress(text, out);
  expect_member(text, out, n);
}

TEST(MemberCompressor, ALevelIgzipDoesNotHaveIsRefused)
{
  for (int level : {-1, 4, 9}) {
    auto c = member_compressor::create(level);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "gzip level " + std::to_string(level) + " is not one of 0-3");
  }
}

}  // namespace
}  // namespace dc
