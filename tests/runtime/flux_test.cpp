// Flux end to end on a real single-node instance (`flux start`, flux-core built from the
// vendored snapshot by scripts/build-flux.sh) with DataCrumbs installed into a scratch prefix:
// the perilog.so prolog starts the daemon for jobs whose jobspec asks
// (attributes.system.datacrumbs), the flux-shell Lua plugin preloads the client library into
// their tasks, the epilog finishes the trace. Checked as for SLURM: in the one trace of a traced
// job, named by job id and host and owned by the job's user, each task's process has exactly
// strace's count of every traced system call and its rank (FLUX_TASK_RANK); jobs that did not
// ask, or said no, are not traced; a missing, tampered or foreign (signed for another uid) probe
// file leaves the job untraced and its output says why; a cancelled job still gets a finished
// trace; a second prolog for a running job starts nothing; no node is drained.
// A single-user instance runs every job as its owner, and its prolog must be root to load BPF,
// so jobs here are root's: running a job as another user needs a multi-user system instance
// with flux-security's setuid IMP, which the vendored snapshot is built without
// (--with-flux-security needs flux-security, not vendored).
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/hash.h"
#include "config/system_config.h"
#include "deploy/trace_name.h"
#include "runtime/runtime_helpers.h"
#include "runtime/scheduler_checks.h"

