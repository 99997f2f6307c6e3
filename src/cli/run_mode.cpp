#include "cli/run_mode.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "cli/child_process.h"
#include "cli/live_output.h"
#include "cli/output_files.h"
#include "cli/trace_pipeline.h"
#include "collect/mapped_ring.h"
#include "core/install_paths.h"
#include "probe/layers.h"
#include "probe/session.h"
#include "probe/system_checks.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"
#include "sink/system_summary.h"

namespace dc {

namespace {

// Removes the trace file if the run fails before the command starts, if its path still names
// the file this run created.
struct unlink_unless_kept {
  std::string path;
  std::pair<uint64_t, uint64_t> identity;  // device, inode
  bool keep = false;
  ~unlink_unless_kept()
  {
    struct stat st {};
    if (!keep && ::lstat(path.c_str(), &st) == 0 &&
        std::pair<uint64_t, uint64_t>(st.st_dev, st.st_ino) == identity)
      ::unlink(path.c_str());
  }
};

void print_summary(const std::string& text, const run_options& options, int exit_code)
{
  std::string cmd;
  for (const auto& a : options.command) cmd += (cmd.empty() ? "" : " ") + a;
  std::fprintf(stderr, "datacrumbs: '%s' exited with %d\n%s", cmd.c_str(), exit_code, text.c_str());
}

// Profile mode's interval (0: trace mode): the command line's choice, else the config's.
uint64_t profile_interval_ms(const run_options& options, const probe_config& config)
{
  bool profile = options.mode.empty() ? config.profile_interval_ms != 0 : options.mode == "profile";
  if (!profile)
    return 0;
  if (options.interval_ms)
    return options.interval_ms;
  return config.profile_interval_ms ? config.profile_interval_ms : 1000;
}

// --print's and --live's outputs, checked before the command starts; `live_out` is --live's
// output, finished after the pipeline so its last frame precedes the summary.
result<live_views> make_views(const run_options& options, const probe_config& config, uint64_t interval_ms,
                              std::shared_ptr<async_output>& live_out)
{
  live_views views;
  if (options.print) {
    if (interval_ms)
      return fail("--print shows one line per event; profile mode writes counters, not events (try --live)",
                  2);
    auto layers = print_layers(options.print_filter, config);
    if (!layers)
      return std::unexpected(layers.error());
    auto out = print_output(options.print_file);
    if (!out)
      return std::unexpected(out.error());
    views.print = std::move(*out);
    views.print_layers = std::move(*layers);
  }
  if (options.live) {
    live_out = std::make_shared<async_output>(STDOUT_FILENO, "stdout", false);
    views.live = live_printer(live_out);
  }
  return views;
}

// What --print and --live met on their way (the trace is whole whatever they met).
void report_views(const trace_pipeline& pipeline, const std::shared_ptr<async_output>& live_out)
{
  if (live_out)
    if (auto done = live_out->finish(); !done)
      std::fprintf(stderr, "datacrumbs: --live: %s\n", done.error().message.c_str());
  const event_printer* printer = pipeline.printer();
  if (!printer)
    return;
  if (!printer->status())
    std::fprintf(stderr, "datacrumbs: --print: %s\n", printer->status().error().message.c_str());
  if (printer->lines_dropped())
    std::fprintf(stderr,
                 "datacrumbs: --print: %llu lines were dropped (their reader was slower than the trace)\n",
                 static_cast<unsigned long long>(printer->lines_dropped()));
}

// The event ring's size: --ring-mb's, else by mode. Profile mode sends the ring a thread's counts
// only when their key changes, besides processes and file names, and the kernel maps and unmaps
// every page of it with each run (2 ms of a run's end for 64 MiB; 16 MiB lost no record in open
// and stat storms over 100,000 files, both CPUs busy, a record a call: docs/performance.md).
uint64_t ring_bytes_for(uint64_t asked, uint64_t profile_interval_ns)
{
  if (asked)
    return asked;
  return profile_interval_ns ? 16ull << 20 : 64ull << 20;
}

}  // namespace

result<int> run_traced(const run_options& options)
{
  auto executable = resolve_command(options.command.front());
  if (!executable)
    return std::unexpected(executable.error());
  if (auto layers = check_layer_names(options.layers); !layers)
    return std::unexpected(layers.error());
  std::vector<system_rule> user_rules;
  for (const auto& spec : options.systems) {
    auto rule = parse_system_rule(spec);
    if (!rule)
      return std::unexpected(rule.error());
    user_rules.push_back(std::move(*rule));
  }
  const std::vector<system_rule> rules = system_rules(std::move(user_rules));
  if (auto privileged = check_bpf_privileges(); !privileged)
    return std::unexpected(privileged.error());

  std::string trace_path =
      options.trace_path.empty() ? default_trace_path(options.command.front()) : options.trace_path;
  std::optional<pending_file> summary_file;
  if (!options.summary_path.empty()) {
    auto reserved = pending_file::reserve(options.summary_path);
    if (!reserved)
      return std::unexpected(reserved.error());
    summary_file.emplace(std::move(*reserved));
  }

  auto config = load_probe_config(options.config_path.empty() ? shipped_config_dir() + "/default.yaml"
                                                              : options.config_path);
  if (!config)
    return std::unexpected(config.error());
  uint64_t interval_ms = profile_interval_ms(options, *config);
  uint64_t interval_ns = interval_ms * 1000000ull;
  std::shared_ptr<async_output> live_out;
  auto views = make_views(options, *config, interval_ms, live_out);
  if (!views)
    return std::unexpected(views.error());
  // The trace file, its compressors and its line index (~10 ms here) are made while libbpf
  // loads the object on the other CPU; a path that cannot be written still stops the run
  // before CMD starts, and its error comes first.
  std::optional<result<gzip_member_writer>> trace_file;
  auto make_trace = [&] {
    trace_file.emplace(gzip_member_writer::create(trace_path, gzip_member_writer::default_level,
                                                  gzip_member_writer::default_workers()));
    if (*trace_file && !options.no_index)
      (*trace_file)->index_to(trace_path + ".zindex");
  };
  session_options session_settings{ring_bytes_for(options.ring_bytes, interval_ns),
                                   options.verbose,
                                   options.layers,
                                   &*config,
                                   nullptr,
                                   nullptr,
                                   nullptr,
                                   interval_ns,
                                   options.hold_ring_bytes};
  session_settings.beside_load = make_trace;
  // The event ring is mapped (5-8 ms for 64 MiB) while the layers attach, not after them.
  // If that fails, the pipeline maps it itself (and says why it cannot).
  std::unique_ptr<mapped_ring> ring;
  session_settings.beside_attach = [&ring](int ring_fd) {
    if (auto mapped = mapped_ring::map(ring_fd))
      ring = std::move(*mapped);
  };
  session_settings.keep_seconds = options.keep_loaded_s;
  session_settings.attach_soon = true;  // the command, right after the load
  // The small keeper beside this binary; this binary itself (`datacrumbs __keep-object`) without.
  session_settings.keeper_exe = installed_path("bin/datacrumbs_keeper");
  if (access(session_settings.keeper_exe.c_str(), X_OK) != 0) {
    std::error_code no_exe;
    session_settings.keeper_exe = std::filesystem::read_symlink("/proc/self/exe", no_exe).string();
  }
  // The command waits, paused before its exec, from here: forked while this process is small
  // (before the object and its ring are mapped), and holding none of the links made below.
  auto child = spawn_paused(*executable, options.command);
  if (!child)
    return std::unexpected(child.error());
  forward_signals_to(child->pid);
  auto abandon = [&](const error& e) {
    kill(child->pid, SIGKILL);
    wait_for_exit(child->pid);
    return std::unexpected(e);
  };
  auto probes = session::open(session_settings);
  if (trace_file && !*trace_file)
    return abandon(trace_file->error());
  std::optional<unlink_unless_kept> trace_guard;
  if (trace_file)
    trace_guard.emplace(trace_path, (*trace_file)->identity());
  if (!probes)
    return abandon(probes.error());
  for (const auto& note : (*probes)->notes()) std::fprintf(stderr, "datacrumbs: %s\n", note.c_str());
  for (const auto& r : (*probes)->reports()) {
    if (!r.live)
      std::fprintf(stderr, "datacrumbs: layer %s is not live: %s\n", r.name.c_str(), r.why.c_str());
  }

  snapshot_plan snapshots{true, options.snapshot_dirs, static_cast<uint32_t>(child->pid), options.command,
                          *executable};
  // Its user-space probes are in place before its exec: they cover every binary it maps. They
  // are attached (~1 ms with the registration kept warm: probe/uprobe_warmup.h) while the
  // pipeline starts (~7 ms: snapshots, the first part written).
  result<> attached;
  std::optional<std::jthread> attaching(
      std::in_place, [&] { attached = (*probes)->attach_process(static_cast<uint32_t>(child->pid)); });
  auto pipeline =
      trace_pipeline::start(**probes, std::move(**trace_file), static_cast<uint32_t>(child->pid), rules,
                            std::move(snapshots), std::move(*views), options.process_detail, std::move(ring));
  attaching.reset();  // joined
  if (!pipeline)
    return abandon(pipeline.error());
  (*pipeline)->dec().snapshot_fds(static_cast<uint32_t>(child->pid));
  if (!attached)
    return abandon(attached.error());
  if (auto refused = (*probes)->refused_functions(); !refused.empty())
    std::fprintf(stderr, "datacrumbs: %zu functions the kernel cannot probe are skipped (first: %s)\n",
                 refused.size(), refused.front().c_str());
  if (auto armed = (*probes)->arm(static_cast<uint32_t>(child->pid)); !armed)
    return abandon(armed.error());
  trace_guard->keep = true;

  auto released = release(*child, options.command.front());
  int exit_code = wait_for_exit(child->pid);
  (*probes)->disarm(static_cast<uint32_t>(child->pid));
  auto finished = (*pipeline)->finish();
  report_views(**pipeline, live_out);
  if (!released)
    return std::unexpected(released.error());
  // A trace file that failed (a full disk, its directory removed) costs the trace, not the run:
  // the command ran to its end, and the summary says what the trace is missing.
  // The tool's status is the command's, or 1 when the command succeeded but its trace did not.
  bool trace_failed = !(*pipeline)->trace_status();
  if (trace_failed)
    std::fprintf(stderr, "datacrumbs: %s\n", (*pipeline)->trace_status().error().message.c_str());
  else if (!finished)
    return std::unexpected(finished.error());
  if (auto failures = (*probes)->hold_failures(); !failures.empty())
    std::fprintf(stderr, "datacrumbs: %s\n", failures.c_str());

  run_facts facts = (*pipeline)->facts(options.command, exit_code, trace_path, interval_ms);
  if (summary_file) {
    nlohmann::json summary = (*pipeline)->summary_json(facts);
    // How the BPF object came: loaded for this run, or taken from a keeper (probe/object_keeper.h).
    summary["bpf_object"] = (*probes)->object_taken() ? "taken from a keeper" : "loaded";
    auto written = summary_file->commit(summary.dump(2) + "\n");
    if (!written)
      return std::unexpected(written.error());
  }
  print_summary((*pipeline)->summary_text(facts), options, exit_code);
  if ((*pipeline)->malformed())
    std::fprintf(stderr, "datacrumbs: %llu malformed records were skipped\n",
                 static_cast<unsigned long long>((*pipeline)->malformed()));
  return trace_failed && exit_code == 0 ? 1 : exit_code;
}

}  // namespace dc
