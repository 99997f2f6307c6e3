// SLURM end to end on a real one-node cluster (slurm_fixture.h): jobs of a real unprivileged user
// ask for tracing through their comment or the SPANK option, the Prolog starts the daemon, the
// SPANK plugin (or `srun datacrumbs_wrap`) preloads the client library into the tasks, the
// Epilog finishes the trace. Ground truth: each of the job's two tasks runs dd under
// `strace -f` inside the job; the trace holds, for each task's process, exactly strace's count
// of every traced system call (reads and writes included), and labels it with its rank
// (SLURM_PROCID). One trace per traced job, named by job id and host, owned by the user; jobs
// that did not ask, or asked with a bad probe file, run untraced and say why.
#include "runtime/slurm_fixture.h"

namespace dc::test {
namespace {

TEST_F(slurm_test, AJobWhoseCommentAsksIsTracedExactlyAndOnlyIt)
{
  auto before = cluster->trace_files();
  auto plain = cluster->submit("plain", "", two_task_script());
  expect_untraced(plain, "");
  auto traced = cluster->submit("traced", comment(cluster->probes), two_task_script());
  expect_traced(traced);
  auto after = cluster->trace_files();
  EXPECT_EQ(after.size(), before.size() + 1) << "a daemon ran for another job";
  EXPECT_TRUE(after.contains(cluster->trace_of(traced)));
  expect_node_idle();
}

TEST_F(slurm_test, TheSpankOptionAsksWithoutJsonAndNoOverridesTheComment)
{
  auto by_option = cluster->submit("option", "--datacrumbs-probe-file=" + cluster->probes, two_task_script());
  expect_traced(by_option);
  auto refused = cluster->submit("refused", comment(cluster->probes) + " --datacrumbs=no", two_task_script());
  expect_untraced(refused, "");
}

TEST_F(slurm_test, BadRequestsRunUntracedAndSayWhy)
{
  std::string tampered = cluster->jobs + "/tampered.json.gz", foreign = cluster->jobs + "/root.json.gz";
  // One byte of the signed content changed (after the gzip header): the signature fails.
  ASSERT_EQ(run_shell("cp " + cluster->probes + " " + tampered + " && printf 'X' | dd of=" + tampered +
                      " bs=1 seek=40 conv=notrunc status=none && chown " + user + " " + tampered),
            0);
  // Signed by root for root: readable by the user, but not the user's.
  ASSERT_EQ(run_shell("DATACRUMBS_SECRET_FILE=" + cluster->dir / "secret/key " + cluster->prefix +
                      "/bin/datacrumbs_probe_configurator --user root " + cluster->dir / "probes.yaml " +
                      foreign + " 2>/dev/null && chmod 0644 " + foreign),
            0);
  expect_untraced(cluster->submit("missing", comment(cluster->jobs + "/none.json.gz"), two_task_script()),
                  "dcslurm cannot read the probe file " + cluster->jobs + "/none.json.gz");
  expect_untraced(cluster->submit("tampered", comment(tampered), two_task_script()),
                  "the daemon refused: refusing '" + tampered + "': ");
  expect_untraced(cluster->submit("foreign", comment(foreign), two_task_script()),
                  "the daemon refused: refusing '" + foreign + "': signed for uid 0, not the job's uid " +
                      std::to_string(cluster->uid) + "\n");
  expect_untraced(
      cluster->submit("badjson", "--comment '{\"datacrumbs\":{\"enable\":\"yes\"'", two_task_script()),
      "job comment: the job metadata mentions datacrumbs but is not valid JSON");
}

// scancel while the job runs: the Epilog still finishes the trace. A second Prolog for a job
// whose daemon is ready starts nothing.
TEST_F(slurm_test, ACancelledJobStillGetsAFinishedTraceAndASecondPrologStartsNothing)
{
  std::string started = cluster->jobs + "/started";
  std::string script = two_task_script() + "touch " + started + "\nsleep 300\n";
  std::string script_path = cluster->jobs + "/cancelled.sh", id_path = cluster->dir / "cancelled.id";
  std::ofstream(script_path) << "#!/bin/sh\n" << script;
  chmod(script_path.c_str(), 0755);
  ASSERT_EQ(run_shell(cluster->as_user("sbatch --parsable -n 2 -o " + cluster->jobs + "/cancelled.out " +
                                       comment(cluster->probes) + " " + script_path + " >" + id_path)),
            0);
  std::time_t submitted = std::time(nullptr);
  int job = std::atoi(read_file(id_path).c_str());
  for (int i = 0; i < 1200 && !std::filesystem::exists(started); ++i) usleep(100000);
  ASSERT_TRUE(std::filesystem::exists(started)) << read_file(cluster->jobs + "/cancelled.out");
  std::string pid_file = cluster->run + "/datacrumbs-" + std::to_string(job) + ".pid";
  std::string first_pid = read_file(pid_file);
  ASSERT_FALSE(first_pid.empty());
  ASSERT_EQ(run_shell("env -i PATH=/usr/bin:/bin SLURM_JOB_ID=" + std::to_string(job) +
                      " SLURM_JOB_UID=" + std::to_string(cluster->uid) +
                      " SLURM_JOB_COMMENT=" + shell_quote(request(cluster->probes)) + " " + cluster->prefix +
                      "/libexec/datacrumbs/datacrumbs-slurm-prolog"),
            0);
  EXPECT_EQ(read_file(pid_file), first_pid) << "a second prolog started another daemon";
  EXPECT_FALSE(std::filesystem::exists(cluster->run + "/datacrumbs-" + std::to_string(job) + ".off"))
      << read_file(cluster->run + "/datacrumbs-" + std::to_string(job) + ".off");
  ASSERT_EQ(run_shell(cluster->as_user("scancel " + std::to_string(job))), 0);
  slurm_cluster::job j;
  j.id = job;
  j.exit_status = 0;
  j.submitted = submitted;
  for (int i = 0; i < 600; ++i) {
    std::string queued = cluster->dir / "queue.txt";
    run_shell(cluster->as_user("squeue -h -j " + std::to_string(job) + " >" + queued + " 2>/dev/null"));
    if (read_file(queued).empty())
      break;
    usleep(100000);
  }
  j.output = read_file(cluster->jobs + "/cancelled.out");
  expect_traced(j);
}

// A daemon that is not ready within DATACRUMBS_READY_TIMEOUT is stopped; the job runs untraced.
TEST_F(slurm_test, ADaemonNotReadyInTimeLeavesTheJobUntracedAndSaysSo)
{
  std::string env_file = cluster->prefix + "/etc/datacrumbs/scheduler.env";
  std::string settings = read_file(env_file);
  std::ofstream(env_file) << settings << "DATACRUMBS_READY_TIMEOUT=0\n";
  auto j = cluster->submit("slow", comment(cluster->probes), two_task_script());
  std::ofstream(env_file) << settings;
  EXPECT_EQ(j.exit_status, 0) << j.output;
  EXPECT_NE(j.output.find("datacrumbs: tracing is off for job " + std::to_string(j.id) + " on " +
                          short_host_name() + ": the daemon was not ready after 0 s"),
            std::string::npos)
      << j.output;
  EXPECT_NE(j.output.find("task 0 preload=\n"), std::string::npos) << "preloaded untraced: " << j.output;
  expect_no_daemon_left(j.id);
  expect_node_idle();
  // Stopped by SIGTERM, the daemon may still finish a trace; it holds nothing of the job.
  if (std::string trace = cluster->trace_of(j); std::filesystem::exists(trace)) {
    for (const auto& e : complete_events(parse_trace_text(read_gzip_members(trace).text)))
      EXPECT_NE(e["args"].value("fhash", 0ull), string_hash(out_file(j.id, 0))) << e;
  }
}

// `srun datacrumbs_wrap ./app` on a cluster without the SPANK plugin (its plugstack include
// removed for this job: slurmstepd reads plugstack.conf per step): the Prolog still starts the
// daemon for the job's comment, and the wrapper alone puts the client library in the tasks.
TEST_F(slurm_test, SrunDatacrumbsWrapTracesTheTasksWithoutThePlugin)
{
  std::string plugstack = cluster->cluster + "/plugstack.conf";
  std::string with_plugin = read_file(plugstack);
  std::ofstream(plugstack) << "# no plugins for this job\n";
  auto j = cluster->submit("wrapped", comment(cluster->probes),
                           two_task_script(cluster->prefix + "/bin/datacrumbs_wrap "));
  std::ofstream(plugstack) << with_plugin;
  expect_traced(j);
  EXPECT_NE(j.output.find("task 1 preload=" + cluster->prefix + "/lib/libdatacrumbs_client.so\n"),
            std::string::npos)
      << "the wrapper alone preloads: " << j.output;
}

}  // namespace
}  // namespace dc::test
