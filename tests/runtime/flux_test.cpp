// Flux end to end on a real single-node instance (`flux start`, flux-core built from the
// vendored snapshot by scripts/build-flux.sh) with DataCrumbs installed into a scratch prefix:
// the perilog.so prolog starts the daemon for jobs whose jobspec asks
// (attributes.system.datacrumbs), the flux-shell Lua plugin preloads the client library into
// their tasks, the epilog finishes the trace. A single-user instance runs every job as its
// owner (root), so the traced user here is root. Checked: each task's exact writes in the one
// trace of the traced job, named by job id and host; jobs that did not ask, or said no, are not
// traced; a missing or tampered probe file leaves the job untraced and its output says why; no
// node is drained.
#include <sys/stat.h>

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
  std::string trace_of(const std::string& id)
  {
    auto name =
        expand_trace_pattern(default_trace_pattern, {id, short_host_name(), "root", std::time(nullptr)});
    return traces + "/" + name.value_or("?");
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
  std::string probes = jobs + "/probes.json.gz", tampered = jobs + "/tampered.json.gz";
  ASSERT_EQ(run_shell("DATACRUMBS_SECRET_FILE=" + dir / "secret/key " + prefix +
                      "/bin/datacrumbs_probe_configurator " + dir / "probes.yaml " + probes +
                      " 2>/dev/null && cp " + probes + " " + tampered + " && printf X | dd of=" + tampered +
                      " bs=1 seek=40 conv=notrunc status=none"),
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
                      " " + probes + " " + tampered + " >" + dir / "flux.log 2>&1"),
            0)
      << read_file(dir / "flux.log");

  std::string traced = job_id("traced");
  std::string trace_path = trace_of(traced);
  ASSERT_TRUE(std::filesystem::exists(trace_path)) << trace_path << "\n"
                                                   << output("traced") << read_file(dir / "flux.log");
  auto trace = parse_trace_text(read_gzip_members(trace_path).text);
  EXPECT_TRUE(trace.closed) << "the epilog returned before the trace was finished";
  auto writes = block_writes_by_file(trace);
  std::set<uint32_t> task_pids;
  for (int task = 0; task < 2; ++task) {
    const auto& w = writes[string_hash(out_file(traced, task))];
    EXPECT_EQ(w.writes, 10 + task) << "task " << task;
    EXPECT_EQ(w.pids.size(), 1u) << "task " << task;
    task_pids.insert(w.pids.begin(), w.pids.end());
  }
  EXPECT_EQ(task_pids.size(), 2u);
  EXPECT_NE(output("traced").find("task 0 preload=" + prefix + "/lib/libdatacrumbs_client.so"),
            std::string::npos)
      << output("traced");
  // Flux stores enable=1 as a number: a request all the same.
  EXPECT_TRUE(std::filesystem::exists(trace_of(job_id("numeric")))) << output("numeric");

  for (const auto& [name, says] : std::initializer_list<std::pair<std::string, std::string>>{
           {"plain", ""},
           {"refused", ""},
           {"missing", "root cannot read the probe file " + jobs + "/none.json.gz"},
           {"tampered", "the daemon refused: refusing '" + tampered + "': "}}) {
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
