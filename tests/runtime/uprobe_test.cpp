// The user-space layers against what the program did: stdio calls counted exactly, the system
// calls beneath them nested under them, a custom function chosen by regex from a config, and a
// function that never returns leaving later nesting intact.
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/hash.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr int fwrites = 25;  // 25 x 3000 bytes: several 4 KiB buffer flushes

// Whether this kernel has uprobe sessions (Linux 6.13+), which the tool then links calls as.
bool kernel_has_uprobe_sessions()
{
  utsname u{};
  int major = 0, minor = 0;
  return uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
         (major > 6 || (major == 6 && minor >= 13));
}

// `app`: stdio_app, linked to libc.so or with libc linked in (where fwrite is its own function).
// `linked_as`: how the tool must have linked the calls (the summary's uprobes.calls_linked_as).
void check_stdio_run(const scratch_dir& dir, const std::string& app,
                     const std::string& linked_as = kernel_has_uprobe_sessions() ? "session"
                                                                                 : "entry and return")
{
  std::string config = dir / "probes.yaml", out = dir / "out.txt";
  std::ofstream(config) << "capture_probes:\n"
                           "  - name: POSIX\n    probe: syscalls\n"
                           "  - include: "
                        << DATACRUMBS_SOURCE_DIR
      "/etc/datacrumbs/configs/stdio.yaml\n"
      "  - name: APP\n    probe: uprobe\n    file: "
                        << app << "\n    regex: \"dc_custom_.*\"\n";
  auto run = trace_command(dir, app + " " + shell_quote(out) + " " + std::to_string(fwrites),
                           "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  EXPECT_EQ(run.summary["uprobes"]["calls_linked_as"], linked_as);

  std::map<uint64_t, nlohmann::json> by_id;
  auto events = complete_events(run.trace);
  for (const auto& e : events)
    if (e["args"].contains("level"))
      by_id[e["id"]] = e;
  auto named = [&](const std::string& cat, const std::string& name) {
    std::vector<nlohmann::json> out_events;
    for (const auto& e : events)
      if (e["cat"] == cat && e["name"] == name)
        out_events.push_back(e);
    return out_events;
  };

  auto writes_by_app = named("STDIO", "fwrite");
  ASSERT_EQ(writes_by_app.size(), fwrites + 1u);
  for (const auto& e : writes_by_app) {
    EXPECT_EQ(e["args"]["size"], 1);
    EXPECT_EQ(e["args"]["count"], 3000);
    EXPECT_EQ(e["args"]["ret"], 3000);
  }
  auto opens = named("STDIO", "fopen");
  ASSERT_EQ(opens.size(), 1u);
  EXPECT_EQ(opens[0]["args"]["fhash"], string_hash(out));

  // Every write system call on the file is made inside an fwrite, fflush or fclose.
  uint64_t written = 0;
  int writes = 0;
  for (const auto& e : named("POSIX", "write")) {
    if (e["args"].value("fhash", 0ull) != string_hash(out))
      continue;
    ++writes;
    written += e["args"]["ret"].get<uint64_t>();
    ASSERT_TRUE(by_id.count(e["args"]["p_idx"])) << "write without a stdio parent: " << e;
    const auto& parent = by_id[e["args"]["p_idx"]];
    EXPECT_EQ(parent["cat"], "STDIO") << e;
    EXPECT_TRUE(parent["name"] == "fwrite" || parent["name"] == "fflush" || parent["name"] == "fclose")
        << parent;
    EXPECT_EQ(e["args"]["level"], parent["args"]["level"].get<int>() + 1);
    EXPECT_EQ(e["tid"], parent["tid"]);
    EXPECT_GE(e["ts"].get<uint64_t>(), parent["ts"].get<uint64_t>());
    EXPECT_LE(e["ts"].get<uint64_t>() + e["dur"].get<uint64_t>(),
              parent["ts"].get<uint64_t>() + parent["dur"].get<uint64_t>());
  }
  EXPECT_GT(writes, 1);
  EXPECT_EQ(written, (fwrites + 1u) * 3000);

  // The custom function: found by regex, timed, and the fflush it makes nests beneath it.
  auto checkpoints = named("APP", "dc_custom_checkpoint");
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_GE(checkpoints[0]["dur"].get<uint64_t>(), 2000u);
  EXPECT_EQ(checkpoints[0]["args"]["level"], 1);
  auto flushes = named("STDIO", "fflush");
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0]["args"]["p_idx"], checkpoints[0]["id"]);
  EXPECT_EQ(flushes[0]["args"]["level"], 2);

  // dc_custom_escape never returns: no event for it, and the fwrite after it is outermost.
  EXPECT_TRUE(named("APP", "dc_custom_escape").empty());
  EXPECT_EQ(writes_by_app.back()["args"]["level"], 1) << writes_by_app.back();
  EXPECT_EQ(writes_by_app.back()["args"]["p_idx"], -1);
  auto closes = named("STDIO", "fclose");
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0]["args"]["level"], 1);
}

