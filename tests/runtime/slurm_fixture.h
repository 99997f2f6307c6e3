// The SLURM runtime tests' cluster and fixture (slurm_test.cpp, slurm_prolog_test.cpp): a real
// one-node cluster (munged, slurmctld, slurmd on localhost, started by
// tests/runtime/slurm/slurm_cluster.sh with DataCrumbs installed into a scratch prefix; the
// Prolog/Epilog are symlinks, as prolog.d setups have them), a real unprivileged job user, and
// what a traced job's trace must hold.
#pragma once
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config/system_config.h"
#include "core/hash.h"
#include "deploy/trace_name.h"
#include "runtime/runtime_helpers.h"
#include "runtime/scheduler_checks.h"

namespace dc::test {

inline const std::string user = "dcslurm";

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
    std::time_t submitted = 0;  // the trace's date is the day its daemon started
  };
  // sbatch --wait as the user; returns once the job has left the queue (its Epilog is done).
  job submit(const std::string& name, const std::string& sbatch_args, const std::string& script)
  {
    std::string script_path = jobs + "/" + name + ".sh", id_path = dir / (name + ".id");
    std::ofstream(script_path) << "#!/bin/sh\n" << script;
    chmod(script_path.c_str(), 0755);
    job j;
    j.submitted = std::time(nullptr);
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

  // The job's trace: dated the day its daemon started, between submission and now (both are
  // tried, so a job across UTC midnight is found).
  std::string trace_of(int job_id, std::time_t submitted) const
  {
    std::string first;
    for (std::time_t day : {submitted, std::time(nullptr)}) {
      auto name =
          expand_trace_pattern(default_trace_pattern, {std::to_string(job_id), short_host_name(), user, day});
      std::string path = traces + "/" + name.value_or("?");
      if (std::filesystem::exists(path))
        return path;
      if (first.empty())
        first = path;
    }
    return first;
  }
  std::string trace_of(const job& j) const { return trace_of(j.id, j.submitted); }
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
  // The writer runs under strace (its lines on stderr, a file per task: strace -f without -o
  // adds no system call to its child before the exec). It is a shell that sleeps, then execs
  // dd: one process, alive long enough for the daemon to read its rank from its environment
  // (a process gone before that stays unlabelled; README "MPI jobs"). `wrap`: each task starts
  // through it (datacrumbs_wrap).
  std::string two_task_script(const std::string& wrap = "") const
  {
    return "srun -n 2 " + wrap +
           "sh -c 'echo \"task $SLURM_PROCID preload=$LD_PRELOAD\"; exec strace -f -qq sh -c " +
           "\"sleep 1; exec dd if=/dev/zero of=" + cluster->jobs +
           "/out.$SLURM_JOB_ID.$SLURM_PROCID bs=4k count=$((10 + SLURM_PROCID)) status=none\" 2>" +
           cluster->jobs + "/strace.$SLURM_JOB_ID.$SLURM_PROCID'\n";
  }
  std::string strace_file(int job, int task) const
  {
    return cluster->jobs + "/strace." + std::to_string(job) + "." + std::to_string(task);
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
    std::string trace_path = cluster->trace_of(j);
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
      if (w.pids.size() == 1)
        expect_process_equals_strace(trace, strace_file(j.id, task), *w.pids.begin(), task, 2, 10 + task);
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
    EXPECT_FALSE(std::filesystem::exists(cluster->trace_of(j)));
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

}  // namespace dc::test
