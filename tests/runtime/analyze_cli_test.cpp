// The `datacrumbs analyze` command itself on bad input: every problem is one line on stderr naming
// the file (and line), exactly as docs/analyze.md words it, and the exit status is 1 only when no
// line could be read as a trace record. And its progress bar: drawn on a terminal for a large
// input and cleared at the end, never when stderr is not a terminal.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "unit/analyze_test_util.h"
#include "unit/trace_reader.h"

namespace dc::test {
namespace {

std::string quote(const std::string& s)
{
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct analyze_run {
  int rc = -1;
  std::string err;        // stderr
  nlohmann::json report;  // --json, when written
};

struct analyze_command : ::testing::Test {
  temp_dir d;

  analyze_run analyze(const std::vector<std::string>& inputs)
  {
    std::string cmd =
        std::string(DATACRUMBS_BIN) + " analyze --no-progress --json " + quote(d.file("r.json"));
    for (const std::string& i : inputs) cmd.append(" ").append(quote(i));
    std::filesystem::remove(d.file("r.json"));
    int status = std::system((cmd + " > /dev/null 2> " + quote(d.file("err"))).c_str());
    analyze_run r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(d.file("err"));
    std::string json = slurp(d.file("r.json"));
    if (!json.empty())
      r.report = nlohmann::json::parse(json);
    return r;
  }

  // n numbered read spans.
  static std::string lines(int from, int to)
  {
    std::string s;
    for (int i = from; i < to; ++i)
      s += span_line(std::string("r").append(std::to_string(i)), "POSIX", 10, 1000 + i, 2, i);
    return s;
  }
};

constexpr const char* nothing = "datacrumbs: analyze: nothing could be read\n";

// A path that does not exist is a bad argument (as every tool's, docs/reliability.md): one line,
// exit 2, nothing read.
TEST_F(analyze_command, AMissingFileIsABadArgumentNamedInOneLine)
{
  auto r = analyze({d.file("none.pfw.gz")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "datacrumbs: paths: '" + d.file("none.pfw.gz") + "' does not exist\n");
}

TEST_F(analyze_command, AnEmptyDirectoryIsNamed)
{
  std::filesystem::create_directory(d.file("empty"));
  auto r = analyze({d.file("empty")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "analyze: " + d.file("empty") + ": no traces (*.pfw, *.pfw.gz) found\n" + nothing);
}

TEST_F(analyze_command, AZeroByteGzipIsNamed)
{
  write_text(d.file("zero.pfw.gz"), "");
  auto r = analyze({d.file("zero.pfw.gz")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "analyze: " + d.file("zero.pfw.gz") + ": empty file (0 bytes)\n" + nothing);
  // Beside a good trace it is named too, and the run is read (exit 0).
  write_members(d.file("good.pfw.gz"), {"[\n" + lines(0, 3) + "]\n"});
  auto both = analyze({d.file("zero.pfw.gz"), d.file("good.pfw.gz")});
  EXPECT_EQ(both.rc, 0);
  EXPECT_EQ(both.err, "analyze: " + d.file("zero.pfw.gz") + ": empty file (0 bytes)\n");
  EXPECT_EQ(both.report["run"]["events"], 3);
  // A trace of the format's lines only says so.
  write_members(d.file("hollow.pfw.gz"), {"[\n", "\n]\n"});
  auto hollow = analyze({d.file("hollow.pfw.gz")});
  EXPECT_EQ(hollow.rc, 1);
  EXPECT_EQ(hollow.err, "analyze: " + d.file("hollow.pfw.gz") +
                            ": no trace lines in it (only blank, [ and ] lines)\n" + nothing);
}

TEST_F(analyze_command, AFileOfGarbageOnlyIsExit1WithEveryLineNamed)
{
  std::string f = d.file("garbage.pfw");
  write_text(f, "garbage\n{\"a\":1}\n42\n");
  auto r = analyze({f});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "analyze: " + f + ":1: not JSON (skipped)\n" + "analyze: " + f +
                       ":2: not an event object: no \"ph\" (skipped)\n" + "analyze: " + f +
                       ":3: not an event object (skipped)\n" +
                       "datacrumbs: analyze: nothing could be read: all 3 lines were skipped\n");
  EXPECT_EQ(r.report["inputs"]["skipped"], (nlohmann::json{{"not_json", 1}, {"not_an_event", 2}}));
}

TEST_F(analyze_command, BadLinesAreNamedAndTheRestIsRead)
{
  std::string f = d.file("bad.pfw");
  write_text(f,
             "[\n" + lines(0, 1) + "this is not json\n" +
                 "{\"name\":\"x\",\"cat\":\"POSIX\",\"ph\":\"Q\",\"ts\":1,\"pid\":1,\"tid\":1}\n" +
                 "{\"name\":\"y\",\"cat\":\"POSIX\",\"ph\":\"X\",\"ts\":-5,\"dur\":1,\"pid\":1,\"tid\":1}\n" +
                 lines(1, 2) + "]\n");
  auto r = analyze({f});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "analyze: " + f + ":3: not JSON (skipped)\n" + "analyze: " + f +
                       ":4: unknown ph \"Q\" (skipped)\n" + "analyze: " + f + ":5: negative ts (skipped)\n");
  EXPECT_EQ(r.report["run"]["events"], 2);
  EXPECT_EQ(r.report["inputs"]["skipped"],
            (nlohmann::json{{"not_json", 1}, {"unknown_ph", 1}, {"negative_ts", 1}}));
}

TEST_F(analyze_command, ATruncatedMemberNamesItsLastCompleteLine)
{
  std::string f = d.file("killed.pfw.gz");
  std::vector<std::string> members = {"[\n" + lines(0, 10), lines(10, 20), lines(20, 2000)};
  write_members(d.file("head.gz"), {members[0], members[1]});
  write_members(f, members);
  uint64_t third = std::filesystem::file_size(d.file("head.gz"));
  std::filesystem::resize_file(f, std::filesystem::file_size(f) - 2000);  // killed writing m3
  // The truth: zlib's own reading of the cut member, after the 21 lines of the first two.
  std::string text = inflate_member(slurp(f).substr(third)).text;
  uint64_t complete = 21 + static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  ASSERT_NE(text.back(), '\n');  // the cut falls inside a line
  auto r = analyze({f});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "analyze: " + f + ": truncated gzip member at byte " + std::to_string(third) +
                       ": read up to line " + std::to_string(complete) + " (its last complete line; line " +
                       std::to_string(complete + 1) + " was cut short)\n");
  EXPECT_EQ(r.report["run"]["events"], complete - 1);  // all but the "[" line
  EXPECT_EQ(r.report["inputs"]["skipped"], (nlohmann::json{{"truncated", 1}}));
}

TEST_F(analyze_command, ACorruptMemberIsSkippedWithItsBytesAndLinesStated)
{
  write_members(d.file("a.gz"), {"[\n" + lines(0, 10)});
  write_members(d.file("b.gz"), {lines(10, 400)});
  write_members(d.file("c.gz"), {lines(400, 410) + "]\n"});
  std::string a = slurp(d.file("a.gz")), b = slurp(d.file("b.gz")), c = slurp(d.file("c.gz"));
  for (size_t i = b.size() / 2; i < b.size() / 2 + 64; ++i) b[i] = static_cast<char>(b[i] ^ 0x5a);
  std::string decoded = inflate_member(b).text;
  uint64_t before_damage = static_cast<uint64_t>(std::count(decoded.begin(), decoded.end(), '\n'));
  ASSERT_LT(before_damage, 390u);
  std::string f = d.file("corrupt.pfw.gz");
  write_text(f, a + b + c);
  auto r = analyze({f});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "analyze: " + f + ": corrupt gzip member at byte " + std::to_string(a.size()) +
                       " (skipped: " + std::to_string(b.size()) + " bytes, which decode to at least " +
                       std::to_string(before_damage) +
                       " lines before the damage; damaged data cannot be trusted, so none is read)\n");
  EXPECT_EQ(r.report["run"]["events"], 20);
  EXPECT_EQ(r.report["inputs"]["skipped"], nlohmann::json::object());
  EXPECT_EQ(r.report["inputs"]["unreadable"],
            (nlohmann::json{
                {"bytes", b.size()}, {"corrupt_members", 1}, {"corrupt_lines_at_least", before_damage}}));
  // The text report's inputs line says it too.
  std::system((std::string(DATACRUMBS_BIN) + " analyze --no-progress " + quote(f) + " > " +
               quote(d.file("out")) + " 2>/dev/null")
                  .c_str());
  EXPECT_NE(
      slurp(d.file("out"))
          .find("; unreadable: " + std::to_string(b.size()) + " bytes (1 corrupt gzip members, at least " +
                std::to_string(before_damage) + " lines lost)"),
      std::string::npos)
      << slurp(d.file("out"));
}

// A trace of more than the bar's 16 MiB threshold, as plain text.
std::string big_trace(const temp_dir& d)
{
  std::string f = d.file("big.pfw");
  std::ofstream out(f, std::ios::binary);
  out << "[\n";
  for (long i = 0; out.tellp() < (17l << 20); ++i)
    out << span_line("read", "POSIX", 10, 1'000'000 + i, 2, 4096, ",\"fhash\":5,\"fd\":3");
  out << "]\n";
  return f;
}

TEST_F(analyze_command, TheProgressBarIsDrawnOnATerminalAndCleared)
{
  std::string f = big_trace(d);
  // script(1) gives the command a terminal; its stdout (the report) goes to a file.
  std::string inner =
      std::string(DATACRUMBS_BIN) + " analyze --threads 1 " + quote(f) + " > " + quote(d.file("report.txt"));
  int status =
      std::system(("script -qec " + quote(inner) + " /dev/null > " + quote(d.file("tty")) + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(d.file("tty"));
  std::string tty = slurp(d.file("tty"));
  std::regex bar("\ranalyze: +([0-9]+)%  ([0-9.]+) of ([0-9.]+) MB");
  int drawn = 0, last_percent = -1;
  size_t last_end = 0;
  for (std::sregex_iterator it(tty.begin(), tty.end(), bar), end; it != end; ++it) {
    ++drawn;
    int percent = std::stoi((*it)[1]);
    EXPECT_GE(percent, last_percent);
    EXPECT_LE(percent, 100);
    EXPECT_DOUBLE_EQ(std::stod((*it)[3]), std::round(std::filesystem::file_size(f) / 1e5) / 10);
    last_percent = percent;
    last_end = static_cast<size_t>(it->position() + it->length());
  }
  EXPECT_GE(drawn, 1) << tty;
  // Cleared at the end: carriage return and erase-line after the last drawing, and nothing else.
  EXPECT_EQ(tty.substr(last_end), "\r\033[K") << tty.substr(last_end);
  EXPECT_NE(slurp(d.file("report.txt")).find("inputs: 1 files"), std::string::npos);

  // Not a terminal: no bar at all.
  std::system((std::string(DATACRUMBS_BIN) + " analyze --threads 1 " + quote(f) + " > /dev/null 2> " +
               quote(d.file("err")))
                  .c_str());
  EXPECT_EQ(slurp(d.file("err")), "");
  // A terminal but a small input: no bar either.
  std::string small = d.file("small.pfw");
  write_text(small, "[\n" + lines(0, 100) + "]\n");
  std::string small_inner = std::string(DATACRUMBS_BIN) + " analyze " + quote(small) + " > /dev/null";
  std::system(
      ("script -qec " + quote(small_inner) + " /dev/null > " + quote(d.file("tty2")) + " 2>&1").c_str());
  EXPECT_EQ(slurp(d.file("tty2")), "");
}

}  // namespace
}  // namespace dc::test
