// SLURM end to end on a real one-node cluster (munged, slurmctld, slurmd on localhost, started
// by tests/runtime/slurm/slurm_cluster.sh with DataCrumbs installed into a scratch prefix): jobs
// of a real unprivileged user ask for tracing through their comment or the SPANK option, the
// Prolog starts the daemon, the SPANK plugin preloads the client library into the tasks, the
// Epilog finishes the trace. Checked against what the job's two tasks did: the exact writes and
// reads of each task, one trace per traced job named by job id and host and owned by the user;
// jobs that did not ask, or asked with a bad probe file, run untraced and say why.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/hash.h"
#include "deploy/trace_name.h"
#include "runtime/runtime_helpers.h"
#include "runtime/scheduler_checks.h"

namespace dc::test {
namespace {

const std::string user = "dcslurm";

struct slurm_cluster {
  scratch_dir dir;
  std::string prefix = dir / "prefix", cluster = dir / "slurm", jobs = dir / "jobs", traces = dir / "traces",
              run = dir / "run", probes = dir / "jobs/probes.json.gz";
  uid_t uid = 0;
  gid_t gid = 0;
  bool up = false;
  std::string why_not_up;

  slurm_cluster()
  {
    if (run_shell("id -u " + user + " >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh " +
                  user) != 0) {
      why_not_up = "cannot create user " + user;
      return;
    }
    passwd* pw = getpwnam(user.c_str());
    uid = pw->pw_uid;
    gid = pw->pw_gid;
    chmod(dir.path.c_str(), 0755);
    std::filesystem::create_directories(jobs);
    std::filesystem::create_directories(dir / "prefix/etc/datacrumbs");
    chown(jobs.c_str(), uid, gid);
    std::ofstream(dir / "prefix/etc/datacrumbs/scheduler.env")
        << "DATACRUMBS_RUN_DIR=" << run << "\nDATACRUMBS_TRACE_DIR=" << traces
        << "\nDATACRUMBS_SECRET_FILE=" << dir / "secret/key"
        << "\nDATACRUMBS_READY_TIMEOUT=60\n";
    if (run_shell("DATACRUMBS_RUN_DIR=" + run + " cmake --install " DATACRUMBS_BUILD_DIR " --prefix " +
                  prefix + " >" + dir / "install.log 2>&1") != 0) {
      why_not_up = "cmake --install failed: " + read_file(dir / "install.log");
      return;
    }
    // The user's own signed probe file: its syscalls.
    std::ofstream(dir / "probes.yaml") << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n";
    if (run_shell("DATACRUMBS_SECRET_FILE=" + dir / "secret/key " + prefix +
                  "/bin/datacrumbs_probe_configurator --user " + user + " " + dir / "probes.yaml " + probes +
                  " 2>" + dir / "sign.err") != 0) {
      why_not_up = "signing failed: " + read_file(dir / "sign.err");
      return;
    }
    chown(probes.c_str(), uid, gid);
    chmod(probes.c_str(), 0600);
    if (run_shell(std::string(DATACRUMBS_SOURCE_DIR) + "/tests/runtime/slurm/slurm_cluster.sh start " +
                  cluster + " " + prefix + " 2>" + dir / "cluster.err") != 0) {
      why_not_up = read_file(dir / "cluster.err");
      return;
    }
    up = true;
  }
  ~slurm_cluster()
  {
    run_shell(std::string(DATACRUMBS_SOURCE_DIR) + "/tests/runtime/slurm/slurm_cluster.sh stop " + cluster);
  }

  // A command line run as the test user, with the cluster's config.
  std::string as_user(const std::string& command) const
  {
    return "cd " + jobs + " && setpriv --reuid=" + std::to_string(uid) + " --regid=" + std::to_string(gid) +
           " --init-groups env SLURM_CONF=" + cluster + "/slurm.conf " + command;
  }

  struct job {
    int id = 0, exit_status = -1;
    std::string output;
  };
  // sbatch --wait as the user; returns once the job has left the queue (its Epilog is done).
  job submit(const std::string& name, const std::string& sbatch_args, const std::string& script)
  {
    std::string script_path = jobs + "/" + name + ".sh", id_path = dir / (name + ".id");
    std::ofstream(script_path) << "#!/bin/sh\n" << script;
    chmod(script_path.c_str(), 0755);
    job j;
    j.exit_status = run_shell(as_user("timeout 180 sbatch --parsable --wait -n 2 -o " + jobs + "/" + name +
                                      ".out " + sbatch_args + " " + script_path + " >" + id_path));
    j.id = std::atoi(read_file(id_path).c_str());
    for (int i = 0; i < 600 && j.id > 0; ++i) {
      std::string queued = dir / "queue.txt";
      run_shell(as_user("squeue -h -j " + std::to_string(j.id) + " >" + queued + " 2>/dev/null"));
      if (read_file(queued).empty())
        break;
      usleep(100000);
    }
    j.output = read_file(jobs + "/" + name + ".out");
    return j;
  }

