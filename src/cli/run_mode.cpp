#include "cli/run_mode.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "cli/child_process.h"
#include "cli/output_files.h"
#include "cli/trace_pipeline.h"
#include "probe/layers.h"
#include "probe/session.h"
#include "probe/system_checks.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"
#include "sink/system_summary.h"

namespace dc {

namespace {

// Removes the trace file if the run fails before the command starts.
struct unlink_unless_kept {
  std::string path;
  bool keep = false;
  ~unlink_unless_kept()
  {
    if (!keep)
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
  auto trace_file = gzip_member_writer::create(trace_path, gzip_member_writer::default_level,
                                               gzip_member_writer::default_workers());
  if (!trace_file)
    return std::unexpected(trace_file.error());
  unlink_unless_kept trace_guard{trace_path};
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
  auto probes = session::open(
      {options.ring_bytes, options.verbose, options.layers, &*config, nullptr, nullptr, interval_ns});
  if (!probes)
    return std::unexpected(probes.error());
  for (const auto& note : (*probes)->notes()) std::fprintf(stderr, "datacrumbs: %s\n", note.c_str());
  for (const auto& r : (*probes)->reports()) {
    if (!r.live)
      std::fprintf(stderr, "datacrumbs: layer %s is not live: %s\n", r.name.c_str(), r.why.c_str());
  }

  auto child = spawn_paused(*executable, options.command);
  if (!child)
    return std::unexpected(child.error());
  forward_signals_to(child->pid);
  auto abandon = [&](const error& e) {
    kill(child->pid, SIGKILL);
    wait_for_exit(child->pid);
    return std::unexpected(e);
  };
  snapshot_plan snapshots{true, options.snapshot_dirs, static_cast<uint32_t>(child->pid), options.command,
                          *executable};
  auto pipeline = trace_pipeline::start(**probes, std::move(*trace_file), static_cast<uint32_t>(child->pid),
                                        rules, std::move(snapshots));
  if (!pipeline)
    return abandon(pipeline.error());
  (*pipeline)->dec().snapshot_fds(static_cast<uint32_t>(child->pid));
  if (options.no_index)
    (*pipeline)->skip_index();
  // Its user-space probes are in place before its exec: they cover every binary it maps.
  if (auto attached = (*probes)->attach_process(static_cast<uint32_t>(child->pid)); !attached)
    return abandon(attached.error());
  if (auto refused = (*probes)->refused_functions(); !refused.empty())
    std::fprintf(stderr, "datacrumbs: %zu functions the kernel cannot probe are skipped (first: %s)\n",
                 refused.size(), refused.front().c_str());
  if (auto armed = (*probes)->arm(static_cast<uint32_t>(child->pid)); !armed)
    return abandon(armed.error());
  trace_guard.keep = true;

  auto released = release(*child, options.command.front());
  int exit_code = wait_for_exit(child->pid);
  (*probes)->disarm(static_cast<uint32_t>(child->pid));
  auto finished = (*pipeline)->finish();
  if (!released)
    return std::unexpected(released.error());
  if (!finished)
    return std::unexpected(finished.error());
  if (auto failures = (*probes)->hold_failures(); !failures.empty())
    std::fprintf(stderr, "datacrumbs: %s\n", failures.c_str());

  run_facts facts{options.command,
                  exit_code,
                  (*pipeline)->events_written(),
                  (*pipeline)->counters_written(),
                  (*pipeline)->lost(),
                  trace_path,
                  interval_ms,
                  (*pipeline)->elapsed_s()};
  if (summary_file) {
    auto written = summary_file->commit((*pipeline)->summary_json(facts).dump(2) + "\n");
    if (!written)
      return std::unexpected(written.error());
  }
  print_summary((*pipeline)->summary_text(facts), options, exit_code);
  if ((*pipeline)->malformed())
    std::fprintf(stderr, "datacrumbs: %llu malformed records were skipped\n",
                 static_cast<unsigned long long>((*pipeline)->malformed()));
  return exit_code;
}

}  // namespace dc
