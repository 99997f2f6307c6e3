#include "cli/daemon_mode.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/live_output.h"
#include "cli/options.h"
#include "cli/output_files.h"
#include "cli/trace_pipeline.h"
#include "config/system_config.h"
#include "core/file_text.h"
#include "core/install_paths.h"
#include "deploy/probe_file.h"
#include "deploy/trace_name.h"
#include "probe/system_checks.h"

namespace dc {

namespace {

result<std::string> read_whole(const std::string& path)
{
  if (auto text = read_file_text(path))
    return std::move(*text);
  return fail("cannot read probe file '" + path + "'");
}

// Waits for SIGINT or SIGTERM (blocked in every thread from the start).
void wait_for_stop(const sigset_t& stop)
{
  int sig = 0;
  while (sigwait(&stop, &sig) != 0) {
  }
}

}  // namespace

result<int> run_daemon(const daemon_options& options)
{
  std::string run_id = options.run_id.empty() ? std::to_string(getpid()) : options.run_id;
  if (auto ok = check_run_id(run_id); !ok)
    return std::unexpected(ok.error());
  if (geteuid() != 0)
    return fail("the daemon runs as root (it verifies with root's secret and traces other users)");
  if (std::string why = cli::check_input_file(options.probe_file); !why.empty())
    return fail("probe file " + why, 2);
  auto bytes = read_whole(options.probe_file);
  if (!bytes)
    return std::unexpected(bytes.error());
  auto system = load_system_config();
  if (!system)
    return std::unexpected(system.error());
  auto secret = load_secret(system->secret_file, false);
  if (!secret)
    return std::unexpected(secret.error());
  auto probes_file = verify_probe_file(*bytes, *secret);
  forget_secret(*secret);  // not needed again: it is not kept for the whole run
  if (!probes_file)
    return fail("refusing '" + options.probe_file + "': " + probes_file.error().message);
  // A scheduler's prolog names the job's user: a file signed for anyone else is not this job's.
  if (const char* expect = std::getenv("DATACRUMBS_EXPECT_UID");
      expect && *expect && std::to_string(probes_file->uid) != expect)
    return fail("refusing '" + options.probe_file + "': signed for uid " + std::to_string(probes_file->uid) +
                ", not the job's uid " + expect);

  // Every thread started from here on (the collector) inherits the blocked stop signals.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  const std::string& trace_dir = system->trace_dir;
  const std::string& run_dir = system->run_dir;
  std::error_code ec;
  std::filesystem::create_directories(trace_dir, ec);
  std::filesystem::create_directories(run_dir, ec);
  passwd* pw = getpwuid(probes_file->uid);
  auto trace_name = expand_trace_pattern(
      system->trace_pattern,
      {run_id, short_host_name(), pw ? pw->pw_name : std::to_string(probes_file->uid), std::time(nullptr)});
  if (!trace_name)
    return std::unexpected(trace_name.error());
  std::string trace_path = trace_dir + "/" + *trace_name;
  std::string ready_path = run_dir + "/datacrumbs-" + run_id + ".ready";

  beacon_target beacon{installed_path("lib/libdatacrumbs_client.so"), probes_file->uid};
  session_options so;
  so.verbose = options.verbose;
  so.hold_ring_bytes = options.hold_ring_bytes;
  so.layers = probes_file->kernel_layers;
  so.uprobes = &probes_file->uprobes;
  so.uprobe_entries = &probes_file->uprobe_entries;
  so.beacon = &beacon;
  so.profile_interval_ns = probes_file->profile_interval_ms * 1000000ull;
  auto probes = session::open(so);
  if (!probes)
    return std::unexpected(probes.error());
  for (const auto& note : (*probes)->notes()) std::fprintf(stderr, "datacrumbs: %s\n", note.c_str());

  // The trace belongs to the user it traces. Its directories below the trace directory (the
  // pattern's) are walked without following a link, the file is created in the one walked
  // without following a link, and it is given to the user by its descriptor: a link planted on
  // the way, or a file swapped in after it was created, is never written or given away.
  auto trace_parent =
      open_directory_beneath(trace_dir, std::filesystem::path(*trace_name).parent_path().string());
  if (!trace_parent)
    return std::unexpected(trace_parent.error());
  std::string trace_leaf = std::filesystem::path(*trace_name).filename().string();
  auto trace_file =
      gzip_member_writer::create(trace_path, gzip_member_writer::default_level,
                                 gzip_member_writer::default_workers(), *trace_parent, trace_leaf.c_str());
  if (!trace_file) {
    ::close(*trace_parent);
    return std::unexpected(trace_file.error());
  }
  if (!trace_file->give_to(probes_file->uid, pw ? pw->pw_gid : probes_file->uid)) {
    ::close(*trace_parent);
    return fail("cannot give " + trace_path + " to uid " + std::to_string(probes_file->uid));
  }
  // The index too is made, and at the end renamed, in the directory walked, through its descriptor.
  trace_file->index_to(trace_path + ".zindex", *trace_parent, trace_leaf + ".zindex");
  ::close(*trace_parent);
  // The live view's snapshot (`datacrumbs live RUN-ID`): replaced every second, the last frame
  // (marked ended) left in place when the run ends.
  std::string live_path = live_snapshot_path(run_dir, run_id);
  ::unlink(live_path.c_str());
  live_views views;
  views.live = live_snapshot_writer(live_path, probes_file->uid, pw ? pw->pw_gid : probes_file->uid);
  auto pipeline = trace_pipeline::start(**probes, std::move(*trace_file), static_cast<uint32_t>(getpid()), {},
                                        {}, std::move(views));
  if (!pipeline)
    return std::unexpected(pipeline.error());

  auto ready = pending_file::reserve(ready_path);
  if (!ready)
    return std::unexpected(ready.error());
  nlohmann::json r = {
      {"pid", getpid()}, {"run_id", run_id}, {"trace", trace_path}, {"uid", probes_file->uid}};
  if (auto written = ready->commit(r.dump() + "\n"); !written)
    return std::unexpected(written.error());
  std::fprintf(stderr, "datacrumbs: ready (run %s, tracing uid %u into %s)\n", run_id.c_str(),
               probes_file->uid, trace_path.c_str());

  wait_for_stop(stop);
  auto finished = (*pipeline)->finish();
  ::unlink(ready_path.c_str());
  if (auto failures = (*probes)->hold_failures(); !failures.empty())
    std::fprintf(stderr, "datacrumbs: %s\n", failures.c_str());
  for (const auto& f : (*probes)->refused_functions())
    std::fprintf(stderr, "datacrumbs: the kernel cannot probe %s: skipped\n", f.c_str());
  run_facts facts = (*pipeline)->facts({"datacrumbs", options.probe_file, run_id}, 0, trace_path,
                                       probes_file->profile_interval_ms);
  if (const auto& trace = (*pipeline)->trace_status(); !trace) {
    std::fprintf(stderr, "%s", (*pipeline)->summary_text(facts).c_str());
    return std::unexpected(trace.error());
  }
  if (!finished)
    return std::unexpected(finished.error());
  std::fprintf(stderr, "%s", (*pipeline)->summary_text(facts).c_str());
  return 0;
}

}  // namespace dc