  std::string trace_of(int job_id) const
  {
    auto name = expand_trace_pattern(default_trace_pattern,
                                     {std::to_string(job_id), short_host_name(), user, std::time(nullptr)});
    return traces + "/" + name.value_or("?");
  }
  // Every trace file the daemons wrote.
  std::set<std::string> trace_files() const
  {
    std::set<std::string> found;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(traces, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file() && it->path().string().ends_with(".pfw.gz"))  // not their .zindex
        found.insert(it->path().string());
    return found;
  }
};

struct slurm_test : runtime_test {
  static inline slurm_cluster* cluster = nullptr;
  static void SetUpTestSuite() { cluster = new slurm_cluster; }
  static void TearDownTestSuite()
  {
    delete cluster;
    cluster = nullptr;
  }
  void SetUp() override
  {
    runtime_test::SetUp();
    ASSERT_TRUE(cluster->up) << "the SLURM cluster did not start: " << cluster->why_not_up;
  }
  // Tasks write (4 KiB blocks, 10 + their rank of them) to one file each and report LD_PRELOAD.
  std::string two_task_script() const
  {
    return "srun -n 2 sh -c 'echo \"task $SLURM_PROCID preload=$LD_PRELOAD\"; exec dd if=/dev/zero of=" +
           cluster->jobs +
           "/out.$SLURM_JOB_ID.$SLURM_PROCID bs=4k count=$((10 + SLURM_PROCID)) status=none'\n";
  }
  std::string out_file(int job, int task) const
  {
    return cluster->jobs + "/out." + std::to_string(job) + "." + std::to_string(task);
  }
  // The node still takes jobs: a tracing problem never drains it.
  void expect_node_idle()
  {
    std::string state = cluster->dir / "state.txt";
    run_shell(cluster->as_user("sinfo -h -o %T >" + state));
    EXPECT_EQ(read_file(state), "idle\n");
  }
  void expect_no_daemon_left(int job)
  {
    for (const char* suffix : {".pid", ".ready", ".probes.json.gz"})
      EXPECT_FALSE(std::filesystem::exists(cluster->run + "/datacrumbs-" + std::to_string(job) + suffix))
          << suffix;
  }
  void expect_traced(const slurm_cluster::job& j)
  {
    ASSERT_EQ(j.exit_status, 0) << j.output;
    std::string trace_path = cluster->trace_of(j.id);
    struct stat st {};
    ASSERT_EQ(stat(trace_path.c_str(), &st), 0) << "no trace " << trace_path << "; job output:\n" << j.output;
    EXPECT_EQ(st.st_uid, cluster->uid) << "the trace is not the job user's";
    auto trace = parse_trace_text(read_gzip_members(trace_path).text);
    EXPECT_TRUE(trace.closed) << "the Epilog returned before the trace was finished";
    auto writes = block_writes_by_file(trace);
    std::set<uint32_t> task_pids;
    for (int task = 0; task < 2; ++task) {
      const auto& w = writes[string_hash(out_file(j.id, task))];
      EXPECT_EQ(w.writes, 10 + task) << "task " << task;
      EXPECT_EQ(w.pids.size(), 1u) << "task " << task;
      task_pids.insert(w.pids.begin(), w.pids.end());
      EXPECT_EQ(std::filesystem::file_size(out_file(j.id, task)), (10u + task) * 4096);
    }
    EXPECT_EQ(task_pids.size(), 2u) << "the two tasks are two processes";
    EXPECT_EQ(j.output.find("tracing is off"), std::string::npos) << j.output;
    EXPECT_NE(j.output.find("task 0 preload=" + cluster->prefix + "/lib/libdatacrumbs_client.so"),
              std::string::npos)
        << j.output;
    expect_no_daemon_left(j.id);
  }
  void expect_untraced(const slurm_cluster::job& j, const std::string& says)
  {
    EXPECT_EQ(j.exit_status, 0) << "the job itself must run: " << j.output;
    EXPECT_FALSE(std::filesystem::exists(cluster->trace_of(j.id)));
    for (int task = 0; task < 2; ++task)
      EXPECT_EQ(std::filesystem::file_size(out_file(j.id, task)), (10u + task) * 4096) << j.output;
    EXPECT_NE(j.output.find("task 0 preload=\n"), std::string::npos) << "preloaded untraced: " << j.output;
    if (says.empty())
      EXPECT_EQ(j.output.find("datacrumbs"), std::string::npos) << j.output;
    else
      EXPECT_NE(j.output.find("datacrumbs: tracing is off for job " + std::to_string(j.id) + " on " +
                              short_host_name() + ": " + says),
                std::string::npos)
          << j.output;
    expect_no_daemon_left(j.id);
    expect_node_idle();
  }
  static std::string request(const std::string& probe_file)
  {
    return "{\"project\":\"p1\",\"datacrumbs\":{\"enable\":\"yes\",\"probe_file\":\"" + probe_file + "\"}}";
  }
  std::string comment(const std::string& probe_file) const
  {
    return "--comment " + shell_quote(request(probe_file));
  }
};

TEST_F(slurm_test, AJobWhoseCommentAsksIsTracedExactlyAndOnlyIt)
{
  auto before = cluster->trace_files();
  auto plain = cluster->submit("plain", "", two_task_script());
  expect_untraced(plain, "");
  auto traced = cluster->submit("traced", comment(cluster->probes), two_task_script());
  expect_traced(traced);
  auto after = cluster->trace_files();
  EXPECT_EQ(after.size(), before.size() + 1) << "a daemon ran for another job";
  EXPECT_TRUE(after.contains(cluster->trace_of(traced.id)));
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
  if (std::string trace = cluster->trace_of(j.id); std::filesystem::exists(trace)) {
    for (const auto& e : complete_events(parse_trace_text(read_gzip_members(trace).text)))
      EXPECT_NE(e["args"].value("fhash", 0ull), string_hash(out_file(j.id, 0))) << e;
  }
}

}  // namespace
}  // namespace dc::test
