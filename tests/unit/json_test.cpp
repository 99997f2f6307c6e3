#include <gtest/gtest.h>

#include <charconv>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/json.h"
#include "core/short_text.h"

namespace dc {
namespace {

std::string as_json(std::string_view s)
{
  std::string out;
  append_json_string(out, s);
  return out;
}

TEST(JsonString, EscapesWhatRfc8259Requires)
{
  EXPECT_EQ(as_json("plain"), "\"plain\"");
  EXPECT_EQ(as_json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(as_json("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
  EXPECT_EQ(as_json(std::string_view("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(as_json(std::string_view("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(JsonString, KeepsValidUtf8AndReplacesInvalidBytes)
{
  EXPECT_EQ(as_json("h\xc3\xa9llo \xe2\x82\xac"), "\"h\xc3\xa9llo \xe2\x82\xac\"");
  EXPECT_EQ(as_json("bad\xff"), "\"bad\\ufffd\"");
  EXPECT_EQ(as_json("\xc0\xaf"), "\"\\ufffd\\ufffd\"");  // overlong '/'
  EXPECT_EQ(as_json("\xe2\x82"), "\"\\ufffd\\ufffd\"");  // truncated sequence
}

TEST(JsonString, EveryByteValueRoundTripsThroughAParser)
{
  std::string all;
  for (int c = 0; c < 128; ++c) all.push_back(static_cast<char>(c));
  std::string line = "{\"k\":" + as_json(all) + "}";
  EXPECT_EQ(nlohmann::json::parse(line)["k"].get<std::string>(), all);
}

// The escapes one byte at a time, as RFC 8259 and the writer want them: what the word-at-a-time
// check of put_json_string must agree with. Bytes >= 0x80 are left to the UTF-8 tests above.
std::string escaped_byte_by_byte(std::string_view s)
{
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += {'\\', static_cast<char>(c)};
    else if (c >= 0x20)
      out += static_cast<char>(c);
    else if (c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f')
      out += {'\\', c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : 'f'};
    else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\u%04x", c);
      out += hex;
    }
  }
  return out + "\"";
}

// Every ASCII byte at every place of every length up to three words: a byte that needs an
// escape is seen wherever it sits (first word, a middle one, the overlapping last one, the two
// halves of a short text).
TEST(JsonString, AByteThatNeedsAnEscapeIsSeenAtEveryPlace)
{
  for (size_t n = 1; n <= 24; ++n)
    for (size_t at = 0; at < n; ++at)
      for (int c = 0; c < 128; ++c) {
        std::string s(n, 'a');
        s[at] = static_cast<char>(c);
        ASSERT_EQ(as_json(s), escaped_byte_by_byte(s)) << "length " << n << ", byte " << c << " at " << at;
      }
  EXPECT_EQ(as_json(""), "\"\"");
}

TEST(JsonFields, AppendsNumbersExactly)
{
  std::string out = "{";
  append_field(out, "a", uint64_t{18446744073709551615ull}, true);
  append_field(out, "b", int64_t{-9223372036854775807ll - 1});
  append_string_field(out, "c", "x");
  out += "}";
  EXPECT_EQ(out, "{\"a\":18446744073709551615,\"b\":-9223372036854775808,\"c\":\"x\"}");
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["a"].get<uint64_t>(), 18446744073709551615ull);
}

// put_int against std::to_chars (the standard's exact decimal) at every digit count's edges,
// both ends of each type and a spread of values between.
template <class Int>
void expect_as_to_chars(Int v)
{
  char ours[json_int_bound], theirs[json_int_bound];
  char* end = put_int(ours, v);
  auto [their_end, ec] = std::to_chars(theirs, theirs + sizeof(theirs), v);
  ASSERT_EQ(std::string_view(ours, static_cast<size_t>(end - ours)),
            std::string_view(theirs, static_cast<size_t>(their_end - theirs)));
}

TEST(JsonFields, PutIntWritesWhatToCharsWrites)
{
  uint64_t power = 1;
  for (int digits = 1; digits <= 20; ++digits, power *= 10)
    for (uint64_t v : {power - 1, power, power + 1, 2 * power - 1, 9 * power + power - 1}) {
      expect_as_to_chars(v);
      expect_as_to_chars(static_cast<int64_t>(v));
      expect_as_to_chars(-static_cast<int64_t>(v / 2));
      expect_as_to_chars(static_cast<uint32_t>(v));
      expect_as_to_chars(static_cast<int32_t>(v));
    }
  expect_as_to_chars(std::numeric_limits<uint64_t>::max());
  expect_as_to_chars(std::numeric_limits<int64_t>::min());
  expect_as_to_chars(std::numeric_limits<int64_t>::max());
  expect_as_to_chars(std::numeric_limits<int32_t>::min());
  expect_as_to_chars(std::numeric_limits<uint8_t>::max());
  // Every value below 10^6, and a stride through the 8-digit parts (each lane of digits_8).
  for (uint64_t v = 0; v < 1000000; ++v) expect_as_to_chars(v);
  for (uint64_t v = 0; v < 100000000; v += 997) {
    expect_as_to_chars(v);
    expect_as_to_chars(v + 100000000 * v);
  }
  uint64_t x = 88172645463325252ull;  // xorshift: values of every size
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    expect_as_to_chars(x >> (i % 64));
    expect_as_to_chars(static_cast<int64_t>(x) >> (i % 64));
  }
}

// Every length, short ones (copied inline, in overlapping words) and long ones alike, and
// nothing written past the end.
// A kept number writes the value it is given, whether it is the one kept or another.
TEST(JsonFields, AKeptNumberWritesEachValueItIsGiven)
{
  kept_number kept;
  for (uint64_t v :
       {uint64_t{0}, uint64_t{0}, uint64_t{7}, uint64_t{1894684099120697}, uint64_t{1894684099120697},
        uint64_t{12}, std::numeric_limits<uint64_t>::max(), uint64_t{0}}) {
    char buf[32], want[32];
    std::string_view got(buf, static_cast<size_t>(kept.put(buf, v) - buf));
    auto [end, ec] = std::to_chars(want, want + sizeof(want), v);
    EXPECT_EQ(got, std::string_view(want, static_cast<size_t>(end - want)));
  }
}

// Kept high digits write every value exactly: below eight digits, at the 10^8 edges, a high
// part that changes and one that repeats, and the largest value.
TEST(JsonFields, KeptHighDigitsWriteEachValueItIsGiven)
{
  kept_high_digits kept;
  for (uint64_t v :
       {uint64_t{0}, uint64_t{99999999}, uint64_t{100000000}, uint64_t{100000001}, uint64_t{1796113810458788},
        uint64_t{1796113810458802}, uint64_t{1796113900000000}, uint64_t{5}, uint64_t{12319039946762},
        std::numeric_limits<uint64_t>::max(), uint64_t{200000000}}) {
    char buf[32], want[32];
    std::string_view got(buf, static_cast<size_t>(kept.put(buf, v) - buf));
    auto [end, ec] = std::to_chars(want, want + sizeof(want), v);
    EXPECT_EQ(got, std::string_view(want, static_cast<size_t>(end - want)));
  }
}

TEST(JsonFields, PutRawCopiesEveryLengthExactly)
{
  std::string src;
  for (int i = 0; i < 48; ++i) src += static_cast<char>('a' + i % 26);
  for (size_t n = 0; n <= 40; ++n) {
    std::string out(48, '#');
    char* end = put_raw(out.data() + 1, std::string_view(src).substr(n % 3, n));
    ASSERT_EQ(end, out.data() + 1 + n);
    EXPECT_EQ(out.substr(1, n), src.substr(n % 3, n)) << n;
    EXPECT_EQ(out[0], '#');
    EXPECT_EQ(out.substr(1 + n), std::string(47 - n, '#')) << n;
  }
}

// Equal texts of every length are the same; a difference at any one byte, or in length, is not.
TEST(ShortText, SameTextSeesEveryByteOfEveryLength)
{
  std::string a;
  for (int i = 0; i < 40; ++i) a += static_cast<char>('a' + i % 26);
  for (size_t n = 0; n <= a.size(); ++n) {
    std::string x = a.substr(0, n), y = a.substr(0, n);
    EXPECT_TRUE(same_text(x, y)) << n;
    if (n) {
      EXPECT_FALSE(same_text(x, std::string_view(y).substr(0, n - 1))) << n;
    }
    for (size_t k = 0; k < n; ++k) {
      std::string z = y;
      z[k] = static_cast<char>(z[k] ^ 0x20);
      EXPECT_FALSE(same_text(x, z)) << n << " " << k;
    }
  }
}

}  // namespace
}  // namespace dc
