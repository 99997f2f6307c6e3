#include "sink/summary.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/category.h"
#include "core/map_entry.h"
#include "core/short_text.h"

namespace dc {

namespace {

op_stats& op_of(io_totals& t, const trace_event& ev)
{
  return map_entry(t.ops, ev.category).second[std::string(ev.name)];
}

void add_to(io_totals& t, op_stats& s, layer_flow*& flow, const trace_event& ev)
{
  for_each_moved_file(ev, [&](uint64_t, io_dir dir) {
    if (!flow)
      flow = &map_entry(t.flows, ev.category).second;
    add_flow(*flow, dir, ev);
  });
  s.count += ev.count;
  s.bytes += ev.bytes;
  s.time_us += ev.dur_us;
  if (ev.category == category::block && !ev.counter && !ev.untimed)
    s.latency.add(ev.dur_us);
}

nlohmann::json layers_json(const layer_ops& ops)
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [layer, by_op] : ops)
    for (const auto& [op, s] : by_op) {
      j[layer][op] = {{"count", s.count}, {"bytes", s.bytes}, {"time_us", s.time_us}};
      if (s.latency.count)
        j[layer][op]["latency_us"] = s.latency.report();
    }
  return j;
}

// " (ring_full 32, skipped 1)": the kinds the events lost are of (those loss_counts::total sums),
// each with any; empty with none.
std::string lost_by_kind(const loss_counts& lost)
{
  std::string kinds;
  lost.for_each_event_kind([&kinds](std::string_view name, uint64_t n) {
    if (n)
      kinds += (kinds.empty() ? " (" : ", ") + std::string(name) + " " + std::to_string(n);
  });
  return kinds.empty() ? kinds : kinds + ")";
}

}  // namespace

uint64_t processes_in_all(const process_table& processes)
{
  uint64_t n = 0;
  for (const auto& [key, info] : processes) n += info.folded ? info.folded : 1;
  return n;
}

layer_flow flow_of(const io_totals& t, std::string_view layer)
{
  auto it = t.flows.find(layer);
  return it == t.flows.end() ? layer_flow{} : it->second;
}

nlohmann::json ratio_json(uint64_t num, uint64_t den)
{
  return den == 0 ? nlohmann::json(nullptr)
                  : nlohmann::json(static_cast<double>(num) / static_cast<double>(den));
}

nlohmann::json amplification_json(const io_totals& t)
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [layer, f] : t.flows)
    j["bytes"][layer] = {{"read", f.read_bytes}, {"write", f.write_bytes}};
  layer_flow app = flow_of(t, category::posix), dev = flow_of(t, category::block);
  j["read"] = ratio_json(dev.read_bytes, app.read_bytes);
  j["write"] = ratio_json(dev.write_bytes, app.write_bytes);
  return j;
}

summary_builder::recent_op& summary_builder::recent(const trace_event& ev) const
{
  constexpr size_t most_recent = 16;
  auto is_ev = [&ev](const recent_op& r) __attribute__((always_inline))
  {
    return r.key == ev.instance() && same_text(r.name, ev.name) && same_text(r.category, ev.category);
  };
  auto found = [this](size_t i) -> recent_op& {
    if (i != last_) {
      before_last_ = last_;
      last_ = i;
    }
    return recent_[i];
  };
  for (size_t i : {last_, before_last_})
    if (i < recent_.size() && is_ev(recent_[i]))
      return found(i);
  for (size_t i = 0; i < recent_.size(); ++i)
    if (is_ev(recent_[i]))
      return found(i);
  size_t i = recent_.size() < most_recent ? recent_.size() : next_replaced_++ % most_recent;
  if (i == recent_.size())
    recent_.emplace_back();
  recent_op& r = found(i);
  io_totals& process = per_process_[ev.instance()];
  r = {.key = ev.instance(),
       .category = std::string(ev.category),
       .name = std::string(ev.name),
       .all = &op_of(totals_, ev),
       .process = &op_of(process, ev),
       .process_totals = &process,
       .all_flow = nullptr,
       .process_flow = nullptr};
  return r;
}

uint64_t summary_builder::moved_bytes(process_key process) const
{
  settle();
  auto it = per_process_.find(process);
  if (it == per_process_.end())
    return 0;
  layer_flow app = flow_of(it->second, category::posix);
  return app.read_bytes + app.write_bytes;
}

