// The hot path's shortcuts give what the plain rules give: the line parser's On-Demand reader
// accepts and rejects the lines simdjson's DOM parser does (with the same values), and the layer
// breakdown's nested time is exact when children of several parents interleave.
#include <gtest/gtest.h>

#include <charconv>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "analyze/layers_section.h"
#include "analyze/line_integer.h"
#include "analyze/line_parser.h"

namespace dc::test {
namespace {

struct parsed_line {
  bool record = false;
  analyze::skip_reason reason = analyze::skip_reason::not_json;
  analyze::record r;
};

// Each line of `lines` parsed on its own, as a chunk's line.
std::vector<parsed_line> parse_lines(const std::vector<std::string>& lines, analyze::parsed_chunk& chunk)
{
  for (const std::string& l : lines) chunk.text += l + "\n";
  analyze::reserve_padding(chunk.text);
  analyze::line_parser parser;
  parser.parse_chunk(chunk);
  std::vector<parsed_line> out(lines.size());
  for (size_t i = 0; i < chunk.records.size(); ++i) {
    out[chunk.record_lines[i]].record = true;
    out[chunk.record_lines[i]].r = chunk.records[i];
  }
  for (const analyze::line_problem& p : chunk.problems) out[p.line].reason = p.reason;
  return out;
}

std::string event(const std::string& fields)
{
  return R"({"id":1,"name":"pread64","cat":"POSIX","pid":7,"tid":7,"ts":1000,"dur":2,"ph":"X")" + fields +
         "}";
}

TEST(AnalyzeFastPath, LinesTheDomParserRejectsAreRejected)
{
  analyze::parsed_chunk chunk;
  auto got = parse_lines(
      {
          event(R"(,"args":{"s":"a)"
                "\t"
                R"(b"})"),                                    // a raw control character
          event(R"(,"args":{"s":"a\qb"})"),                   // a bad escape
          event(R"(,"args":{"x":[1,tru]})"),                  // a bad atom inside an array
          event(R"(,"args":{"n":nul})"),                      // a bad atom
          event(R"(,"args":{"n":truex})"),                    // an atom not ended
          event(R"(,"args":{"ret":184467440737095516150})"),  // beyond 64 bits
          event(R"(,"args":{"ret":01})"),                     // a leading zero
          event(R"(,"args":{"ret":1.})"),                     // a number cut short
          event(R"(,"args":{"ret":-})"),                      // a sign alone
          event(R"(,"args":{"ret":-01})"),                    // a leading zero after a sign
          event(R"(,"args":{"ret":1234567x})"),               // a digit run not ended
          event(R"(,"args":{"ret":123456789012x})"),          // the same past eight digits
          event(R"(,"args":{"ret":12345678:})"),              // a byte above '9' in a word
          event(R"(,"args":{"ret":12345678/})"),              // a byte below '0' in a word
          event(R"(,"args":{"ret":--1})"),                    // two signs
          event("") + " trailing",                            // text after the object
          event("") + event(""),                              // two objects on a line
          event(R"(,"args":{"a":1,})"),                       // a dangling comma
          event(R"(,"k\u00ZZ":1)"),                           // a bad escape in a key
          "{\"na\x01me\":\"x\",\"ph\":\"X\"}",                // a control character in a key
      },
      chunk);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_FALSE(got[i].record) << "line " << i;
    EXPECT_EQ(got[i].reason, analyze::skip_reason::not_json) << "line " << i;
  }
}

