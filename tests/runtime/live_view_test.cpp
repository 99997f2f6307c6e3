// `run --print`, `run --live` and `datacrumbs live` against the trace of the same run: every
// printed line is one of the trace's events and every event is printed; the live view's last
// frame holds the run's totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "core/hash.h"
#include "runtime/deploy_fixture.h"

namespace dc::test {
namespace {

struct print_line {
  std::string time, system, name, comm, offset, ret, layer, file;
  uint64_t pid = 0, tid = 0, size = 0, lat = 0;
};

std::vector<print_line> read_print_file(const std::string& path, std::string* header)
{
  std::vector<print_line> lines;
  std::ifstream in(path);
  std::string text;
  std::getline(in, *header);
  while (std::getline(in, text)) {
    std::istringstream s(text);
    print_line l;
    s >> l.time >> l.system >> l.name >> l.pid >> l.tid >> l.comm >> l.size >> l.offset >> l.lat >> l.ret >>
        l.layer;
    std::getline(s >> std::ws, l.file);
    lines.push_back(l);
  }
  return lines;
}

// What a line and a trace event both say: layer, operation, pid, thread, microsecond, latency, ret.
std::string key_of(const print_line& l)
{
  return l.layer + " " + l.name + " " + std::to_string(l.pid) + " " + std::to_string(l.tid) + " " +
         l.time.substr(l.time.find('.') + 1) + " " + std::to_string(l.lat) + " " + l.ret;
}

std::string key_of(const nlohmann::json& e)
{
  const auto& a = e["args"];
  char usec[8];
  std::snprintf(usec, sizeof(usec), "%06llu",
                static_cast<unsigned long long>(e["ts"].get<uint64_t>() % 1000000));
  uint64_t tid = a.contains("submit_tid") ? a["submit_tid"].get<uint64_t>() : e["tid"].get<uint64_t>();
  return e["cat"].get<std::string>() + " " + e["name"].get<std::string>() + " " + e["pid"].dump() + " " +
         std::to_string(tid) + " " + usec + " " + e["dur"].dump() + " " +
         (a.contains("ret") ? a["ret"].dump() : "-");
}

std::vector<std::string> sorted(std::vector<std::string> v)
{
  std::ranges::sort(v);
  return v;
}

const std::string dd_write = "dd if=/dev/zero bs=4k count=50 conv=fsync status=none of=";

TEST_F(runtime_test, PrintShowsEveryEventOfTheTraceOnce)
{
  std::string out = dir / "out.bin", printed = dir / "print.txt";
  auto run = trace_command(dir, dd_write + shell_quote(out), "--print --print-file " + shell_quote(printed));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string header;
  auto lines = read_print_file(printed, &header);
  EXPECT_EQ(header.substr(0, 4), "TIME");
  for (const char* column :
       {"SYSTEM", "EVENT_TYPE", "PID", "TID", "COMM", "SIZE", "OFFSET", "LAT(us)", "RET", "LAYER", "FILE"})
    EXPECT_NE(header.find(column), std::string::npos) << column;
  auto events = complete_events(run.trace);
  ASSERT_EQ(lines.size(), events.size());
  std::vector<std::string> from_lines, from_trace;
  for (const auto& l : lines) from_lines.push_back(key_of(l));
  for (const auto& e : events) from_trace.push_back(key_of(e));
  EXPECT_EQ(sorted(from_lines), sorted(from_trace));
  // dd's own writes: 50 of 4 KiB to the file, by dd's one process.
  uint64_t writes = 0, bytes = 0;
  std::set<uint64_t> pids;
  for (const auto& l : lines)
    if (l.layer == "POSIX" && l.name == "write" && l.file == out) {
      ++writes;
      bytes += l.size;
      pids.insert(l.pid);
      EXPECT_EQ(l.comm, "dd");
    }
  EXPECT_EQ(writes, 50u);
  EXPECT_EQ(bytes, 50u * 4096);
  EXPECT_EQ(pids.size(), 1u);
}

// Without --print-file the lines go to stdout, as the run goes: the traced shell itself reads
// what has been printed while it sleeps after dd, and finds dd's writes there already.
TEST_F(runtime_test, PrintGoesToStdoutWhileTheRunGoesOn)
{
  std::string out = dir / "out.bin", printed = dir / "print.txt", mid = dir / "mid.txt";
  auto run = trace_command(dir,
                           "sh -c " + shell_quote(dd_write + shell_quote(out) + "; sleep 1.5; cat " +
                                                  shell_quote(printed) + " >" + shell_quote(mid)),
                           "--print >" + shell_quote(printed));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto dd_writes = [&](const std::string& path) {
    std::string header;
    return std::ranges::count_if(read_print_file(path, &header), [&](const print_line& l) {
      return l.layer == "POSIX" && l.name == "write" && l.file == out && l.size == 4096;
    });
  };
  EXPECT_EQ(dd_writes(mid), 50) << "printed while the run went on:\n" << read_file(mid);
  std::string header;
  auto lines = read_print_file(printed, &header);
  EXPECT_EQ(header.substr(0, 4), "TIME");
  std::vector<std::string> from_lines, from_trace;
  for (const auto& l : lines) from_lines.push_back(key_of(l));
  for (const auto& e : complete_events(run.trace)) from_trace.push_back(key_of(e));
  EXPECT_EQ(sorted(from_lines), sorted(from_trace));
  EXPECT_EQ(dd_writes(printed), 50);
}

TEST_F(runtime_test, PrintFilterPrintsOnlyItsLayers)
{
  std::string out = dir / "out.bin", printed = dir / "print.txt";
  auto run = trace_command(dir, dd_write + shell_quote(out),
                           "--print --print-filter block,Posix --print-file " + shell_quote(printed));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string header;
  auto lines = read_print_file(printed, &header);
  std::vector<std::string> from_lines, from_trace;
  for (const auto& l : lines) from_lines.push_back(key_of(l));
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX" || e["cat"] == "BLOCK")
      from_trace.push_back(key_of(e));
  EXPECT_EQ(sorted(from_lines), sorted(from_trace));
  EXPECT_TRUE(std::ranges::any_of(lines, [](const print_line& l) { return l.layer == "BLOCK"; }))
      << "conv=fsync writes the file to the device";

  std::string err = dir / "bad.err";
  int status = run_shell(std::string(DATACRUMBS_BIN) + " run --print --print-filter POSIX,DISK -o " +
                         shell_quote(dir / "bad.pfw.gz") + " -- true 2>" + shell_quote(err));
  EXPECT_EQ(status, 2);
  std::string message = read_file(err);
  EXPECT_EQ(std::ranges::count(message, '\n'), 1) << message;
  EXPECT_NE(message.find("'DISK'"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.pfw.gz")) << "nothing half-written";

  // Profile mode writes counters, not events: nothing to print, said before the command runs.
  status = run_shell(std::string(DATACRUMBS_BIN) + " run --mode profile --print -o " +
                     shell_quote(dir / "bad.pfw.gz") + " -- touch " + shell_quote(dir / "ran") + " 2>" +
                     shell_quote(err));
  EXPECT_EQ(status, 2);
  EXPECT_NE(read_file(err).find("profile mode"), std::string::npos) << read_file(err);
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.pfw.gz"));
}

// The rows of the "so far" table of a frame's text: layer -> {ops, read bytes, write bytes}.
std::map<std::string, std::array<uint64_t, 3>> totals_of(const std::string& frame)
{
  std::map<std::string, std::array<uint64_t, 3>> rows;
  std::istringstream s(frame.substr(frame.find("so far:")));
  std::string line;
  std::getline(s, line);
  std::getline(s, line);  // the table's header
  while (std::getline(s, line) && !line.empty()) {
    std::istringstream r(line);
    std::string name;
    std::array<uint64_t, 3> v{};
    r >> name >> v[0] >> v[1] >> v[2];
    rows[name] = v;
  }
  return rows;
}

// Per layer: events, and bytes read and written (as the summary counts them) in the trace.
std::map<std::string, std::array<uint64_t, 3>> totals_of(const nlohmann::json& summary)
{
  std::map<std::string, std::array<uint64_t, 3>> rows;
  for (const auto& [layer, ops] : summary["layers"].items())
    for (const auto& [op, s] : ops.items()) rows[layer][0] += s["count"].get<uint64_t>();
  for (const auto& [layer, b] : summary["amplification"]["bytes"].items()) {
    rows[layer][1] = b["read"].get<uint64_t>();
    rows[layer][2] = b["write"].get<uint64_t>();
  }
  rows.erase("PAGECACHE");
  return rows;
}

uint64_t events_of(const std::string& frame)
{
  auto at = frame.find(" events ");
  return std::stoull(frame.substr(at + 8));
}

// The frames of --live's output, each from its "datacrumbs live" line on.
std::vector<std::string> frames_of(const std::string& text)
{
  std::vector<std::string> frames;
  for (size_t at = text.find("datacrumbs live"); at != std::string::npos;) {
    size_t next = text.find("datacrumbs live", at + 1);
    frames.push_back(text.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return frames;
}

// A FILE row of a frame: {ops, app read, app write}, zeros when the frame has no row for path.
std::array<uint64_t, 3> file_row(const std::string& frame, const std::string& path)
{
  size_t table = frame.find("\nFILE ");
  if (table == std::string::npos)
    return {};
  std::istringstream s(frame.substr(table));
  std::string line;
  while (std::getline(s, line) && line.rfind("so far:", 0) != 0) {
    if (line.rfind(path + " ", 0) != 0)
      continue;
    std::istringstream r(line.substr(path.size()));
    std::array<uint64_t, 3> v{};
    r >> v[0] >> v[1] >> v[2];
    return v;
  }
  return {};
}

TEST_F(runtime_test, LiveShowsTheRunsTotalsWhenNotATerminal)
{
  std::string out = dir / "out.bin", shown = dir / "live.txt";
  auto run = trace_command(dir,
                           "sh -c " + shell_quote(dd_write + shell_quote(out) + "; sleep 2.5; cat " +
                                                  shell_quote(out) + " >/dev/null"),
                           "--live >" + shell_quote(shown));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string text = read_file(shown);
  EXPECT_EQ(text.find('\033'), std::string::npos) << "no terminal control when not a terminal";
  std::vector<std::string> frames = frames_of(text);
  ASSERT_GE(frames.size(), 3u) << "a frame a second over ~3 s, and the last:\n" << text;
  const std::string& last = frames.back();
  EXPECT_NE(last.find("(ended)"), std::string::npos) << last;
  EXPECT_EQ(events_of(last), complete_events(run.trace).size()) << last;
  EXPECT_EQ(totals_of(last), totals_of(run.summary)) << last;
  EXPECT_NE(last.find("lost " + std::to_string(run.summary["events"]["lost"].get<uint64_t>())),
            std::string::npos)
      << last;
  for (size_t i = 1; i < frames.size(); ++i) EXPECT_GE(events_of(frames[i]), events_of(frames[i - 1]));
}

// On a terminal (script(1)'s pseudo-terminal) each frame clears the screen and is drawn from
// its top left, and nothing else moves the cursor. The run copies a file with copy_file_range
// (cp): its output is shown written and its input read, as the summary counts them.
TEST_F(runtime_test, LiveRedrawsInPlaceOnATerminalAndShowsACopysTwoFiles)
{
  std::string in = dir / "in.bin", out = dir / "out.bin", screen = dir / "screen.txt";
  ASSERT_EQ(run_shell("head -c 1000000 /dev/urandom >" + shell_quote(in)), 0);
  auto run = trace_command(
      dir, "sh -c " + shell_quote("cp " + shell_quote(in) + " " + shell_quote(out) + "; sleep 2.5"), "--live",
      [&](const std::string& line) {
        return "script -qfec " + shell_quote(line) + " " + shell_quote(screen) + " >/dev/null";
      });
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string text;  // the terminal's lines end in "\r\n"
  for (char c : read_file(screen))
    if (c != '\r')
      text += c;
  const std::string clear = "\033[H\033[2J";
  std::vector<std::string> frames = frames_of(text);
  ASSERT_GE(frames.size(), 3u) << "a frame a second over ~3 s, and the last:\n" << text;
  size_t clears = 0;
  for (size_t at = text.find(clear); at != std::string::npos; at = text.find(clear, at + 1)) {
    ++clears;
    EXPECT_EQ(text.compare(at + clear.size(), 15, "datacrumbs live"), 0) << "a frame right after each clear";
  }
  EXPECT_EQ(clears, frames.size()) << "every frame redrawn from the top of a cleared screen";
  for (const std::string& f : frames) {
    // Within a frame: the next frame's clear only, no other control sequence.
    std::string body = f.substr(0, f.rfind(clear));
    EXPECT_EQ(body.find('\033'), std::string::npos) << body;
  }
  EXPECT_NE(frames.back().find("(ended)"), std::string::npos) << frames.back();
  EXPECT_EQ(totals_of(frames.back()), totals_of(run.summary)) << frames.back();
  // Every event falls in one interval: a file's rows over all frames add up to the run's bytes.
  std::array<uint64_t, 3> input{}, output{};
  for (const std::string& f : frames)
    for (size_t i = 0; i < 3; ++i) {
      input[i] += file_row(f, in)[i];
      output[i] += file_row(f, out)[i];
    }
  EXPECT_EQ(input[1], 1000000u) << text;
  EXPECT_EQ(input[2], 0u);
  EXPECT_EQ(output[1], 0u) << "the copy's output is not read";
  EXPECT_EQ(output[2], 1000000u) << "the copy's output is written:\n" << text;
  EXPECT_EQ(std::filesystem::file_size(out), 1000000u);
}

// `datacrumbs live RUN-ID` watches the daemon's run as it goes: a frame a second while wrapped
// programs write, plain text when not a terminal, then the run's last frame once it ends, which
// holds everything the trace holds.
TEST_F(deploy_test, LiveShowsADaemonsRun)
{
  auto info = start_daemon(probes, "live1");
  ASSERT_FALSE(info.is_null());
  std::string live = std::string(DATACRUMBS_BIN) + " live live1";
  ASSERT_TRUE(wait_for([&] { return run_shell(live + " --once >/dev/null 2>&1") == 0; }));
  std::string shown = dir / "live.txt", rc = dir / "live.rc";
  ASSERT_EQ(run_shell("(" + live + " >" + shell_quote(shown) + "; echo $? >" + shell_quote(rc) + ") &"), 0);
  std::string out = dir / "wrapped.bin";
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap dd if=/dev/zero of=" + shell_quote(out) +
                        " bs=4k count=10 oflag=append conv=notrunc status=none"),
              0);
    usleep(1'100'000);
  }
  stop_daemon("live1");
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(rc) && !read_file(rc).empty(); }))
      << "live ends with the run";
  EXPECT_EQ(read_file(rc), "0\n");
  std::string text = read_file(shown);
  EXPECT_EQ(text.find('\033'), std::string::npos) << "no terminal control when not a terminal";
  std::vector<std::string> frames = frames_of(text);
  ASSERT_GE(frames.size(), 3u) << "a frame a second over ~3 s, and the last:\n" << text;
  for (size_t i = 1; i < frames.size(); ++i) EXPECT_GE(events_of(frames[i]), events_of(frames[i - 1]));
  const std::string& last = frames.back();
  EXPECT_NE(last.find("(ended)"), std::string::npos) << last;
  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  EXPECT_EQ(events_of(last), complete_events(trace).size()) << last;
  EXPECT_EQ(totals_of(last)["POSIX"][2], 3u * 10 * 4096) << last;

  std::string err = dir / "none.err";
  EXPECT_EQ(run_shell(live.substr(0, live.size() - 5) + "nosuchrun 2>" + shell_quote(err)), 1);
  EXPECT_NE(read_file(err).find("no daemon run 'nosuchrun'"), std::string::npos) << read_file(err);
}

}  // namespace
}  // namespace dc::test