TEST_F(runtime_test, StdioCallsAreExactAndTheirSystemCallsNestBeneathThem)
{
  check_stdio_run(dir, STDIO_APP_BIN);
}

// A kernel without uprobe sessions links each call's entry and return apart: the same calls,
// the same nesting, the same call that never returns (DATACRUMBS_NO_UPROBE_SESSION makes this
// kernel do what such a kernel does).
TEST_F(runtime_test, StdioCallsAreTheSameLinkedAsEntryAndReturn)
{
  struct pairs_only {
    pairs_only() { setenv("DATACRUMBS_NO_UPROBE_SESSION", "1", 1); }
    ~pairs_only() { unsetenv("DATACRUMBS_NO_UPROBE_SESSION"); }
  } scoped;
  check_stdio_run(dir, STDIO_APP_BIN, "entry and return");
}

// The same program linked with -static: libc's stdio is found in the program itself.
TEST_F(runtime_test, StdioCallsOfAProgramThatLinkedLibcInAreTheSame)
{
  check_stdio_run(dir, STDIO_STATIC_APP_BIN);
}

// plugin_app loading `library` with dlopen and calling its dc_plugin_work `calls` times, traced
// with `config_head` and an entry for the plugin library's functions: its PLUGIN events, each
// checked for its name and result.
struct plugin_run {
  traced_run run;
  int seen = 0;
};
plugin_run trace_plugin(const scratch_dir& dir, const std::string& library, const std::string& config_head,
                        int calls)
{
  std::string config = dir / "plugin.yaml";
  std::ofstream(config) << "capture_probes:\n"
                        << config_head
                        << "  - name: PLUGIN\n    probe: uprobe\n    file: " PLUGIN_LIB
                           "\n    regex: \"dc_plugin_.*\"\n";
  plugin_run r{
      trace_command(dir,
                    std::string(PLUGIN_APP_BIN) + " " + shell_quote(library) + " " + std::to_string(calls),
                    "--config " + shell_quote(config)),
      0};
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  for (const auto& e : complete_events(r.run.trace))
    if (e["cat"] == "PLUGIN") {
      EXPECT_EQ(e["name"], "dc_plugin_work");
      EXPECT_EQ(e["args"]["ret"], 2 * r.seen);
      EXPECT_EQ(e["args"]["level"], 1);
      ++r.seen;
    }
  return r;
}

// A library the program loads itself, after it started (dlopen, as MPI and HDF5 load plugins):
// probes are attached to the file, so its calls are seen from the first one.
TEST_F(runtime_test, FunctionsOfALibraryLoadedWithDlopenAreTraced)
{
  EXPECT_EQ(trace_plugin(dir, PLUGIN_LIB, "", 7).seen, 7);
}

// A library the config does not name but that defines the entry's functions (a renamed copy, as
// a site's own build of a library would be), loaded after the program started: the process is
// held at the copy's code mapping while it is searched and linked, so its first call is seen.
// The mapping is seen by the system-call layer (its mmap), which the config therefore has.
TEST_F(runtime_test, AnUnnamedLibraryDefiningTheFunctionsIsProbedFromItsFirstCall)
{
  std::string copy = dir / "libdc_copy.so";
  std::filesystem::copy_file(PLUGIN_LIB, copy);
  auto r = trace_plugin(dir, copy, "  - {name: POSIX, probe: syscalls}\n", 7);
  EXPECT_EQ(r.seen, 7) << r.run.err;
  const auto& found = r.run.summary["uprobes"]["entries"][0]["found_in"];
  EXPECT_NE(found.dump().find(copy), std::string::npos) << found;
  EXPECT_EQ(r.run.summary["events"]["lost"], 0);
}

// USDT probes from a config (`probe: usdt`, provider and regex): every site hit is an instant
// event, and a probe guarded by a semaphore is enabled by the kernel in the traced process only.
TEST_F(runtime_test, UsdtProbesAreEventsAndTheirSemaphoresEnableThem)
{
  constexpr int ticks = 200;
  std::string config = dir / "usdt.yaml", out = dir / "out.txt";
  std::ofstream(config) << "capture_probes:\n  - {name: APP, probe: usdt, file: " USDT_APP_BIN
                           ", provider: dctest, regex: \".*\"}\n";
  auto run =
      trace_command(dir, std::string(USDT_APP_BIN) + " " + std::to_string(ticks) + " > " + shell_quote(out),
                    "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_file(out), "enabled=" + std::to_string(ticks) + "\n") << "the semaphore was counted up";
  std::map<std::string, int> hits;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "APP") {
      ++hits[e["name"].get<std::string>()];
      EXPECT_EQ(e["dur"], 0);
      EXPECT_FALSE(e["args"].contains("ret"));
    }
  EXPECT_EQ(hits["dctest:tick"], ticks);
  EXPECT_EQ(hits["dctest:done"], 1);
  // Outside the trace, nobody counts the semaphore up: the program skips its probes.
  ASSERT_EQ(run_shell(std::string(USDT_APP_BIN) + " 3 > " + shell_quote(out)), 0);
  EXPECT_EQ(read_file(out), "enabled=0\n");
}

