#include "cli/trace_pipeline.h"

#include <unistd.h>

#include <chrono>

#include "cli/uprobe_report.h"
#include "core/clock.h"

namespace dc {

namespace {

std::string host_name()
{
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// How many user-space functions were probed, how long attaching them took, and where each
// entry was found.
nlohmann::json uprobes_json(const session& probes, const summary_builder& summary,
                            const process_table& processes)
{
  auto refused = probes.refused_functions();
  sweep_counts swept = probes.uprobe_swept();
  nlohmann::json j = {{"functions", probes.current_uprobe_targets().size() - refused.size()},
                      {"refused", refused},
                      {"attach_ms", 0.0},
                      {"calls_linked_as", probes.uprobe_call_sessions() ? "session" : "entry and return"},
                      {"swept",
                       {{"processes", swept.processes},
                        {"links", swept.links},
                        {"sweeps", swept.sweeps},
                        {"longest_us", swept.longest_us}}},
                      {"entries", uprobe_entries_json(probes.uprobe_entries(), probes.uprobe_placements(),
                                                      summary, processes)}};
  for (const auto& r : probes.reports())
    if (r.name == "uprobe")
      j["attach_ms"] = static_cast<double>(r.attach_us) / 1000.0;
  return j;
}

}  // namespace

trace_pipeline::trace_pipeline(session& probes, gzip_member_writer trace_file, uint32_t root_pid,
                               std::vector<system_rule> rules)
    : probes_(probes),
      rules_(std::move(rules)),
      root_pid_(root_pid),
      writer_(std::move(trace_file), host_name(), root_pid),
      dec_(measure_clock_offset(), {&writer_, &summary_})
{
  writer_.write_clock(read_host_clock(dec_.state().clock));
  writer_.set_process_labeler([this](const process_info& p) { return system_label(p, rules_); });
  dec_.state().uprobes.assign(probes_.uprobe_targets().begin(), probes_.uprobe_targets().end());
  dec_.state().current_uprobes = [this] { return probes_.current_uprobe_targets(); };
  writer_.set_process_named_hook([this](process_key instance, const process_info& p, uint64_t ts_us) {
    if (auto value = process_snapshots_(instance, p))
      write_snapshot_line(writer_,
                          {snapshot_process_name, std::to_string(p.pid), std::move(*value), p.pid, ts_us});
  });
  writer_.set_process_forgotten_hook(
      [this](uint32_t pid, process_key instance) { process_snapshots_.forget(pid, instance); });
}

trace_pipeline::~trace_pipeline() = default;

result<std::unique_ptr<trace_pipeline>> trace_pipeline::start(
    session& probes, gzip_member_writer trace_file, uint32_t root_pid, std::vector<system_rule> rules,
    snapshot_plan snapshots, live_views views, size_t process_detail, std::unique_ptr<mapped_ring> ring)
{
  std::unique_ptr<trace_pipeline> p(
      new trace_pipeline(probes, std::move(trace_file), root_pid, std::move(rules)));
  p->dec_.keep_process_detail(process_detail);
  if (views.print) {
    p->printer_ = std::make_unique<event_printer>(
        std::move(views.print), std::move(views.print_layers),
        [rules = &p->rules_](const process_info& proc) { return system_label(proc, *rules); });
    p->dec_.add_view(p->printer_.get());
  }
  if (views.live) {
    p->live_ = std::make_unique<live_view>([pipeline = p.get()] { return pipeline->kernel_facts(); },
                                           std::move(views.live));
    p->dec_.add_view(p->live_.get());
  }
  p->snapshots_ = std::move(snapshots);
  write_start_snapshots(p->writer_, p->snapshots_, p->process_snapshots_, root_pid);
  // The first part is written before anything is traced: a path that takes no writes (a full
  // disk, a /proc file) is refused here, before the command runs.
  if (auto first = p->writer_.flush_through(); !first)
    return std::unexpected(first.error());
  std::unique_ptr<profile_reader> profile;
  if (probes.profile_fd() >= 0)
    profile =
        std::make_unique<profile_reader>(probes.profile_fd(), probes.profile_interval_ns(),
                                         [&probes](uint64_t below) { return probes.flush_profile(below); });
  if (!ring) {
    auto mapped = mapped_ring::map(probes.ring_fd());
    if (!mapped)
      return std::unexpected(mapped.error());
    ring = std::move(*mapped);
  }
  auto running = collector::start(std::move(ring), p->dec_, &p->writer_, std::move(profile));
  if (!running)
    return std::unexpected(running.error());
  p->collector_ = std::move(*running);
  return p;
}

live_kernel_facts trace_pipeline::kernel_facts()
{
  // Read on the decoding thread while the main thread waits; the maps outlive the pipeline.
  live_kernel_facts k{probes_.losses().total(), std::nullopt};
  for (const auto& r : probes_.reports())
    if (r.name == "pagecache" && r.live) {
      uint64_t misses = 0;
      for (const auto& [key, c] : probes_.page_cache_counts())
        misses += c.added > c.dirtied ? c.added - c.dirtied : 0;
      k.cache_misses = misses;
    }
  return k;
}

result<> trace_pipeline::finish()
{
  auto detached = probes_.detach();
  auto drained = collector_->stop();
  if (!collector_->recording_trouble().empty())
    std::fprintf(stderr, "datacrumbs: %s\n", collector_->recording_trouble().c_str());
  lost_ = probes_.losses();
  ended_ = std::chrono::steady_clock::now();
  dec_.finish_trace();
  for (const auto& [key, counts] : probes_.page_cache_counts()) dec_.decode_page_cache(key, counts);
  dec_.write_page_cache_counters(epoch_now_us());
  write_end_snapshots(writer_, snapshots_, root_pid_);
  auto finished = writer_.finish(lost_);
  // The line index beside the trace (built while it was written, when asked for): without it
  // the trace is still whole, so its trouble is a warning.
  if (const auto& indexed = writer_.file().index_status(); finished && !indexed)
    std::fprintf(stderr, "datacrumbs: %s (the trace itself is complete)\n", indexed.error().message.c_str());
  if (!detached)
    return detached;
  if (!drained)
    return drained;
  return finished;
}

run_facts trace_pipeline::facts(std::vector<std::string> command, int exit_code,
                                const std::string& trace_path, uint64_t interval_ms) const
{
  run_facts f{
      std::move(command), exit_code,  writer_.events_written(), writer_.counters_written(), lost_, trace_path,
      interval_ms,        elapsed_s()};
  f.events_unwritten = writer_.events_unwritten();
  f.counters_unwritten = writer_.counters_unwritten();
  return f;
}

nlohmann::json trace_pipeline::summary_json(const run_facts& facts) const
{
  nlohmann::json j = dc::summary_json(summary_, dec_.state().processes, dec_.state().names, facts);
  j["systems"] = systems_json(summary_, dec_.state().processes, rules_);
  j["uprobes"] = uprobes_json(probes_, summary_, dec_.state().processes);
  return j;
}

std::string trace_pipeline::summary_text(const run_facts& facts) const
{
  return dc::summary_text(summary_, dec_.state().processes, facts) +
         summary_.files().top_text(dec_.state().names, 5) +
         systems_text(systems_json(summary_, dec_.state().processes, rules_)) +
         uprobe_entries_text(uprobes_json(probes_, summary_, dec_.state().processes)["entries"]);
}

}  // namespace dc
