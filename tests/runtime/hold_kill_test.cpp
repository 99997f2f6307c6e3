// The tracer or the daemon killed with SIGKILL while it holds new processes (stopped until their
// user-space probes attach): no traced process is left stopped. The kernel side continues every
// held process when the holder dies (bpf/process.bpf.c, dc_holder_died). Killed at the worst
// moments, many times: while a process is seen stopped, a few milliseconds later, and at random
// times from the start. Figures: docs/reliability.md.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <utility>

#include "runtime/deploy_fixture.h"
#include "runtime/process_tree.h"

namespace dc::test {
namespace {

// Syscalls and one libc function: every new process is held, and the tool starts quickly.
constexpr const char* holding_config =
    "capture_probes:\n"
    "  - name: POSIX\n"
    "    probe: syscalls\n"
    "  - name: STDIO\n"
    "    probe: uprobe\n"
    "    file: libc.so.6\n"
    "    regex: \"^fwrite$\"\n";

int iterations(int ci_default)
{
  const char* n = std::getenv("DC_HOLD_KILL_ITERATIONS");
  return n && std::atoi(n) > 0 ? std::atoi(n) : ci_default;
}

// A shell that forks /bin/true as fast as it can while `flag` exists; it writes its pid first.
std::string fork_loop(const std::string& flag, const std::string& pid_file)
{
  return "echo $$ > " + shell_quote(pid_file) + "; while [ -e " + shell_quote(flag) +
         " ]; do /bin/true; done";
}

struct kill_figures {
  int iterations = 0, killed_while_held = 0, left_stopped = 0;
};

// One kill: `holder` (the tool's pid) is killed at the moment `mode` picks; then every process of
// the workload rooted at the pid in `pid_file` must leave the stopped state within 5 s.
void kill_once(pid_t holder, const std::string& pid_file, int mode, std::mt19937& rng, kill_figures& fig)
{
  using clock = std::chrono::steady_clock;
  pid_t root = 0;
  auto give_up = clock::now() + std::chrono::seconds(30);
  bool held_seen = false;
  if (mode == 2) {  // any time from the start, before or while the probes attach
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<>(0, 400)(rng)));
  } else {
    // Until a process of the workload is seen held (stopped by the kernel side).
    while (clock::now() < give_up && !held_seen) {
      if (!root)
        root = std::atoi(read_file(pid_file).c_str());
      if (root)
        held_seen = !stopped_in_tree(root).empty();
      if (!held_seen)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ASSERT_TRUE(held_seen) << "no process of the workload was ever held";
    if (mode == 1)
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<>(0, 20000)(rng)));
  }
  ASSERT_EQ(kill(holder, SIGKILL), 0);
  if (!root) {
    for (int i = 0; i < 100 && !root; ++i) {
      root = std::atoi(read_file(pid_file).c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ++fig.iterations;
  fig.killed_while_held += held_seen;
  if (!root)
    return;  // killed before the command ran: nothing of it exists
  std::vector<std::string> stopped;
  for (auto deadline = clock::now() + std::chrono::seconds(5); clock::now() < deadline;) {
    stopped = stopped_in_tree(root);
    if (stopped.empty())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!stopped.empty()) {
    ++fig.left_stopped;
    ADD_FAILURE() << "mode " << mode
                  << ": still stopped 5 s after the holder was killed: " << stopped.front();
  }
}

void report(const char* what, const kill_figures& fig)
{
  std::printf("figure: %s: %d SIGKILLs, %d while a process was held, %d processes left stopped\n", what,
              fig.iterations, fig.killed_while_held, fig.left_stopped);
}

TEST_F(runtime_test, SigkilledTracerNeverLeavesAHeldProcessStopped)
{
  std::string config = dir / "holding.yaml", flag = dir / "flag", pid_file = dir / "root.pid";
  std::ofstream(config) << holding_config;
  std::mt19937 rng(12345);
  kill_figures fig;
  int n = iterations(30);
  std::vector<pid_t> dying;
  for (int i = 0; i < n && !HasFailure(); ++i) {
    std::ofstream(flag) << "";
    std::filesystem::remove(pid_file);
    std::string trace = dir / "trace.pfw.gz", loop = fork_loop(flag, pid_file);
    pid_t tool = fork();
    if (tool == 0) {
      int null = ::open("/dev/null", O_WRONLY);
      dup2(null, 2);
      execl(DATACRUMBS_BIN, DATACRUMBS_BIN, "run", "--config", config.c_str(), "-o", trace.c_str(), "--",
            "sh", "-c", loop.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    kill_once(tool, pid_file, i % 3, rng, fig);
    std::filesystem::remove(flag);
    if (pid_t root = std::atoi(read_file(pid_file).c_str()); root > 0)
      kill_tree(root);
    // A killed tool takes a while to go (each of its uprobe links waits for an RCU grace period
    // as it closes): a few die side by side while the next ones run.
    dying.push_back(tool);
    if (dying.size() > 3) {
      waitpid(dying.front(), nullptr, 0);
      dying.erase(dying.begin());
    }
  }
  for (pid_t t : dying) waitpid(t, nullptr, 0);
  report("tracer SIGKILL", fig);
  EXPECT_EQ(fig.left_stopped, 0);
  EXPECT_GT(fig.killed_while_held, n / 2) << "too few kills landed while a process was held";
}

// The command is forked, paused before its exec, before the tool loads its object (~100 ms):
// killed then, the tool takes the command with it, which never runs untraced.
TEST_F(runtime_test, TheCommandOfATracerSigkilledWhileItLoadsNeverRuns)
{
  std::string trace = dir / "trace.pfw.gz", ran = dir / "ran";
  pid_t tool = fork();
  if (tool == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 2);
    // No kept object: the load is the tool's own, long enough to be killed in.
    execl(DATACRUMBS_BIN, DATACRUMBS_BIN, "run", "--keep-loaded", "0", "-o", trace.c_str(), "--", "touch",
          ran.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // The command before its exec: a copy of the tool, with the tool's arguments.
  std::vector<pid_t> command;
  for (int i = 0; i < 5000 && command.empty(); ++i) {
    command = processes_with_argument(ran);
    std::erase(command, tool);
    if (command.empty())
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(kill(tool, SIGKILL), 0);
  waitpid(tool, nullptr, 0);
  ASSERT_EQ(command.size(), 1u) << "the tool forked no command within a second";
  for (int i = 0; i < 100 && process_state(command[0]) != 0 && process_state(command[0]) != 'Z'; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(process_state(command[0]) == 0 || process_state(command[0]) == 'Z') << "the command lingers";
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the command ran after its tool was killed";
}

// The daemon: registering processes (held by the beacon) and their forks.
TEST_F(deploy_test, SigkilledDaemonNeverLeavesAHeldProcessStopped)
{
  std::string holding = signed_probe_file("holding", holding_config);
  std::string flag = dir / "flag", pid_file = dir / "root.pid";
  std::mt19937 rng(54321);
  kill_figures fig;
  int n = iterations(30) / 3;
  std::vector<pid_t> dying;
  for (int i = 0; i < n && !HasFailure(); ++i) {
    std::string run_id = "kill" + std::to_string(i);
    auto info = start_daemon(holding, run_id);
    ASSERT_FALSE(info.is_null());
    std::ofstream(flag) << "";
    std::filesystem::remove(pid_file);
    ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap sh -c " + shell_quote(fork_loop(flag, pid_file)) +
                        " >/dev/null 2>&1 &"),
              0);
    kill_once(daemon, pid_file, i % 2, rng, fig);
    std::filesystem::remove(flag);
    if (pid_t root = std::atoi(read_file(pid_file).c_str()); root > 0)
      kill_tree(root);
    dying.push_back(std::exchange(daemon, 0));  // not ours to reap: its starting shell is gone
  }
  report("daemon SIGKILL", fig);
  EXPECT_EQ(fig.left_stopped, 0);
  for (pid_t d : dying)
    for (int i = 0; i < 600 && process_state(d) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (pid_t d : dying) EXPECT_EQ(process_state(d), 0) << "daemon " << d << " survived SIGKILL for 60 s";
}

}  // namespace
}  // namespace dc::test