TEST(AnalyzeFastPath, ValuesAreReadAsTheDomParserReadsThem)
{
  analyze::parsed_chunk chunk;
  auto got = parse_lines(
      {
          // Numbers as strings, a hex hash, a real number, the largest unsigned, booleans, null.
          R"({"id":"5","name":"pread64","cat":"POSIX","pid":"77","tid":77,"ts":"1000","dur":2.7,"ph":1,)"
          R"("args":{"hhash":"0x1f","fhash":"abc","ret":"4096","big":18446744073709551615,"t":true,"n":null}})",
          // Escaped name, layer and key; nested values (read by the DOM parser); duplicate keys.
          R"({"id":8,"n\u0061me":"pre\u0061d64","cat":"POS\"IX","pid":77,"tid":7,"ts":1001,"dur":2,"ph":"X",)"
          R"("ph":"C","args":{"ret":10,"o":{"k":[1,2]},"ret":11}})",
          // Blanks between the tokens; args that is not an object.
          R"({ "name" : "write" , "ph" : "X" , "ts" : 5 , "args" : 5 })",
          // A name that is a number; an empty key and an empty string.
          R"({"name":5,"ph":"X","args":{"":3,"e":"","level":2,"p_idx":-1}})",
          // Integers around the eight-digits-at-a-time path's edges (18 digits) and beyond it.
          R"({"name":"n","ph":"X","ts":123456789012345678,"dur":0,"id":-0,"args":{"a":-123456789012345678,)"
          R"("b":1234567890123456789,"c":-9223372036854775808,"d":12345678,"e":-1234567 ,"f":1e3,"g":-7.9,)"
          R"("h":99999999,"i":100000000,"j":7}})",
          // Reals beyond int64's range (the fuzzer's -1e300) saturate, as in the DOM reader.
          R"({"name":"n","ph":"X","args":{"a":-1e300,"b":1e300,"c":9.3e18,"d":-9.3e18,"e":-0.5}})",
      },
      chunk);
  ASSERT_TRUE(got[0].record);
  const analyze::record& a = got[0].r;
  EXPECT_EQ(a.id, 5);
  EXPECT_EQ(a.pid, 77u);
  EXPECT_EQ(a.ts_us, 1000);
  EXPECT_EQ(a.dur_us, 2);
  EXPECT_EQ(a.ph, analyze::phase::complete);
  EXPECT_EQ(a.hhash, 0x1fu);
  EXPECT_EQ(a.fhash, 0xabcu);
  EXPECT_EQ(a.arg("ret"), 4096);
  EXPECT_EQ(a.text("ret"), "4096");
  EXPECT_EQ(a.arg("big"), -1);
  EXPECT_EQ(a.arg("t"), 1);
  EXPECT_EQ(a.arg("n"), std::nullopt);

  ASSERT_TRUE(got[1].record);
  const analyze::record& b = got[1].r;
  EXPECT_EQ(b.name, "pread64");
  EXPECT_EQ(b.cat, "POS\"IX");
  EXPECT_EQ(b.ph, analyze::phase::counter);  // the last "ph" wins
  ASSERT_EQ(b.args.size(), 2u);
  EXPECT_EQ(b.args[0].value, 10);
  EXPECT_EQ(b.args[1].value, 11);

  ASSERT_TRUE(got[2].record);
  EXPECT_EQ(got[2].r.name, "write");
  EXPECT_EQ(got[2].r.ts_us, 5);
  EXPECT_TRUE(got[2].r.args.empty());

  ASSERT_TRUE(got[3].record);
  const analyze::record& d = got[3].r;
  EXPECT_EQ(d.name, "");
  EXPECT_EQ(d.level, 2);
  EXPECT_EQ(d.p_idx, -1);
  EXPECT_EQ(d.arg(""), 3);
  EXPECT_EQ(d.text("e"), "");

  ASSERT_TRUE(got[4].record);
  const analyze::record& e = got[4].r;
  EXPECT_EQ(e.ts_us, 123456789012345678);
  EXPECT_EQ(e.dur_us, 0);
  EXPECT_EQ(e.id, 0);
  EXPECT_EQ(e.arg("a"), -123456789012345678);
  EXPECT_EQ(e.arg("b"), 1234567890123456789);
  EXPECT_EQ(e.arg("c"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(e.arg("d"), 12345678);
  EXPECT_EQ(e.arg("e"), -1234567);
  EXPECT_EQ(e.arg("f"), 1000);
  EXPECT_EQ(e.arg("g"), -7);
  EXPECT_EQ(e.arg("h"), 99999999);
  EXPECT_EQ(e.arg("i"), 100000000);
  EXPECT_EQ(e.arg("j"), 7);

  ASSERT_TRUE(got[5].record);
  const analyze::record& f = got[5].r;
  EXPECT_EQ(f.arg("a"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.arg("b"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(f.arg("c"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(f.arg("d"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.arg("e"), 0);
}

TEST(AnalyzeFastPath, RealsOutsideInt64SaturateInBothReaders)
{
  EXPECT_EQ(analyze::real_as_int64(-1e300), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(analyze::real_as_int64(1e300), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(analyze::real_as_int64(9223372036854775808.0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(analyze::real_as_int64(-9223372036854775808.0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(analyze::real_as_int64(-7.9), -7);
  EXPECT_EQ(analyze::real_as_int64(std::numeric_limits<double>::quiet_NaN()), 0);
}

// A chunk's object lines are read as one document stream; lines the stream would read wrong
// (two objects, an object left open, a quote left open) make the run be read line by line.
TEST(AnalyzeFastPath, BadLinesInARunAreFoundLineByLine)
{
  auto good = [](int i) {
    return R"({"id":)" + std::to_string(i) + R"(,"name":"op)" + std::to_string(i) +
           R"(","cat":"POSIX","pid":1,"tid":1,"ts":5,"dur":1,"ph":"X","args":{"ret":)" + std::to_string(i) +
           "}}";
  };
  for (const std::string& bad : {std::string(R"({"id":1,"ph":"X"}{"id":2,"ph":"X"})"),
                                 std::string(R"({"name":"open","ph":"X","args":{"a":{"b":1}})"),
                                 std::string(R"({"name":"open,"ph":"X","s":"x"})"), std::string("{}}")}) {
    analyze::parsed_chunk chunk;
    std::vector<std::string> lines = {
        good(0), good(1), bad, good(3), R"({"name":"nested","ph":"X","args":{"o":[1,{"k":2}],"ret":9}})",
        good(5)};
    auto got = parse_lines(lines, chunk);
    for (int i : {0, 1, 3, 5}) {
      ASSERT_TRUE(got[i].record) << bad << " line " << i;
      EXPECT_EQ(got[i].r.name, "op" + std::to_string(i));
      EXPECT_EQ(got[i].r.arg("ret"), i);
    }
    EXPECT_FALSE(got[2].record) << bad;
    ASSERT_TRUE(got[4].record) << bad;
    EXPECT_EQ(got[4].r.arg("ret"), 9);
    ASSERT_EQ(chunk.problems.size(), 1u) << bad;
    EXPECT_EQ(chunk.problems[0].line, 2u);
    EXPECT_EQ(chunk.lines, 5u);  // counted lines, the first (the chunk's head) aside
  }
}

// Layer time: what the breakdown reports equals the nesting worked out from the lines.
TEST(AnalyzeFastPath, NestedTimeIsExactWhenChildrenInterleave)
{
  struct line {
    int64_t id, p_idx;
    uint64_t pid;
    int64_t dur;
  };
  // Children come before their parents; those of parents 10 and 20 interleave, 30's parent never
  // comes, 40 is its own parent's child of another process.
  std::vector<line> lines = {{1, 10, 5, 3},   {2, 20, 5, 7},  {3, 10, 5, 11},  {4, 10, 5, 13},
                             {5, 30, 5, 17},  {6, 20, 5, 19}, {20, -1, 5, 90}, {7, 10, 6, 23},
                             {10, -1, 5, 80}, {8, 10, 5, 29}, {10, -1, 6, 70}};
  analyze::layers_section s;
  std::map<std::pair<uint64_t, int64_t>, int64_t> waiting;
  uint64_t nested = 0, orphans = 0;
  for (const line& l : lines) {
    analyze::record r;
    r.ph = analyze::phase::complete;
    r.cat = "FS";
    r.name = "op";
    r.id = l.id;
    r.p_idx = l.p_idx;
    r.pid = l.pid;
    r.dur_us = l.dur;
    s.add(r);
    if (l.p_idx >= 0)
      waiting[{l.pid, l.p_idx}] += l.dur;
    if (auto w = waiting.find({l.pid, l.id}); w != waiting.end()) {
      nested += static_cast<uint64_t>(w->second);
      waiting.erase(w);
    }
  }
  for (const auto& [k, t] : waiting) orphans += static_cast<uint64_t>(t);
  s.end_file();
  EXPECT_EQ(s.layers["FS"].nested_us, nested);
  EXPECT_EQ(s.orphan_us, orphans);
  EXPECT_EQ(nested, 3u + 7 + 11 + 13 + 19 + 23);
  EXPECT_EQ(orphans, 17u + 29);
}

// The fast integer conversion takes exactly the JSON integers of 1 to 18 digits (with blanks
// after them), with std::from_chars's value: every length from 0 to 20 digits, with and without
// a sign, a leading zero, a bad byte at each position and trailing blanks.
TEST(AnalyzeFastPath, ShortIntegerIsExact)
{
  auto check = [](const std::string& token) {
    std::string padded = token + std::string(8, 'x');  // the line's padding: read, never used
    std::string_view t(padded.data(), token.size());
    std::string_view trimmed = t.substr(0, t.find_last_not_of(" \t\r\n") + 1);
    std::string_view digits = trimmed.substr(trimmed.starts_with('-'));
    bool json_integer = !digits.empty() && digits.size() <= 18 &&
                        digits.find_first_not_of("0123456789") == std::string_view::npos &&
                        (digits[0] != '0' || digits.size() == 1);
    int64_t got = 0, want = 0;
    bool ok = analyze::short_integer(t, got);
    EXPECT_EQ(ok, json_integer) << token;
    if (ok && json_integer) {
      std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), want);
      EXPECT_EQ(got, want) << token;
    }
  };
  for (size_t n = 0; n <= 20; ++n) {
    std::string number;
    for (size_t i = 0; i < n; ++i) number += static_cast<char>('1' + (i * 7 + n) % 9);
    for (std::string_view sign : {"", "-"}) {
      check(std::string(sign) + number);
      check(std::string(sign) + number + " \n");
      check(std::string(sign) + "0" + number);
      check(std::string(sign) + std::string(n, '9'));
      for (size_t i = 0; i < n; ++i)
        for (char bad : {'/', ':', '.', 'e', ' ', '-'}) {
          std::string b = number;
          b[i] = bad;
          check(std::string(sign) + b);
        }
    }
  }
  check("0");
  check("-0");
  check(" ");
  check("--1");
}

}  // namespace
}  // namespace dc::test
