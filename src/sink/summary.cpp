#include "sink/summary.h"

#include <cstdio>

namespace dc {

namespace {

void add_to(layer_ops& ops, const trace_event& ev)
{
  auto layer = ops.find(ev.category);
  if (layer == ops.end())
    layer = ops.emplace(std::string(ev.category), std::map<std::string, op_stats>{}).first;
  op_stats& s = layer->second[std::string(ev.name)];
  ++s.count;
  s.bytes += ev.bytes;
  s.time_us += ev.dur_us;
}

nlohmann::json layers_json(const layer_ops& ops)
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [layer, by_op] : ops)
    for (const auto& [op, s] : by_op)
      j[layer][op] = {{"count", s.count}, {"bytes", s.bytes}, {"time_us", s.time_us}};
  return j;
}

}  // namespace

void summary_builder::add(const trace_event& ev)
{
  add_to(totals_, ev);
  add_to(per_process_[ev.pid], ev);
}

nlohmann::json summary_json(const summary_builder& s, const process_table& processes, const run_facts& run)
{
  nlohmann::json j;
  j["command"] = run.command;
  j["exit_code"] = run.exit_code;
  j["trace"] = run.trace_path;
  j["events"] = {{"written", run.events_written},
                 {"lost", run.lost.total()},
                 {"lost_ring_full", run.lost.ring_full},
                 {"lost_no_state", run.lost.no_state},
                 {"lost_skipped", run.lost.skipped}};
  j["layers"] = layers_json(s.totals());
  nlohmann::json procs = nlohmann::json::object();
  for (const auto& [pid, info] : processes) {
    auto ops = s.per_process().find(pid);
    nlohmann::json p = {{"command", info.command}, {"parent", info.parent}, {"threads", info.threads.size()}};
    p["layers"] = ops == s.per_process().end() ? nlohmann::json::object() : layers_json(ops->second);
    procs[std::to_string(pid)] = std::move(p);
  }
  j["processes"] = std::move(procs);
  return j;
}

std::string summary_text(const summary_builder& s, const process_table& processes, const run_facts& run)
{
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-8s %-18s %10s %14s %12s\n", "layer", "operation", "count", "bytes",
                "time_us");
  out += line;
  for (const auto& [layer, by_op] : s.totals())
    for (const auto& [op, st] : by_op) {
      std::snprintf(line, sizeof(line), "%-8s %-18s %10llu %14llu %12llu\n", layer.c_str(), op.c_str(),
                    static_cast<unsigned long long>(st.count), static_cast<unsigned long long>(st.bytes),
                    static_cast<unsigned long long>(st.time_us));
      out += line;
    }
  std::snprintf(line, sizeof(line), "processes: %zu   events written: %llu   events lost: %llu\n",
                processes.size(), static_cast<unsigned long long>(run.events_written),
                static_cast<unsigned long long>(run.lost.total()));
  out += line;
  out += "trace: " + run.trace_path + "\n";
  return out;
}

}  // namespace dc
