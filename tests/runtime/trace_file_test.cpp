// The trace file itself: valid gzip and JSON line by line, metadata before use, readable after
// the tracer is killed, and files opened before tracing still named.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "core/hash.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

TEST_F(runtime_test, TraceIsValidGzipAndJsonWithMetadataBeforeUse)
{
  auto run = trace_command(dir, "sh -c " + shell_quote("cat /etc/hostname > " + (dir / "out.txt")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run_shell("gzip -t " + shell_quote(dir / "trace.pfw.gz")), 0);
  EXPECT_TRUE(run.trace.opened);
  EXPECT_TRUE(run.trace.closed);
  std::set<uint64_t> ids, hashes, pids_named, tids_named;
  for (const auto& j : run.trace.lines) {
    ASSERT_TRUE(j.contains("id") && j.contains("name") && j.contains("cat") && j.contains("ph") &&
                j.contains("pid") && j.contains("tid"))
        << j;
    EXPECT_TRUE(ids.insert(j["id"].get<uint64_t>()).second);
    EXPECT_TRUE(j.contains("ts")) << "every line has a ts (viewers sort by it): " << j;
    if (j["ph"] == "M") {
      if (j["name"] == "page_cache") {
        EXPECT_EQ(j["cat"], "PAGECACHE");  // run totals, not a sample in time
      }
      if (j["name"] == "FH")
        hashes.insert(j["args"]["value"].get<uint64_t>());
      if (j["name"] == "process_name")
        pids_named.insert(j["pid"].get<uint64_t>());
      if (j["name"] == "thread_name")
        tids_named.insert(j["tid"].get<uint64_t>());
      continue;
    }
    // Spans of the layers this command touches.
    EXPECT_EQ(j["ph"], "X");
    static const std::map<std::string, std::string> key_arg = {
        {"POSIX", "ret"}, {"BLOCK", "bytes"}, {"FAULT", "major"}, {"FS", "ret"}, {"STDIO", "ret"}};
    ASSERT_TRUE(key_arg.count(j["cat"])) << j;
    EXPECT_TRUE(j["args"].contains(key_arg.at(j["cat"]))) << j;
    if (j["args"].contains("fhash")) {
      EXPECT_TRUE(hashes.count(j["args"]["fhash"].get<uint64_t>())) << "FH after use: " << j;
    }
    EXPECT_TRUE(pids_named.count(j["pid"].get<uint64_t>())) << j;
    EXPECT_TRUE(tids_named.count(j["tid"].get<uint64_t>())) << j;
  }
  EXPECT_EQ(run.trace.lines.back()["name"], "end");
  EXPECT_EQ(file_names(run.trace)[string_hash(dir / "out.txt")], dir / "out.txt");
  // The summary's rates: events written over the run's elapsed time, which the test's own
  // clock brackets.
  double elapsed = run.summary["elapsed_s"].get<double>();
  EXPECT_GT(elapsed, 0.0);
  EXPECT_LE(elapsed, static_cast<double>(run.end_us - run.start_us) / 1e6);
  EXPECT_DOUBLE_EQ(run.summary["events"]["written_per_s"].get<double>(),
                   run.summary["events"]["written"].get<double>() / elapsed);
}

TEST_F(runtime_test, FilesOpenedBeforeTracingResolveToTheirPaths)
{
  std::string input = dir / "input.txt", output = dir / "stdout.txt";
  ASSERT_EQ(run_shell("echo hello > " + shell_quote(input)), 0);
  // fd 5 and stdout are opened by the calling shell, before the tool starts the command.
  std::string cmd = "exec 5<" + shell_quote(input) + "; " + DATACRUMBS_BIN + " run -o " +
                    shell_quote(dir / "trace.pfw.gz") + " -- sh -c 'cat <&5' >" + shell_quote(output) +
                    " 2>/dev/null";
  ASSERT_EQ(run_shell("bash -c " + shell_quote(cmd)), 0);
  auto trace = parse_trace_text(read_gzip_members(dir / "trace.pfw.gz").text);
  auto names = file_names(trace);
  // cat may use read+write or copy_file_range (input as fhash, output as fhash2).
  bool read_input = false, wrote_output = false;
  for (const auto& e : complete_events(trace)) {
    if (e["args"]["ret"] != 6)
      continue;
    std::string first = names[e["args"].value("fhash", 0ull)],
                second = names[e["args"].value("fhash2", 0ull)];
    read_input |= first == input;
    wrote_output |= first == output || second == output;
  }
  EXPECT_TRUE(read_input);
  EXPECT_TRUE(wrote_output);
}

// Records wait in a per-thread stage in the kernel. A descendant still alive when the command
// ends has its last records there; they must reach the trace all the same.
TEST_F(runtime_test, RecordsOfADescendantStillAliveAtTheEndAreInTheTrace)
{
  constexpr int writes = 7;  // fewer than a stage holds
  std::string file = dir / "out.bin", pid_file = dir / "child.pid";
  auto run = trace_command(dir, std::string(LINGERING_WRITER_BIN) + " " + shell_quote(file) + " " +
                                    std::to_string(writes) + " " + shell_quote(pid_file));
  int child = std::atoi(read_file(pid_file).c_str());
  ASSERT_GT(child, 0);
  kill(child, SIGKILL);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  int seen = 0;
  for (const auto& e : complete_events(run.trace))
    if (e["name"] == "write" && e["args"].value("fhash", 0ull) == string_hash(file)) {
      EXPECT_EQ(e["pid"], child);
      EXPECT_EQ(e["args"]["ret"], 1);
      ++seen;
    }
  EXPECT_EQ(seen, writes);
}

TEST_F(runtime_test, SigkilledTracerLeavesAReadablePrefix)
{
  std::string trace = dir / "trace.pfw.gz";
  // Runs until killed; the marker lets the test find and end it afterwards.
  std::string workload =
      "while :; do echo sigkill-prefix-marker; sleep 0.01; done > " + shell_quote(dir / "o");
  pid_t tool = fork();
  if (tool == 0) {
    execl(DATACRUMBS_BIN, DATACRUMBS_BIN, "run", "-o", trace.c_str(), "--", "sh", "-c", workload.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  ASSERT_EQ(kill(tool, SIGKILL), 0);
  waitpid(tool, nullptr, 0);
  run_shell("pkill -KILL -f sigkill-prefix-marker >/dev/null 2>&1");
  auto contents = read_gzip_members(trace);
  ASSERT_GE(contents.complete_members, 1u);
  auto t = parse_trace_text(contents.text);  // throws on any line that is not JSON
  EXPECT_TRUE(t.opened);
  EXPECT_FALSE(t.closed);
  EXPECT_GT(complete_events(t).size(), 100u);
}

}  // namespace
}  // namespace dc::test
