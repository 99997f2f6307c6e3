#include "cli/trace_pipeline.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <tuple>

#include "core/clock.h"

namespace dc {

namespace {

std::string host_name()
{
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// Counts layers kept in the kernel, charged to files by name like the events are.
void feed_counters(const std::vector<counter_sample>& samples, decoder& dec, summary_builder& summary)
{
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, page_cache_counts> page_cache;
  for (const auto& c : samples) {
    if (c.layer != "PAGECACHE")
      continue;
    page_cache_counts& counts = page_cache[{c.pid, c.dev, c.ino}];
    if (c.name == "added")
      counts.added += c.value;
    else if (c.name == "dirtied")
      counts.dirtied += c.value;
    else if (c.name == "written_back")
      counts.written_back += c.value;
    else if (c.name == "evicted")
      counts.evicted += c.value;
  }
  for (const auto& [key, counts] : page_cache) {
    auto [pid, dev, ino] = key;
    uint64_t fhash = dec.hash_of_file(dc_file_ref{ino, dev, 0100000}, pid);
    summary.page_cache().add_kernel_counts(pid, fhash, counts);
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
    ev.add_arg("pages_written_back", static_cast<int64_t>(c.written_back));
    ev.add_arg("pages_evicted", static_cast<int64_t>(c.evicted));
    writer.write_event(ev, {dec.state().names, dec.state().processes});
  }
}

// How many user-space functions were probed, and how long attaching them took.
nlohmann::json uprobes_json(const session& probes)
{
  auto refused = probes.refused_functions();
  nlohmann::json j = {{"functions", probes.uprobe_targets().size() - refused.size()},
                      {"refused", refused},
                      {"attach_ms", 0.0}};
  for (const auto& r : probes.reports())
    if (r.name == "uprobe")
      j["attach_ms"] = static_cast<double>(r.attach_us) / 1000.0;
  return j;
}

uint64_t now_epoch_us()
{
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

trace_pipeline::trace_pipeline(session& probes, gzip_member_writer trace_file, uint32_t root_pid,
                               std::vector<system_rule> rules)
    : probes_(probes),
      rules_(std::move(rules)),
      writer_(std::move(trace_file), host_name(), root_pid),
      dec_(measure_clock_offset(), {&writer_, &summary_})
{
  writer_.write_clock(read_host_clock(dec_.state().clock));
  writer_.set_process_labeler([this](const process_info& p) { return system_label(p, rules_); });
  dec_.state().uprobes = probes_.uprobe_targets();
}

trace_pipeline::~trace_pipeline() = default;

result<std::unique_ptr<trace_pipeline>> trace_pipeline::start(session& probes, gzip_member_writer trace_file,
                                                              uint32_t root_pid,
                                                              std::vector<system_rule> rules)
{
  std::unique_ptr<trace_pipeline> p(
      new trace_pipeline(probes, std::move(trace_file), root_pid, std::move(rules)));
  std::unique_ptr<profile_reader> profile;
  if (probes.profile_fd() >= 0)
    profile = std::make_unique<profile_reader>(probes.profile_fd(), probes.profile_interval_ns());
  auto running = collector::start(probes.ring_fd(), p->dec_, &p->writer_, std::move(profile));
  if (!running)
    return std::unexpected(running.error());
  p->collector_ = std::move(*running);
  return p;
}

result<> trace_pipeline::finish()
{
  auto detached = probes_.detach();
  auto drained = collector_->stop();
  lost_ = probes_.losses();
  feed_counters(probes_.counters(), dec_, summary_);
  write_page_cache_counters(writer_, summary_, dec_, now_epoch_us());
  auto finished = writer_.finish(lost_);
  if (!detached)
    return detached;
  if (!drained)
    return drained;
  return finished;
}

nlohmann::json trace_pipeline::summary_json(const run_facts& facts) const
{
  nlohmann::json j = dc::summary_json(summary_, dec_.state().processes, dec_.state().names, facts);
  j["systems"] = systems_json(summary_, dec_.state().processes, rules_);
  j["uprobes"] = uprobes_json(probes_);
  return j;
}

std::string trace_pipeline::summary_text(const run_facts& facts) const
{
  return dc::summary_text(summary_, dec_.state().processes, facts) +
         summary_.files().top_text(dec_.state().names, 5) +
         systems_text(systems_json(summary_, dec_.state().processes, rules_));
}

}  // namespace dc