void summary_builder::fold(process_key from, process_key into)
{
  settle();
  // The recent ops point into `from`'s maps.
  std::erase_if(recent_, [from](const recent_op& r) { return r.key == from; });
  next_replaced_ = 0;
  auto it = per_process_.find(from);
  if (it != per_process_.end()) {
    io_totals& to = per_process_[into];
    for (auto& [layer, by_op] : it->second.ops)
      for (auto& [op, s] : by_op) {
        op_stats& t = map_entry(to.ops, layer).second[op];
        t.count += s.count;
        t.bytes += s.bytes;
        t.time_us += s.time_us;
        t.latency.merge(s.latency);
      }
    add_flows(to.flows, it->second.flows);
    per_process_.erase(it);
  }
  page_cache_.fold(from, into);
  files_.fold(from, into);
}

void summary_builder::add(const trace_event& ev)
{
  if (event_sums::summable(ev))
    sums_.add(ev, pages_read_by(ev), [this](const trace_event& sum) { add_now(sum); });
  else
    add_now(ev);
}

void summary_builder::settle() const
{
  sums_.drain([this](const trace_event& sum) { add_now(sum); });
}

void summary_builder::add_now(const trace_event& ev) const
{
  recent_op& r = recent(ev);
  add_to(totals_, *r.all, r.all_flow, ev);
  add_to(*r.process_totals, *r.process, r.process_flow, ev);
  page_cache_.add_read(ev);
  files_.add(ev);
}

nlohmann::json summary_json(const summary_builder& s, const process_table& processes, const name_table& names,
                            const run_facts& run)
{
  nlohmann::json j;
  j["command"] = run.command;
  j["exit_code"] = run.exit_code;
  j["trace"] = run.trace_path;
  j["mode"] = run.profile_interval_ms ? "profile" : "trace";
  if (run.profile_interval_ms)
    j["interval_ms"] = run.profile_interval_ms;
  j["elapsed_s"] = run.elapsed_s;
  // Rates over the run's elapsed time (null for a run too short to measure).
  auto per_s = [&](uint64_t n) {
    return run.elapsed_s > 0 ? nlohmann::json(static_cast<double>(n) / run.elapsed_s)
                             : nlohmann::json(nullptr);
  };
  j["events"] = {{"written", run.events_written},
                 {"counters", run.counters_written},
                 {"unwritten", run.events_unwritten},
                 {"counters_unwritten", run.counters_unwritten},
                 {"lost", run.lost.total()},
                 {"written_per_s", per_s(run.events_written)},
                 {"counters_per_s", per_s(run.counters_written)}};
  run.lost.for_each([&](std::string_view kind, uint64_t n) { j["events"]["lost_" + std::string(kind)] = n; });
  j["layers"] = layers_json(s.totals().ops);
  j["amplification"] = amplification_json(s.totals());
  if (!s.page_cache().empty()) {
    j["page_cache"] = s.page_cache().totals_json();
    j["page_cache_files"] = s.page_cache().files_json(names);
  }
  j["files"] = s.files().json(names);
  nlohmann::json procs = nlohmann::json::object(), folded = nlohmann::json::object();
  for (const auto& [key, info] : processes) {
    auto ops = s.per_process().find(key);
    nlohmann::json p = {{"command", info.command}};
    if (info.folded) {
      p["processes"] = info.folded;
      p["threads"] = info.folded_threads;
    } else {
      p["parent"] = info.parent;
      p["threads"] = info.threads.size();
      if (generation_of(key) > 0)
        p["pid"] = info.pid;  // the key is PID.N: the run's Nth process with this pid
    }
    if (info.rank >= 0) {
      p["rank"] = info.rank;
      p["size"] = info.size;
    }
    bool seen = ops != s.per_process().end();
    p["layers"] = seen ? layers_json(ops->second.ops) : nlohmann::json::object();
    p["amplification"] = seen ? amplification_json(ops->second) : amplification_json({});
    if (!s.page_cache().empty())
      p["page_cache"] = s.page_cache().process_json(key);
    p["files"] = s.files().process_json(key, names);
    if (info.folded)
      folded[info.command] = std::move(p);
    else
      procs[process_label(key)] = std::move(p);
  }
  j["processes"] = std::move(procs);
  // Exited processes past the detail kept (--process-detail), totalled by command.
  if (!folded.empty())
    j["processes_folded"] = std::move(folded);
  j["processes_in_all"] = processes_in_all(processes);
  return j;
}