namespace dc::test {
namespace {

struct flux_test : runtime_test {
  std::string prefix, jobs, traces, run;
  static std::string first_line(const std::string& path)
  {
    std::string text = read_file(path);
    return text.substr(0, text.find('\n'));
  }
  std::string job_id(const std::string& name) { return first_line(jobs + "/" + name + ".id"); }
  std::string output(const std::string& name) { return read_file(jobs + "/" + name + ".out"); }
  std::string out_file(const std::string& id, int task)
  {
    return jobs + "/out." + id + "." + std::to_string(task);
  }
  std::time_t started = std::time(nullptr);
  // Dated the day its daemon started: between the test's start and now (both are tried).
  std::string trace_of(const std::string& id)
  {
    std::string first;
    for (std::time_t day : {started, std::time(nullptr)}) {
      auto name = expand_trace_pattern(default_trace_pattern, {id, short_host_name(), "root", day});
      std::string path = traces + "/" + name.value_or("?");
      if (std::filesystem::exists(path))
        return path;
      if (first.empty())
        first = path;
    }
    return first;
  }
  // The traced job's trace: the user's, finished, each task exactly as strace saw it.
  void expect_traced(const std::string& name)
  {
    std::string id = job_id(name), trace_path = trace_of(id);
    struct stat st {};
    ASSERT_EQ(stat(trace_path.c_str(), &st), 0) << trace_path << "\n" << output(name);
    EXPECT_EQ(st.st_uid, getuid()) << "the trace is not the job user's";
    auto trace = parse_trace_text(read_gzip_members(trace_path).text);
    EXPECT_TRUE(trace.closed) << name << ": the epilog returned before the trace was finished";
    auto writes = block_writes_by_file(trace);
    std::set<uint32_t> task_pids;
    for (int task = 0; task < 2; ++task) {
      const auto& w = writes[string_hash(out_file(id, task))];
      EXPECT_EQ(w.writes, 10 + task) << name << " task " << task;
      EXPECT_EQ(w.pids.size(), 1u) << name << " task " << task;
      task_pids.insert(w.pids.begin(), w.pids.end());
      if (w.pids.size() == 1)
        expect_process_equals_strace(trace, jobs + "/strace." + id + "." + std::to_string(task),
                                     *w.pids.begin(), task, 2, 10 + task);
    }
    EXPECT_EQ(task_pids.size(), 2u) << name;
    EXPECT_NE(output(name).find("task 0 preload=" + prefix + "/lib/libdatacrumbs_client.so"),
              std::string::npos)
        << output(name);
  }
};

TEST_F(flux_test, JobsThatAskAreTracedExactlyOthersAreNotAndBadRequestsSayWhy)
{
  std::string flux_prefix_file = dir / "flux_prefix";
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_SOURCE_DIR) + "/scripts/build-flux.sh >" + flux_prefix_file +
                      " 2>" + dir / "flux_build.err"),
            0)
      << read_file(dir / "flux_build.err");
  std::string flux = first_line(flux_prefix_file) + "/bin/flux";
  prefix = dir / "prefix";
  jobs = dir / "jobs";
  traces = dir / "traces";
  run = dir / "run";
  std::filesystem::create_directories(prefix + "/etc/datacrumbs");
  std::filesystem::create_directories(jobs);
  std::ofstream(prefix + "/etc/datacrumbs/scheduler.env")
      << "DATACRUMBS_RUN_DIR=" << run << "\nDATACRUMBS_TRACE_DIR=" << traces
      << "\nDATACRUMBS_SECRET_FILE=" << dir / "secret/key"
      << "\n";
  ASSERT_EQ(run_shell("DATACRUMBS_RUN_DIR=" + run + " cmake --install " DATACRUMBS_BUILD_DIR " --prefix " +
                      prefix + " >" + dir / "install.log 2>&1"),
            0)
      << read_file(dir / "install.log");
  std::ofstream(dir / "probes.yaml") << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n";
  std::string probes = jobs + "/probes.json.gz", tampered = jobs + "/tampered.json.gz",
              foreign = jobs + "/foreign.json.gz";
  std::string sign =
      "DATACRUMBS_SECRET_FILE=" + dir / "secret/key " + prefix + "/bin/datacrumbs_probe_configurator ";
  ASSERT_EQ(run_shell(sign + dir / "probes.yaml " + probes + " 2>/dev/null && cp " + probes + " " + tampered +
                      " && printf X | dd of=" + tampered + " bs=1 seek=40 conv=notrunc status=none && " +
                      sign + "--user 65534 " + dir / "probes.yaml " + foreign + " 2>/dev/null"),
            0);
  // The instance's config: our conf.d snippet; its shell runs our Lua plugin (lua.d next to a
  // copy of the default initrc).
  std::string conf = dir / "conf", shell_dir = dir / "shell";
  std::filesystem::create_directories(conf);
  std::filesystem::create_directories(shell_dir + "/lua.d");
  std::filesystem::copy_file(prefix + "/etc/flux/system/conf.d/datacrumbs-perilog.toml",
                             conf + "/datacrumbs.toml");
  std::filesystem::copy_file(
      std::filesystem::path(flux).parent_path().parent_path() / "etc/flux/shell/initrc.lua",
      shell_dir + "/initrc.lua");
  std::filesystem::copy_file(prefix + "/etc/flux/shell/lua.d/datacrumbs.lua",
                             shell_dir + "/lua.d/datacrumbs.lua");
  ASSERT_EQ(run_shell("cd " + jobs + " && timeout 400 " + flux +
                      " start --test-size=1 -o,--config-path=" + conf + " -Sconf.shell_initrc=" + shell_dir +
                      "/initrc.lua " + DATACRUMBS_SOURCE_DIR + "/tests/runtime/flux/flux_jobs.sh " + jobs +
                      " " + probes + " " + tampered + " " + foreign + " " + run + " " + prefix +
                      "/libexec/datacrumbs/datacrumbs-flux-perilog >" + dir / "flux.log 2>&1"),
            0)
      << read_file(dir / "flux.log");

  expect_traced("traced");
  // Cancelled once its tasks had written: the epilog still finished the trace. The second
  // prolog, run while it ran, left the daemon as it was.
  expect_traced("cancelled");
  EXPECT_EQ(read_file(jobs + "/double.txt"), "same\n");
  // Flux stores enable=1 as a number: a request all the same.
  EXPECT_TRUE(std::filesystem::exists(trace_of(job_id("numeric")))) << output("numeric");

  for (const auto& [name, says] : std::initializer_list<std::pair<std::string, std::string>>{
           {"plain", ""},
           {"refused", ""},
           {"missing", "root cannot read the probe file " + jobs + "/none.json.gz"},
           {"tampered", "the daemon refused: refusing '" + tampered + "': "},
           {"foreign",
            "the daemon refused: refusing '" + foreign + "': signed for uid 65534, not the job's uid 0\n"}}) {
    std::string id = job_id(name), out = output(name);
    EXPECT_FALSE(std::filesystem::exists(trace_of(id))) << name;
    for (int task = 0; task < 2; ++task)
      EXPECT_EQ(std::filesystem::file_size(out_file(id, task)), (10u + task) * 4096) << name;
    EXPECT_NE(out.find("task 0 preload=\n"), std::string::npos) << name << ": " << out;
    if (says.empty())
      EXPECT_EQ(out.find("datacrumbs"), std::string::npos) << name << ": " << out;
    else
      EXPECT_NE(
          out.find("datacrumbs: tracing is off for job " + id + " on " + short_host_name() + ": " + says),
          std::string::npos)
          << name << ": " << out;
    EXPECT_FALSE(std::filesystem::exists(run + "/datacrumbs-" + id + ".pid")) << name;
  }
  EXPECT_EQ(read_file(jobs + "/drained.txt").find("prolog"), std::string::npos)
      << read_file(jobs + "/drained.txt");
  EXPECT_EQ(run_shell("ls " + run + "/*.pid >/dev/null 2>&1"), 2) << "a daemon was left running";
}

}  // namespace
}  // namespace dc::test
