// The trace reader: gzip members (many, cut, with a header lookalike inside), lines cut between
// members, bad lines with their messages and counts, DFTracer's line forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "unit/analyze_test_util.h"

namespace dc::test {
namespace {

// n numbered read spans: name "r<i>", ret i, ts 1000 + i.
std::string numbered_lines(int from, int to)
{
  std::string s;
  for (int i = from; i < to; ++i) s += span_line("r" + std::to_string(i), "POSIX", 10, 1000 + i, 2, i);
  return s;
}

std::string read_bytes(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> expected_names(int n)
{
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("r" + std::to_string(i));
  return v;
}

TEST(AnalyzeReader, ManyMembersComeInLineOrderWhateverTheThreads)
{
  temp_dir d;
  std::vector<std::string> members = {"[\n"};
  for (int m = 0; m < 40; ++m) members.push_back(numbered_lines(m * 250, (m + 1) * 250));
  members.push_back("]\n");
  write_members(d.file("t.pfw.gz"), members);
  for (unsigned threads : {1u, 2u, 7u}) {
    read_result r = read_all({d.file("t.pfw.gz")}, threads);
    EXPECT_EQ(r.names, expected_names(10000)) << threads << " threads";
    EXPECT_EQ(r.all.inputs.lines, 10000u);
    EXPECT_EQ(r.all.inputs.problems_total, 0u);
    EXPECT_EQ(r.all.run.events, 10000u);
    EXPECT_EQ(r.all.layers.layers["POSIX"].count, 10000u);
  }
}

TEST(AnalyzeReader, LinesCutBetweenMembersAreJoined)
{
  temp_dir d;
  std::string text = "[\n" + numbered_lines(0, 300) + "]";
  std::vector<std::string> members;
  for (size_t at = 0; at < text.size(); at += 997) members.push_back(text.substr(at, 997));
  write_members(d.file("cut.pfw.gz"), members);
  read_result r = read_all({d.file("cut.pfw.gz")}, 3);
  EXPECT_EQ(r.names, expected_names(300));
  EXPECT_EQ(r.all.inputs.lines, 300u);
  EXPECT_EQ(r.all.inputs.problems_total, 0u);
}

TEST(AnalyzeReader, AGzipHeaderLookalikeInsideAMemberIsNotABoundary)
{
  temp_dir d;
  // Level 0 stores the text as is, so these bytes appear in the compressed file: a candidate
  // member header inside a member.
  std::string fake = std::string("\x1f\x8b\x08\x00", 4) + "garbage\n";
  write_members(d.file("fake.pfw.gz"),
                {"[\n" + numbered_lines(0, 5), fake + numbered_lines(5, 10), numbered_lines(10, 15)}, 0);
  read_result r = read_all({d.file("fake.pfw.gz")}, 2);
  EXPECT_EQ(r.names, expected_names(15));
  EXPECT_EQ(r.all.inputs.skipped[static_cast<size_t>(analyze::skip_reason::not_json)], 1u);
  ASSERT_EQ(r.all.inputs.problems.size(), 1u);
  EXPECT_EQ(r.all.inputs.problems[0], d.file("fake.pfw.gz") + ":7: not JSON (skipped)");
}

TEST(AnalyzeReader, ATruncatedMemberIsReadUpToItsLastCompleteLine)
{
  temp_dir d;
  std::string path = d.file("killed.pfw.gz");
  std::string m3 = numbered_lines(20, 2000);
  write_members(path, {"[\n" + numbered_lines(0, 10), numbered_lines(10, 20), m3});
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 2000);  // the tracer was killed while writing m3
  read_result r = read_all({path}, 2);
  ASSERT_GE(r.names.size(), 20u);
  EXPECT_LT(r.names.size(), 2000u);
  EXPECT_EQ(r.names, expected_names(static_cast<int>(r.names.size())));  // a prefix, in order
  EXPECT_EQ(r.all.inputs.skipped[static_cast<size_t>(analyze::skip_reason::truncated)], 1u);
  ASSERT_EQ(r.all.inputs.problems.size(), 1u);
  const std::string& p = r.all.inputs.problems[0];
  EXPECT_TRUE(p.starts_with(path + ": truncated gzip member at byte ")) << p;
  // Line 1 is "[": the events are lines 2 .. names + 1, the next line was cut.
  EXPECT_TRUE(p.ends_with(": read up to line " + std::to_string(r.names.size() + 1) +
                          " (its last complete line; line " + std::to_string(r.names.size() + 2) +
                          " was cut short)"))
      << p;
}

TEST(AnalyzeReader, ACorruptMemberIsReportedAndTheNextMembersAreRead)
{
  temp_dir d;
  std::string path = d.file("corrupt.pfw.gz");
  write_members(d.file("a.gz"), {numbered_lines(0, 10)});
  write_members(d.file("b.gz"), {numbered_lines(10, 400)});
  write_members(d.file("c.gz"), {numbered_lines(400, 410)});
  std::string a = read_bytes(d.file("a.gz")), b = read_bytes(d.file("b.gz")), c = read_bytes(d.file("c.gz"));
  for (size_t i = b.size() / 2; i < b.size() / 2 + 64; ++i) b[i] = static_cast<char>(b[i] ^ 0x5a);
  write_text(path, a + b + c + "trailing junk");
  read_result r = read_all({path}, 2);
  // Members 1 and 3 whole, in order; none of member 2: damaged deflate data decodes into
  // plausible copies of earlier lines, so its text is not read at all.
  std::vector<std::string> want = expected_names(10);
  for (int i = 400; i < 410; ++i) want.push_back("r" + std::to_string(i));
  EXPECT_EQ(r.names, want);
  auto has = [&](const std::string& prefix) {
    return std::any_of(r.all.inputs.problems.begin(), r.all.inputs.problems.end(),
                       [&](const std::string& p) { return p.starts_with(prefix); });
  };
  // Its size is known once the next member is found; what it decoded to before the damage is a
  // lower bound of the lines lost.
  EXPECT_TRUE(has(path + ": corrupt gzip member at byte " + std::to_string(a.size()) +
                  " (skipped: " + std::to_string(b.size()) + " bytes, which decode to at least "));
  EXPECT_EQ(r.all.inputs.corrupt_members, 1u);
  EXPECT_GT(r.all.inputs.corrupt_lines_at_least, 0u);
  EXPECT_LT(r.all.inputs.corrupt_lines_at_least, 390u);
  EXPECT_EQ(r.all.inputs.unreadable_bytes, b.size() + 13);  // the member and the trailing junk
  EXPECT_EQ(r.all.inputs.records(), 20u);
  EXPECT_TRUE(has(path + ": 13 bytes at byte " + std::to_string(a.size() + b.size() + c.size()) +
                  " are not gzip (skipped)"));
}

TEST(AnalyzeReader, BadLinesAreNamedCountedAndSkipped)
{
  temp_dir d;
  std::string path = d.file("bad.pfw");
  write_text(path, "[\n" + span_line("read", "POSIX", 1, 10, 1, 5) +
                       "this is not json\n"
                       "{\"name\":\"x\",\"cat\":\"POSIX\",\"ph\":\"Q\",\"ts\":1}\n"
                       "{\"name\":\"y\",\"cat\":\"POSIX\",\"ph\":\"X\",\"ts\":-5,\"dur\":1}\n"
                       "{\"name\":\"y\",\"cat\":\"POSIX\",\"ph\":\"X\",\"ts\":5,\"dur\":-1}\n"
                       "42\n"
                       "{\"name\":\"z\",\"cat\":\"POSIX\",\"ts\":5}\n"
                       "{\"name\":\"cut\",\"cat\":\"POS\n" +
                       span_line("write", "POSIX", 1, 20, 1, 6) + "]\n");
  read_result r = read_all({path}, 1);
  EXPECT_EQ(r.names, (std::vector<std::string>{"read", "write"}));
  using analyze::skip_reason;
  auto skipped = [&](skip_reason s) { return r.all.inputs.skipped[static_cast<size_t>(s)]; };
  EXPECT_EQ(skipped(skip_reason::not_json), 2u);
  EXPECT_EQ(skipped(skip_reason::unknown_ph), 1u);
  EXPECT_EQ(skipped(skip_reason::negative_ts), 1u);
  EXPECT_EQ(skipped(skip_reason::negative_dur), 1u);
  EXPECT_EQ(skipped(skip_reason::not_an_event), 2u);
  EXPECT_EQ(r.all.inputs.lines, 9u);
  EXPECT_EQ(r.all.inputs.problems,
            (std::vector<std::string>{
                path + ":3: not JSON (skipped)", path + ":4: unknown ph \"Q\" (skipped)",
                path + ":5: negative ts (skipped)", path + ":6: negative dur (skipped)",
                path + ":7: not an event object (skipped)",
                path + ":8: not an event object: no \"ph\" (skipped)", path + ":9: not JSON (skipped)"}));
  nlohmann::json report = r.all.report(0);
  EXPECT_EQ(
      report["inputs"]["skipped"],
      (nlohmann::json{
          {"not_json", 2}, {"unknown_ph", 1}, {"negative_ts", 1}, {"negative_dur", 1}, {"not_an_event", 2}}));
}

TEST(AnalyzeReader, MissingFilesAndEmptyDirectoriesAreProblemsNotCrashes)
{
  temp_dir d;
  std::filesystem::create_directory(d.file("empty"));
  read_result r = read_all({d.file("none.pfw.gz"), d.file("empty"), d.file("*.nothing")});
  EXPECT_EQ(r.all.inputs.files, 0u);
  EXPECT_EQ(r.all.inputs.problems,
            (std::vector<std::string>{d.file("none.pfw.gz") + ": no such file",
                                      d.file("empty") + ": no traces (*.pfw, *.pfw.gz) found",
                                      d.file("*.nothing") + ": no file matches"}));
}

TEST(AnalyzeReader, DirectoriesAndGlobsFindTraces)
{
  temp_dir d;
  std::filesystem::create_directories(d.file("a/b"));
  write_text(d.file("a/b/x.pfw"), span_line("read", "POSIX", 1, 10, 1, 5));
  write_members(d.file("a/y.pfw.gz"), {span_line("write", "POSIX", 2, 10, 1, 5)});
  write_text(d.file("a/ignored.txt"), "not a trace\n");
  EXPECT_EQ(read_all({d.file("a")}).all.inputs.files, 2u);
  EXPECT_EQ(read_all({d.file("a/*.pfw.gz")}).all.inputs.files, 1u);
}

TEST(AnalyzeReader, DFTracerLineForms)
{
  temp_dir d;
  std::string path = d.file("dft.pfw");
  write_text(
      path,
      "[\n"
      "{\"id\":1,\"name\":\"HH\",\"cat\":\"dftracer\",\"pid\":9,\"tid\":9,\"ph\":\"M\",\"args\":{\"name\":"
      "\"node1\",\"value\":5692}}\n"
      "{\"id\":2,\"name\":\"FH\",\"cat\":\"dftracer\",\"pid\":9,\"tid\":9,\"ph\":\"M\",\"args\":{\"name\":\"/"
      "d/f\",\"value\":\"abc\"}}\n"
      "{\"id\":3,\"name\":\"PR\",\"cat\":\"dftracer\",\"pid\":9,\"tid\":9,\"ph\":\"M\",\"args\":{\"name\":"
      "\"rank\",\"value\":\"3\"}}\n"
      "  "
      "{\"id\":4,\"name\":\"write\",\"cat\":\"POSIX\",\"pid\":\"9\",\"tid\":\"9\",\"ts\":\"100\",\"dur\":"
      "\"4\",\"ph\":\"X\","
      "\"args\":{\"hhash\":5692,\"fhash\":\"abc\",\"ret\":\"32\",\"count\":32}},\n"
      "{\"id\":5,\"name\":\"fread\",\"cat\":\"STDIO\",\"pid\":9,\"tid\":9,\"ts\":110,\"dur\":2,\"ph\":1,"
      "\"args\":{\"hhash\":5692,\"ret\":3,\"size\":4,\"count\":8}}\n"
      "{\"id\":6,\"name\":\"lseek\",\"cat\":\"POSIX\",\"pid\":9,\"tid\":9,\"ts\":120,\"dur\":1,\"ph\":\"X\","
      "\"args\":{\"hhash\":5692,\"ret\":4096}}\n"
      "]");
  read_result r = read_all({path});
  EXPECT_EQ(r.all.inputs.problems_total, 0u);
  EXPECT_EQ(r.all.inputs.lines, 6u);
  EXPECT_EQ(r.all.run.events, 3u);
  EXPECT_EQ(r.all.run.metadata, 3u);
  EXPECT_EQ(r.all.layers.ops["POSIX"]["write"].bytes, 32u);  // ret given as a string
  EXPECT_EQ(r.all.layers.ops["STDIO"]["fread"].bytes, 12u);  // 3 items of 4 bytes
  EXPECT_EQ(r.all.layers.ops["POSIX"]["lseek"].bytes, 0u);   // an offset, not bytes
  // The metadata lines carry no hhash: they belong to the file's HH host.
  nlohmann::json run = r.all.report(0)["run"];
  ASSERT_EQ(run["processes"].size(), 1u);
  EXPECT_EQ(run["processes"][0]["host"], "node1");
  EXPECT_EQ(run["processes"][0]["rank"], 3);
  EXPECT_EQ(r.all.names.names.files.at(0xabc), "/d/f");
}

}  // namespace
}  // namespace dc::test