std::string summary_text(const summary_builder& s, const process_table& processes, const run_facts& run)
{
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-8s %-18s %10s %14s %12s\n", "layer", "operation", "count", "bytes",
                "time_us");
  out += line;
  for (const auto& [layer, by_op] : s.totals().ops)
    for (const auto& [op, st] : by_op) {
      std::snprintf(line, sizeof(line), "%-8s %-18s %10llu %14llu %12llu\n", layer.c_str(), op.c_str(),
                    static_cast<unsigned long long>(st.count), static_cast<unsigned long long>(st.bytes),
                    static_cast<unsigned long long>(st.time_us));
      out += line;
    }
  layer_flow app = flow_of(s.totals(), category::posix), dev = flow_of(s.totals(), category::block);
  auto amp = [](uint64_t d, uint64_t a) { return a ? static_cast<double>(d) / static_cast<double>(a) : 0.0; };
  std::snprintf(
      line, sizeof(line),
      "amplification (device/application bytes): read %.2fx (%llu / %llu), write %.2fx (%llu / %llu)\n",
      amp(dev.read_bytes, app.read_bytes), static_cast<unsigned long long>(dev.read_bytes),
      static_cast<unsigned long long>(app.read_bytes), amp(dev.write_bytes, app.write_bytes),
      static_cast<unsigned long long>(dev.write_bytes), static_cast<unsigned long long>(app.write_bytes));
  out += line;
  if (!s.page_cache().empty()) {
    nlohmann::json pc = s.page_cache().totals_json();
    std::snprintf(line, sizeof(line), "page cache: hits %llu, misses %llu, hit ratio %s\n",
                  static_cast<unsigned long long>(pc["hits"].get<uint64_t>()),
                  static_cast<unsigned long long>(pc["misses"].get<uint64_t>()),
                  pc["hit_ratio"].is_null() ? "-" : std::to_string(pc["hit_ratio"].get<double>()).c_str());
    out += line;
  }
  uint64_t written = run.profile_interval_ms ? run.counters_written : run.events_written;
  std::snprintf(line, sizeof(line),
                "processes: %llu   %s written: %llu (%.0f/s over %.3f s)   events lost: %llu",
                static_cast<unsigned long long>(processes_in_all(processes)),
                run.profile_interval_ms ? "counters" : "events", static_cast<unsigned long long>(written),
                run.elapsed_s > 0 ? static_cast<double>(written) / run.elapsed_s : 0.0, run.elapsed_s,
                static_cast<unsigned long long>(run.lost.total()));
  out += line;
  out += lost_by_kind(run.lost) + "\n";
  if (uint64_t full = run.lost.kernel[DC_LOSS_PROFILE_FULL]) {
    // The map holds about three intervals' counters (read two intervals after they end).
    std::snprintf(line, sizeof(line),
                  "profile counters with no room in the kernel's map: %llu (more distinct process, file "
                  "and operation counters in about three intervals than it holds; a shorter "
                  "--interval-ms holds fewer)\n",
                  static_cast<unsigned long long>(full));
    out += line;
  }
  if (uint64_t untimed = run.lost.kernel[DC_LOSS_BLOCK_END_UNSEEN]) {
    // Not lost: traced with their bytes and no service time (args.end_unseen).
    std::snprintf(line, sizeof(line),
                  "block requests traced without their end (the kernel ran no tracing program for their "
                  "completion): %llu\n",
                  static_cast<unsigned long long>(untimed));
    out += line;
  }
  if (run.lost.block_unended) {
    std::snprintf(line, sizeof(line),
                  "block requests started and not seen to end when tracing stopped (in flight, or ended "
                  "unseen): %llu\n",
                  static_cast<unsigned long long>(run.lost.block_unended));
    out += line;
  }
  uint64_t folded = 0, commands = 0;
  for (const auto& [key, info] : processes)
    if (info.folded) {
      folded += info.folded;
      ++commands;
    }
  if (folded) {
    std::snprintf(line, sizeof(line),
                  "processes folded by command (past --process-detail): %llu, in %llu commands\n",
                  static_cast<unsigned long long>(folded), static_cast<unsigned long long>(commands));
    out += line;
  }
  if (run.events_unwritten || run.counters_unwritten) {
    std::snprintf(line, sizeof(line), "not written (the trace file failed): %llu events, %llu counters\n",
                  static_cast<unsigned long long>(run.events_unwritten),
                  static_cast<unsigned long long>(run.counters_unwritten));
    out += line;
  }
  out += "trace: " + run.trace_path + "\n";
  return out;
}

}  // namespace dc