// A function whose first instruction the kernel cannot probe (here libc's pthread_spin_lock,
// refused with ENOTSUPP) is found, reported and skipped; the rest of its binary is probed.
TEST_F(runtime_test, AFunctionTheKernelCannotProbeIsSkippedNotFatal)
{
  std::string config = dir / "spin.yaml";
  std::ofstream(config) << "capture_probes:\n  - {name: LIBC, probe: uprobe, file: libc.so.6, regex: "
                           "\"pthread_spin_.*|fflush\"}\n";
  auto run = trace_command(dir, "sh -c 'echo x'", "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto& u = run.summary["uprobes"];
  ASSERT_EQ(u["refused"].size(), 1u) << u;
  EXPECT_TRUE(u["refused"][0].get<std::string>().starts_with("pthread_spin_lock ")) << u;
  EXPECT_GE(u["functions"].get<int>(), 4) << u;  // fflush and the other pthread_spin_ calls
  EXPECT_NE(run.err.find("cannot probe are skipped"), std::string::npos) << run.err;
}

// The kB of libc's code mapping that are private copies in process `pid`: the pages the kernel
// wrote breakpoints into (an unprobed mapping has none). -1 when libc is not mapped.
long probed_libc_kb(const std::string& smaps)
{
  std::istringstream in(smaps);
  bool in_libc_code = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find('-') != std::string::npos && line.find(" r-xp ") != std::string::npos)
      in_libc_code = line.find("/libc.so.6") != std::string::npos;
    else if (in_libc_code && line.starts_with("Anonymous:"))
      return std::stol(line.substr(10));
  }
  return -1;
}

// User-space probes are attached per traced process: a process outside the trace that maps the
// same library gets no breakpoint, and a child forked inside the trace is held until its probes
// are attached, so its calls are all counted from its first one.
TEST_F(runtime_test, OnlyTracedProcessesGetBreakpointsAndForkedChildrenFromTheirFirstCall)
{
  std::string config = dir / "probes.yaml", out = dir / "out.txt";
  std::ofstream(config)
      << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n  - include: " DATACRUMBS_SOURCE_DIR
         "/etc/datacrumbs/configs/stdio.yaml\n";
  pid_t outsider = fork();
  if (outsider == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string traced_smaps = dir / "traced.smaps", outsider_smaps = dir / "outsider.smaps";
  auto run = trace_command(
      dir,
      "sh -c " +
          shell_quote(std::string(STDIO_APP_BIN) + " " + shell_quote(out) + " " + std::to_string(fwrites) +
                      " & wait; cat /proc/self/smaps > " + shell_quote(traced_smaps) + "; cat /proc/" +
                      std::to_string(outsider) + "/smaps > " + shell_quote(outsider_smaps)),
      "--config " + shell_quote(config));
  kill(outsider, SIGKILL);
  waitpid(outsider, nullptr, 0);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0) << run.summary["events"];
  EXPECT_GT(probed_libc_kb(read_file(traced_smaps)), 0) << "a traced process has its breakpoints";
  EXPECT_EQ(probed_libc_kb(read_file(outsider_smaps)), 0) << "a process outside the trace has none";
  // stdio_app, forked by sh: every fwrite from its first, then one after its longjmp.
  uint32_t app = 0;
  int writes = 0;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "STDIO" && e["name"] == "fwrite") {
      ++writes;
      app = e["pid"];
    }
  EXPECT_EQ(writes, fwrites + 1);
  EXPECT_NE(app, 0u);
  EXPECT_NE(run.summary["processes"][std::to_string(app)]["parent"], 0);
}

// An entry found in none of many processes (MPI in a shell loop of 12 programs): the summary's
// line names the first ten and counts the rest, the JSON names every one.
TEST_F(runtime_test, AnEntryFoundInNoneOfManyProcessesNamesTenAndCountsTheRest)
{
  std::string config = dir / "probes.yaml";
  std::ofstream(config)
      << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n  - include: " DATACRUMBS_SOURCE_DIR
         "/etc/datacrumbs/configs/mpi.yaml\n";
  auto run =
      trace_command(dir, "sh -c " + shell_quote("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do /bin/true; done"),
                    "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json* mpi = nullptr;
  for (const auto& e : run.summary["uprobes"]["entries"])
    if (e["name"] == "MPI")
      mpi = &e;
  ASSERT_NE(mpi, nullptr) << run.summary["uprobes"];
  EXPECT_EQ((*mpi)["nothing_in"].size(), 13u) << *mpi;  // sh and its 12 programs
  std::string line;
  std::istringstream err(run.err);
  for (std::string l; std::getline(err, l);)
    if (l.starts_with("  no function of it found or called in "))
      line = l;
  EXPECT_TRUE(line.starts_with("  no function of it found or called in 13 processes:")) << run.err;
  EXPECT_TRUE(line.ends_with(" and 3 more (all in the --summary JSON's uprobes.entries)")) << line;
  EXPECT_EQ(std::ranges::count(line, '('), 11) << line;  // ten named, and the closing remark
}

}  // namespace
}  // namespace dc::test
