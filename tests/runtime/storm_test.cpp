// Processes that end badly or come and go fast (tests/runtime/storm_workload.c): a segfault, exit
// from many threads at once, a process that execs itself 200 times, a fork/exec storm, and a
// traced process's pid given to an untraced one and back. Every call the workload made must be in
// the trace once, under the pid and tid that made it; strace is the ground truth where the
// workload's calls are not all known in advance. Figures: docs/reliability.md.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/process_tree.h"
#include "runtime/runtime_helpers.h"
#include "runtime/storm_fixture.h"
#include "events.h"
#include "runtime/strace_counts.h"
#include "sink/lanes.h"

namespace dc::test {
namespace {

// The program dies of SIGSEGV after 1000 preads: the tool exits 139 as it does for any signal
// death (128 + the signal; the summary's exit_code too), and every call it made up to the crash
// is counted as strace counts it.
TEST_F(storm, SegfaultKeepsTheStatusAndEveryCallBeforeIt)
{
  std::string command = workload("segv " + shell_quote(data) + " 1000");
  ASSERT_EQ(run_shell(command + " 2>/dev/null"), 139);
  ASSERT_EQ(
      run_shell("strace -f -c -o " + shell_quote(dir / "strace.txt") + " -- " + command + " 2>/dev/null"),
      139);
  auto run = trace_command(dir, command);
  EXPECT_EQ(run.exit_code, 139) << run.err;
  EXPECT_EQ(run.summary["exit_code"], 139);
  int kinds = expect_counts_equal(strace_counts(dir / "strace.txt"), run.summary["layers"]["POSIX"]);
  int preads = 0;
  for (const auto& e : data_calls(run)) preads += e["name"] == "pread64" && e["args"]["ret"] == 1;
  EXPECT_EQ(preads, 1000);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::printf(
      "figure: segfault: exit 139 kept, %d of 1000 preads before the crash traced, %d kinds of call "
      "equal to strace's counts, lost %ju\n",
      preads, kinds, run.summary["events"]["lost"].get<uintmax_t>());
}

// 16 threads, each with N preads of its own size; then either every thread calls the exit
// system call, or the main thread calls exit_group while the 15 others block in a read of a pipe.
struct thread_exit : storm, ::testing::WithParamInterface<const char*> {};

TEST_P(thread_exit, EveryThreadsCallsUnderItsTid)
{
  const int threads = 16, preads = env_or("DC_STORM_THREAD_PREADS", 2000);
  bool group = std::string(GetParam()) == "group";
  // The program's pages are dropped from the cache first, so its loading reads the disk and the
  // block layer's spans (on lanes, charged to the process) are checked too, as on a cold machine.
  ASSERT_EQ(run_shell(std::string("dd iflag=nocache count=0 status=none if=") + STORM_WORKLOAD_BIN), 0);
  auto run = trace_command(
      dir,
      workload("threads " + shell_quote(data) + " " + std::to_string(threads) + " " + std::to_string(preads) +
               " " + GetParam() + " > " + shell_quote(dir / "tids.txt")),
      kernel_layers);
  EXPECT_EQ(run.exit_code, group ? 3 : 0) << run.err;
  std::map<int, uint64_t> tid_of;  // thread index -> tid, as the program saw it
  std::istringstream in(read_file(dir / "tids.txt"));
  for (std::string word; in >> word;) {
    int index;
    uint64_t tid;
    in >> index >> tid;
    tid_of[index] = tid;
  }
  ASSERT_EQ(tid_of.size(), static_cast<size_t>(threads));
  uint64_t pid = tid_of[0];
  std::set<uint64_t> tids;
  for (const auto& [index, tid] : tid_of) tids.insert(tid);
  std::map<uint64_t, int> by_tid;  // preads of each size, under the tid of the thread of that size
  for (const auto& e : data_calls(run)) {
    if (e["name"] != "pread64")
      continue;
    int index = e["args"]["count"].get<int>() - 1;
    EXPECT_EQ(e["tid"], tid_of[index]) << e;
    EXPECT_EQ(e["args"]["ret"], index + 1) << e;
    ++by_tid[tid_of[index]];
  }
  int interrupted = 0, lane_spans = 0;
  for (const auto& e : complete_events(run.trace)) {
    EXPECT_EQ(e["pid"], pid) << e;
    // Block requests (a cold cache's readahead) are drawn on the device's lanes, reserved tids
    // above any Linux tid; each names the thread that submitted it.
    bool on_lane = e["tid"].get<uint64_t>() >= dc::lane_table::first_tid;
    uint64_t tid = on_lane ? e["args"].value("submit_tid", uint64_t{0}) : e["tid"].get<uint64_t>();
    EXPECT_TRUE(tids.count(tid)) << e;
    lane_spans += on_lane;
    // A read cut short by exit_group ends with the kernel's ERESTARTSYS (512): the call never
    // restarts, the thread dies on its way back to user space.
    if (e["name"] == "read" && e["args"]["ret"] == -512) {
      EXPECT_NE(e["tid"], pid) << e;
      ++interrupted;
    }
  }
  for (uint64_t tid : tids) EXPECT_EQ(by_tid[tid], preads) << "tid " << tid;
  EXPECT_EQ(interrupted, group ? threads - 1 : 0);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::printf(
      "figure: %s from %d threads: %zu threads x %d preads each under its own tid, %d reads cut short "
      "by exit_group traced, %d block spans on lanes named by their submitter, exit %d, lost %ju\n",
      group ? "exit_group" : "exit", threads, by_tid.size(), preads, interrupted, lane_spans, run.exit_code,
      run.summary["events"]["lost"].get<uintmax_t>());
}

INSTANTIATE_TEST_SUITE_P(how, thread_exit, ::testing::Values("group", "exit"));

// One process execs itself 200 times under three names (links gen_0..2 to the program):
// generation G makes G+1 preads at offset G. Every generation's calls are under the one pid,
// after the process_name record of its own name.
TEST_F(storm, ExecLoopKeepsThePidAndNamesEachGeneration)
{
  const int generations = env_or("DC_STORM_EXECS", 200);
  for (int i = 0; i < 3; ++i)
    std::filesystem::create_symlink(STORM_WORKLOAD_BIN, dir / ("gen_" + std::to_string(i)));
  auto run = trace_command(dir, workload("exec " + shell_quote(data) + " 0 " + std::to_string(generations) +
                                         " " + shell_quote(dir.path)));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::pair<uint64_t, std::string>> names;  // (ts, name) of each exec
  uint64_t pid = 0;
  for (const auto& l : run.trace.lines)
    if (l["ph"] == "M" && l["name"] == "process_name") {
      names.emplace_back(l["ts"].get<uint64_t>(), l["args"]["name"].get<std::string>());
      pid = l["pid"];
    }
  ASSERT_EQ(names.size(), static_cast<size_t>(generations + 1));
  std::map<int, int> preads;
  int named_right = 0;
  for (const auto& e : data_calls(run)) {
    EXPECT_EQ(e["pid"], pid) << e;
    if (e["name"] != "pread64")
      continue;
    int g = e["args"]["offset"];
    ++preads[g];
    std::string name;  // the name of the last exec before this call
    for (const auto& [ts, n] : names)
      if (ts <= e["ts"].get<uint64_t>())
        name = n;
    std::string expected = g == 0
                               ? std::filesystem::path(STORM_WORKLOAD_BIN).filename().string().substr(0, 15)
                               : "gen_" + std::to_string(g % 3);
    EXPECT_EQ(name, expected) << e;
    named_right += name == expected;
  }
  ASSERT_EQ(preads.size(), static_cast<size_t>(generations + 1));
  for (const auto& [g, n] : preads) EXPECT_EQ(n, g + 1) << "generation " << g;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::printf(
      "figure: exec loop: %d execs, %zu generations under pid %ju, %d preads under their generation's "
      "name, lost %ju\n",
      generations, preads.size(), static_cast<uintmax_t>(pid), named_right,
      run.summary["events"]["lost"].get<uintmax_t>());
}

// N children (16 at a time), each one open, one pread and one close of the data file, either in
// the forked child or after an exec: every child is in the trace with exactly its three calls.
struct fork_storm : storm, ::testing::WithParamInterface<const char*> {};

// The summary keeps `detail` processes in detail and folds the others by command: together they
// are every process, and their calls of each kind add up to the run's.
void expect_processes_add_up(const nlohmann::json& summary, size_t processes, size_t detail)
{
  EXPECT_EQ(summary["processes_in_all"], processes);
  EXPECT_EQ(summary["processes"].size(), std::min(processes, detail));
  size_t folded = 0;
  std::map<std::string, uint64_t> calls;
  auto add = [&](const nlohmann::json& p) {
    if (p["layers"].contains("POSIX"))
      for (const auto& [name, stats] : p["layers"]["POSIX"].items())
        calls[name] += stats["count"].get<uint64_t>();
  };
  for (const auto& [key, p] : summary["processes"].items()) add(p);
  if (summary.contains("processes_folded"))
    for (const auto& [command, p] : summary["processes_folded"].items()) {
      folded += p["processes"].get<size_t>();
      add(p);
    }
  EXPECT_EQ(summary["processes"].size() + folded, processes);
  for (const auto& [name, stats] : summary["layers"]["POSIX"].items())
    EXPECT_EQ(calls[name], stats["count"].get<uint64_t>()) << name;
}

TEST_P(fork_storm, EveryChildAndEveryCallAttributed)
{
  const int children = env_or("DC_STORM_CHILDREN", 10000);
  auto run = trace_command(
      dir, workload("fork " + shell_quote(data) + " " + std::to_string(children) + " " + GetParam()),
      kernel_layers);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::set<uint64_t> pids;
  for (const auto& e : complete_events(run.trace)) pids.insert(e["pid"].get<uint64_t>());
  std::map<uint64_t, std::map<std::string, int>> calls;
  for (const auto& e : data_calls(run)) ++calls[e["pid"]][e["name"]];
  int whole = 0;
  for (const auto& [pid, c] : calls)
    whole += c == std::map<std::string, int>{{"close", 1}, {"openat", 1}, {"pread64", 1}};
  EXPECT_EQ(pids.size(), static_cast<size_t>(children + 1));
  EXPECT_EQ(calls.size(), static_cast<size_t>(children));
  EXPECT_EQ(whole, children);
  // The summary's detail is bounded (the default --process-detail, 1000 processes).
  expect_processes_add_up(run.summary, children + 1, 1000);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::printf(
      "figure: fork storm (%s): %d children, %zu pids in the trace, %d with exactly their 3 calls, "
      "%.1f s, lost %ju\n",
      GetParam(), children, pids.size(), whole, (run.end_us - run.start_us) / 1e6,
      run.summary["events"]["lost"].get<uintmax_t>());
}

// A smaller storm of exec'd children, every call counted as strace counts it.
TEST_P(fork_storm, CountsEqualStrace)
{
  const int children = env_or("DC_STORM_STRACE_CHILDREN", 500);
  std::string command =
      workload("fork " + shell_quote(data) + " " + std::to_string(children) + " " + GetParam());
  ASSERT_EQ(run_shell("strace -f -c -o " + shell_quote(dir / "strace.txt") + " -- " + command), 0);
  auto run = trace_command(dir, command, kernel_layers + " --process-detail 100");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  expect_processes_add_up(run.summary, children + 1, 100);
  auto truth = strace_counts(dir / "strace.txt");
  // One data pread per child, and the dynamic loader's (two per program it starts) beside them.
  EXPECT_GE(truth["pread64"], static_cast<uint64_t>(children));
  int kinds = expect_counts_equal(truth, run.summary["layers"]["POSIX"]);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  uint64_t total = 0;
  for (const auto& [name, stats] : run.summary["layers"]["POSIX"].items())
    total += stats["count"].get<uint64_t>();
  std::printf("figure: fork storm (%s) against strace: %d children, %ju calls in %d kinds equal, lost %ju\n",
              GetParam(), children, static_cast<uintmax_t>(total), kinds,
              run.summary["events"]["lost"].get<uintmax_t>());
}

INSTANTIATE_TEST_SUITE_P(how, fork_storm, ::testing::Values("io", "exec"));

// With the default config every exec'd child gets links of its own for the stdio probes. Their
// closing at its exit once fell behind a storm, and each close walks every mapping of libc once
// per link still open on its functions: 4,000 children had 6,700 links open at once and took
// 56 s, 8,000 took 198 s. New processes now wait (held) while many links are still to close.
TEST_F(storm, UprobeLinksOfExitedProcessesDoNotPileUp)
{
  const int children = env_or("DC_STORM_UPROBE_CHILDREN", 1500);
  traced_run run;
  std::atomic<bool> done = false;
  std::thread tool([&] {
    run =
        trace_command(dir, workload("fork " + shell_quote(data) + " " + std::to_string(children) + " exec"));
    done = true;
  });
  int most = 0, samples = 0;
  while (!done) {
    for (pid_t pid : processes_with_argument(dir / "trace.pfw.gz"))
      most = std::max(most, uprobe_links_of(pid));
    ++samples;
    usleep(20'000);
  }
  tool.join();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["processes_in_all"], children + 1);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  // 64 links waiting to close, and 3 for each of the 16 children running at once and the parent,
  // twice over (a process's links are queued when its exit is read): 166.
  EXPECT_GT(most, 0) << "no uprobe link seen in " << samples << " samples";
  EXPECT_LE(most, 166);
  std::printf(
      "figure: uprobe links in an exec storm: %d children, at most %d links open (%d samples), %.1f s, lost "
      "%ju\n",
      children, most, samples, (run.end_us - run.start_us) / 1e6,
      run.summary["events"]["lost"].get<uintmax_t>());
}

// Forks a child with pid `want` (ns_last_pid set just before; another process may take it first)
// that fopens `path`; true when the child got that pid.
bool untraced_child_with_pid(pid_t want, const std::string& path)
{
  FILE* f = std::fopen("/proc/sys/kernel/ns_last_pid", "w");
  if (!f || std::fprintf(f, "%d", want - 1) < 0 || std::fclose(f) != 0)
    return false;
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = getpid() == want ? std::fopen(path.c_str(), "w") : nullptr;
    _exit(f && std::fclose(f) == 0 ? 0 : 1);
  }
  int status;
  waitpid(pid, &status, 0);
  return pid == want;
}

// A traced child exits; its pid goes to a process of the test's own (not descended from the
// traced command), which must not be traced; then to a new child of the traced command, which
// must be.
TEST_F(storm, ReusedPidIsTracedOnlyUnderTheTracedCommand)
{
  traced_run run;
  std::thread tool([&] { run = trace_command(dir, workload("reuse " + shell_quote(dir.path))); });
  std::string old_file = dir / "old.pid";
  for (int i = 0; i < 120000 && !std::filesystem::exists(old_file); ++i) usleep(1000);
  pid_t old = std::atoi(read_file(old_file).c_str());
  bool got = false;
  int tries = 0;
  while (old > 0 && !got && tries < 50) {
    ++tries;
    got = untraced_child_with_pid(old, dir / "untraced");
  }
  std::FILE* go = std::fopen((dir / "go").c_str(), "w");
  if (go)
    std::fclose(go);
  tool.join();
  ASSERT_GT(old, 0) << run.err;
  ASSERT_TRUE(got) << "pid " << old << " not obtained in " << tries << " tries";
  ASSERT_TRUE(std::filesystem::exists(dir / "untraced"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(std::atoi(read_file(dir / "again").c_str()), old) << "the traced command did not get pid " << old;
  auto names = file_names(run.trace);
  std::map<std::string, int> opened;  // by pid `old`: openat and fopen
  int fopens = 0;
  for (const auto& e : complete_events(run.trace)) {
    if (e["pid"] != old)
      continue;
    fopens += e["name"] == "fopen";
    if (e["name"] == "openat" && e["args"].contains("fhash"))
      ++opened[names[e["args"]["fhash"].get<uint64_t>()]];
  }
  for (const auto& [hash, name] : names) EXPECT_EQ(name.find("untraced"), std::string::npos) << name;
  EXPECT_EQ(opened[dir / "traced_1"], 1);
  EXPECT_EQ(opened[dir / "traced_2"], 1);
  EXPECT_EQ(fopens, 2);  // the two traced children's, through the stdio probes of each
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  // The summary keeps the two traced processes with that pid apart: the second one's key is
  // PID.2, and each has its own open and fopen.
  const auto& procs = run.summary["processes"];
  std::string first = std::to_string(old), second = first + ".2";
  ASSERT_TRUE(procs.contains(first) && procs.contains(second)) << procs.dump();
  EXPECT_FALSE(procs.contains(first + ".3"));
  EXPECT_EQ(procs[second]["pid"], old);
  EXPECT_EQ(procs[second]["parent"], procs[first]["parent"]);
  for (const std::string& key : {first, second}) {
    EXPECT_EQ(procs[key]["layers"]["POSIX"]["openat"]["count"], 1) << key << ": " << procs[key].dump();
    EXPECT_EQ(procs[key]["layers"]["STDIO"]["fopen"]["count"], 1) << key << ": " << procs[key].dump();
  }
  // The trace names pid `old` once for each of its traced processes, and snapshots each (they
  // run one command: the second is snapshotted because it is another process, not another command).
  int named = 0, snapshotted = 0;
  for (const auto& line : run.trace.lines) {
    named += line["name"] == "process_name" && line["pid"] == old;
    snapshotted += line["name"] == "snapshot_process" && line["pid"] == old;
  }
  EXPECT_EQ(named, 2);
  EXPECT_EQ(snapshotted, 2);
  std::printf(
      "figure: pid reuse: pid %d traced, then untraced (obtained in %d tries: its open not in the "
      "trace), then traced again under the command (its open and fopen in the trace); the summary "
      "keeps the two traced processes apart (%s and %s)\n",
      old, tries, first.c_str(), second.c_str());
}

// Two traced processes whose pids share a slot of the traced set's filter (bpf/common.bpf.h
// dc_traced_slots): the first exits before the second does its I/O, which must all be traced.
TEST_F(storm, TracedPidsSharingAFilterSlotAreBothTraced)
{
  auto run = trace_command(
      dir, workload("collide " + shell_quote(dir.path) + " " + std::to_string(DC_TRACED_SLOTS)));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  pid_t b = std::atoi(read_file(dir / "collide").c_str());
  ASSERT_GT(b, 0) << "no pid sharing a slot obtained in 50 tries";
  auto names = file_names(run.trace);
  int opens = 0, writes = 0;
  for (const auto& e : complete_events(run.trace)) {
    if (e["pid"] != b || !e["args"].contains("fhash") ||
        names[e["args"]["fhash"].get<uint64_t>()] != dir / "collided")
      continue;
    opens += e["name"] == "openat";
    writes += e["name"] == "write";
  }
  EXPECT_EQ(opens, 1);
  EXPECT_EQ(writes, 7);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
}

}  // namespace
}  // namespace dc::test
