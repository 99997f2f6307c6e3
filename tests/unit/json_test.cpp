#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/json.h"

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

}  // namespace
}  // namespace dc
