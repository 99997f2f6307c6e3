// SLURM Prolog faults (the Prolog and Epilog run directly, for job ids SLURM never handed out,
// on the real cluster of slurm_fixture.h): two prologs at once, a daemon stuck at the Epilog,
// a node where BPF cannot be loaded.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "runtime/process_tree.h"
#include "runtime/slurm_fixture.h"

namespace dc::test {
namespace {

// The Prolog and Epilog run directly for job ids SLURM never handed out (as slurmd runs them:
// root, a bare environment), through a symlink.
struct slurm_prolog_test : slurm_test {
  std::string run_dir() const { return cluster->run; }
  std::string file(int job, const std::string& suffix) const
  {
    return cluster->run + "/datacrumbs-" + std::to_string(job) + suffix;
  }
  std::string script(const std::string& which)
  {
    std::string link = cluster->dir / ("links/" + which);
    std::filesystem::create_directories(cluster->dir / "links");
    if (!std::filesystem::exists(link))
      std::filesystem::create_symlink(cluster->prefix + "/libexec/datacrumbs/datacrumbs-slurm-" + which,
                                      link);
    return link;
  }
  std::string env(int job, uid_t uid, const std::string& probe_file, const std::string& extra = "") const
  {
    return "env -i PATH=/usr/bin:/bin SLURM_JOB_ID=" + std::to_string(job) +
           " SLURM_JOB_UID=" + std::to_string(uid) +
           " SLURM_JOB_COMMENT=" + shell_quote(request(probe_file)) + " " + extra + " ";
  }
  // Daemons for this job id: datacrumbs processes whose arguments end in it.
  static std::vector<pid_t> daemons_of(int job)
  {
    return processes_where([job](const std::string& cmd) {
      return cmd.find("/bin/datacrumbs") != std::string::npos &&
             cmd.ends_with(std::string(1, '\0') + std::to_string(job) + std::string(1, '\0'));
    });
  }
};

// A second Prolog while the first one's daemon is still starting (held stopped here, so it
// cannot become ready) waits for it instead of starting another; an Epilog whose daemon does
// not finish within DATACRUMBS_STOP_TIMEOUT kills it, says so, and leaves no process.
TEST_F(slurm_prolog_test, ConcurrentProloguesStartOneDaemonAndAStuckDaemonIsKilledAtTheEpilog)
{
  const int job = 990001;
  std::string prolog = env(job, cluster->uid, cluster->probes) + script("prolog");
  int first_rc = -1, second_rc = -1;
  std::jthread first([&] { first_rc = run_shell(prolog + " 2>" + cluster->dir / "p1.err"); });
  std::string pid_text;
  for (int i = 0; i < 300 && pid_text.empty(); ++i) {
    usleep(10000);
    pid_text = read_file(file(job, ".pid"));
  }
  ASSERT_FALSE(pid_text.empty());
  pid_t daemon = std::stoi(pid_text);
  // The pid is written as soon as the shell has forked: stopped before its exec, the child
  // would not yet be the daemon this test counts.
  for (int i = 0; i < 300 && daemons_of(job) != std::vector<pid_t>{daemon}; ++i) usleep(1000);
  kill(daemon, SIGSTOP);
  bool ready_before = std::filesystem::exists(file(job, ".ready"));
  std::jthread second([&] { second_rc = run_shell(prolog + " 2>" + cluster->dir / "p2.err"); });
  sleep(2);
  EXPECT_EQ(daemons_of(job).size(), 1u) << "the second prolog started a daemon of its own";
  kill(daemon, SIGCONT);
  first.join();
  second.join();
  EXPECT_FALSE(ready_before) << "the daemon was ready before the second prolog: the race was not exercised";
  EXPECT_EQ(first_rc, 0) << read_file(cluster->dir / "p1.err");
  EXPECT_EQ(second_rc, 0) << read_file(cluster->dir / "p2.err");
  EXPECT_EQ(daemons_of(job), std::vector<pid_t>{daemon});
  EXPECT_EQ(read_file(file(job, ".pid")), pid_text);
  ASSERT_TRUE(std::filesystem::exists(file(job, ".ready"))) << read_file(file(job, ".off"));
  std::string trace = nlohmann::json::parse(read_file(file(job, ".ready")))["trace"];

  // Stuck: stopped, it cannot act on SIGTERM.
  kill(daemon, SIGSTOP);
  auto start = std::chrono::steady_clock::now();
  std::string epilog_err = cluster->dir / "epilog.err";
  EXPECT_EQ(run_shell(env(job, cluster->uid, cluster->probes, "DATACRUMBS_STOP_TIMEOUT=1") +
                      script("epilog") + " 2>" + epilog_err),
            0);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 15.0);
  EXPECT_TRUE(daemons_of(job).empty()) << "a daemon was left running";
  std::string said = "datacrumbs: job " + std::to_string(job) + " on " + short_host_name() +
                     ": the daemon (pid " + pid_text.substr(0, pid_text.find('\n')) +
                     ") had not finished the trace after 1 s: killed; the trace " + trace + " is cut short\n";
  EXPECT_EQ(read_file(epilog_err), said);
  EXPECT_EQ(read_file(trace + ".incomplete"), said);
  for (const char* suffix : {".pid", ".ready", ".probes.json.gz", ".lock", ".off"})
    EXPECT_FALSE(std::filesystem::exists(file(job, suffix))) << suffix;
  std::filesystem::remove(trace);
  std::filesystem::remove(trace + ".incomplete");
}

// A node where BPF cannot be loaded: the Prolog runs in a user namespace (every uid mapped, so
// the job's user and files are as outside, but no capability over the kernel, as in a
// user-namespaced container). The real daemon fails to load its BPF programs; the Prolog exits
// 0 (no drained node), starts nothing, and the reason names BPF.
TEST_F(slurm_prolog_test, ANodeWithoutBpfRunsTheJobUntracedAndSaysBpfIsWhy)
{
  const int job = 990002;
  std::string in_userns = cluster->dir / "in_userns.sh";
  std::ofstream(in_userns)
      << "#!/bin/sh\n"
         "# Runs \"$@\" in a new user namespace whose maps this (root) shell writes.\n"
         "unshare --user sh -c 'until grep -q . /proc/self/uid_map; do sleep 0.02; done; exec \"$@\"' "
         "sh \"$@\" &\n"
         "child=$!\n"
         "until [ \"$(readlink /proc/$child/ns/user)\" != \"$(readlink /proc/self/ns/user)\" ]; do sleep "
         "0.02; done\n"
         "echo '0 0 4294967295' >/proc/$child/gid_map && echo '0 0 4294967295' >/proc/$child/uid_map\n"
         "wait $child\n";
  chmod(in_userns.c_str(), 0755);
  std::string err = cluster->dir / "nobpf.err";
  EXPECT_EQ(
      run_shell(in_userns + " " + env(job, cluster->uid, cluster->probes) + script("prolog") + " 2>" + err),
      0)
      << read_file(err);
  EXPECT_EQ(read_file(file(job, ".off")),
            "datacrumbs: tracing is off for job " + std::to_string(job) + " on " + short_host_name() +
                ": the daemon refused: cannot load the BPF programs: Operation not permitted\n")
      << read_file(err);
  EXPECT_TRUE(daemons_of(job).empty());
  EXPECT_FALSE(std::filesystem::exists(file(job, ".pid")));
  EXPECT_EQ(run_shell(env(job, cluster->uid, cluster->probes) + script("epilog")), 0);
  EXPECT_FALSE(std::filesystem::exists(file(job, ".off")));
  expect_node_idle();
}

}  // namespace
}  // namespace dc::test
