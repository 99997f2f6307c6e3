// Ground truth #1: strace -f -c counts every system call of a pipeline of real tools. Ours must
// count each traced call exactly the same, successful or failed.
#include <map>

#include "runtime/runtime_helpers.h"
#include "runtime/strace_counts.h"

namespace dc::test {
namespace {

struct pipeline : runtime_test {
  // The same script in a fresh directory per run: tools like cp and mv make different calls
  // when their targets already exist.
  std::string script_in(const std::string& name)
  {
    std::string d = dir / name;
    EXPECT_EQ(run_shell("mkdir " + shell_quote(d) + " && seq 1 200000 > " + shell_quote(d + "/numbers.txt")),
              0);
    return "sh -c " + shell_quote("cd " + shell_quote(d) + script);
  }
  std::string script;
  void SetUp() override
  {
    runtime_test::SetUp();
    // Real tools, one after another; the one pipe carries a single small write so that read
    // counts do not depend on scheduling (a pipe read returns whatever has arrived so far).
    script =
        " && cat numbers.txt > copy.txt && grep -c 7 copy.txt > sevens.txt"
        " && sort --parallel=1 -r numbers.txt > sorted.txt && head -n 3 sorted.txt > top.txt"
        " && cp numbers.txt copy2.txt && wc -l copy2.txt > /dev/null && tail -c 100 copy2.txt > /dev/null"
        " && mkdir -p d/e && mv copy.txt d/e/moved.txt && ls -la d/e > /dev/null"
        " && echo one-line | tr a-z A-Z > upper.txt"
        " && dd if=numbers.txt of=dd.out bs=4096 count=20 2>/dev/null"
        " && stat missing.txt 2>/dev/null; rm -r d; cat sevens.txt top.txt > /dev/null";
  }
  // Runs the script under strace and under the tool (with tool_args); per-syscall counts must
  // be equal. Returns the tool's run.
  traced_run expect_counts_equal_strace(const std::string& tool_args);
};

traced_run pipeline::expect_counts_equal_strace(const std::string& tool_args)
{
  std::string strace_out = dir / "strace.txt";
  EXPECT_EQ(run_shell("strace -f -c -o " + shell_quote(strace_out) + " -- " + script_in("strace-run") +
                      " >/dev/null 2>&1"),
            0);
  auto truth = strace_counts(strace_out);
  EXPECT_GT(truth["openat"], 10u);

  auto run = trace_command(dir, script_in("traced-run"), tool_args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_GE(expect_counts_equal(truth, run.summary["layers"]["POSIX"]), 15);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  return run;
}

TEST_F(pipeline, PerSyscallCountsEqualStrace)
{
  auto run = expect_counts_equal_strace("");
  // The trace holds exactly the events the summary counts.
  std::map<std::string, uint64_t> in_trace;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX")
      ++in_trace[e["name"].get<std::string>()];
  for (const auto& [name, stats] : run.summary["layers"]["POSIX"].items())
    EXPECT_EQ(in_trace[name], stats["count"].get<uint64_t>()) << name;
}

// Profile mode: the kernel's per-interval counters add up to strace's counts, and the trace's
// "ph":"C" samples to the summary, with no per-call event in the trace.
TEST_F(pipeline, ProfileCountersEqualStrace)
{
  auto run = expect_counts_equal_strace("--mode profile --interval-ms 20");
  EXPECT_EQ(run.summary["mode"], "profile");
  std::map<std::string, uint64_t> in_trace;
  for (const auto& e : run.trace.lines)
    if (e["ph"] == "C" && e["cat"] == "POSIX")
      in_trace[e["name"].get<std::string>()] += e["args"]["count"].get<uint64_t>();
  for (const auto& [name, stats] : run.summary["layers"]["POSIX"].items())
    EXPECT_EQ(in_trace[name], stats["count"].get<uint64_t>()) << name;
  EXPECT_TRUE(complete_events(run.trace).empty());
}

}  // namespace
}  // namespace dc::test
