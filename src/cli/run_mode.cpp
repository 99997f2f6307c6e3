#include "cli/run_mode.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <chrono>
#include <map>
#include <optional>
#include <tuple>

#include "cli/child_process.h"
#include "cli/output_files.h"
#include "collect/collector.h"
#include "collect/decoder.h"
#include "core/clock.h"
#include "probe/layers.h"
#include "probe/session.h"
#include "probe/system_checks.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"
#include "sink/system_summary.h"

namespace dc {

namespace {

std::string host_name()
{
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

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

// Counts layers kept in the kernel, charged to files by name like the events are.
void feed_counters(const std::vector<counter_sample>& samples, decoder& dec, summary_builder& summary)
{
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, std::pair<uint64_t, uint64_t>> page_cache;
  for (const auto& c : samples) {
    if (c.layer != "PAGECACHE")
      continue;
    auto& [added, dirtied] = page_cache[{c.pid, c.dev, c.ino}];
    (c.name == "added" ? added : dirtied) += c.value;
  }
  for (const auto& [key, counts] : page_cache) {
    auto [pid, dev, ino] = key;
    uint64_t fhash = dec.hash_of_file(dc_file_ref{ino, dev, 0100000}, pid);
    summary.page_cache().add_kernel_counts(pid, fhash, counts.first, counts.second);
  }
}

// One PAGECACHE counter sample per process and file, at the end of the run.
void write_page_cache_counters(pfw_writer& writer, const summary_builder& summary, const decoder& dec,
                               uint64_t now_us)
{
  for (const auto& [key, c] : summary.page_cache().by_file()) {
    trace_event ev;
    ev.name = "page_cache";
    ev.category = "PAGECACHE";
    ev.counter = true;
    ev.pid = ev.tid = key.first;
    ev.ts_us = now_us;
    ev.fhash = key.second;
    ev.add_arg("hits", static_cast<int64_t>(c.hits()));
    ev.add_arg("misses", static_cast<int64_t>(c.misses()));
    ev.add_arg("pages_read", static_cast<int64_t>(c.pages_read));
    ev.add_arg("pages_added", static_cast<int64_t>(c.added));
    ev.add_arg("pages_dirtied", static_cast<int64_t>(c.dirtied));
    writer.write_event(ev, {dec.state().names, dec.state().processes});
  }
}

void print_summary(const std::string& text, const run_options& options, int exit_code)
{
  std::string cmd;
  for (const auto& a : options.command) cmd += (cmd.empty() ? "" : " ") + a;
  std::fprintf(stderr, "datacrumbs: '%s' exited with %d\n%s", cmd.c_str(), exit_code, text.c_str());
}

// How many user-space functions were probed, and how long attaching them took.
nlohmann::json uprobes_json(const session& probes)
{
  nlohmann::json j = {{"functions", probes.uprobe_targets().size()}, {"attach_ms", 0.0}};
  for (const auto& r : probes.reports())
    if (r.name == "uprobe")
      j["attach_ms"] = static_cast<double>(r.attach_us) / 1000.0;
  return j;
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
  auto trace_file = gzip_member_writer::create(trace_path);
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
  auto probes = session::open({options.ring_bytes, options.verbose, options.layers, &*config});
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
  pfw_writer writer(std::move(*trace_file), host_name(), static_cast<uint32_t>(child->pid));
  writer.set_process_labeler([&rules](const process_info& p) { return system_label(p, rules); });
  summary_builder summary;
  decoder dec(measure_clock_offset(), {&writer, &summary});
  dec.state().uprobes = (*probes)->uprobe_targets();
  dec.snapshot_fds(static_cast<uint32_t>(child->pid));
  if (auto armed = (*probes)->arm(static_cast<uint32_t>(child->pid)); !armed) {
    kill(child->pid, SIGKILL);
    wait_for_exit(child->pid);
    return std::unexpected(armed.error());
  }
  auto running = collector::start((*probes)->ring_fd(), dec, &writer);
  if (!running) {
    kill(child->pid, SIGKILL);
    wait_for_exit(child->pid);
    return std::unexpected(running.error());
  }
  trace_guard.keep = true;

  auto released = release(*child, options.command.front());
  int exit_code = wait_for_exit(child->pid);
  (*probes)->disarm(static_cast<uint32_t>(child->pid));
  auto detached = (*probes)->detach();
  auto drained = (*running)->stop();
  loss_counts lost = (*probes)->losses();
  feed_counters((*probes)->counters(), dec, summary);
  write_page_cache_counters(writer, summary, dec,
                            static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                      std::chrono::system_clock::now().time_since_epoch())
                                                      .count()));
  auto finished = writer.finish(lost);
  if (!released)
    return std::unexpected(released.error());
  if (!detached)
    return std::unexpected(detached.error());
  if (!drained)
    return std::unexpected(drained.error());
  if (!finished)
    return std::unexpected(finished.error());

  run_facts facts{options.command, exit_code, writer.events_written(), lost, trace_path};
  const process_table& processes = dec.state().processes;
  nlohmann::json systems = systems_json(summary, processes, rules);
  if (summary_file) {
    nlohmann::json j = summary_json(summary, processes, dec.state().names, facts);
    j["systems"] = systems;
    j["uprobes"] = uprobes_json(**probes);
    auto written = summary_file->commit(j.dump(2) + "\n");
    if (!written)
      return std::unexpected(written.error());
  }
  print_summary(summary_text(summary, processes, facts) + systems_text(systems), options, exit_code);
  if (dec.malformed())
    std::fprintf(stderr, "datacrumbs: %llu malformed records were skipped\n",
                 static_cast<unsigned long long>(dec.malformed()));
  return exit_code;
}

}  // namespace dc
