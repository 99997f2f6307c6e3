#include "analyze/analysis.h"

#include "analyze/diagnostics.h"

namespace dc::analyze {

void analysis::merge(const analysis& o)
{
  inputs.merge(o.inputs);
  names.merge(o.names);
  run.merge(o.run);
  layers.merge(o.layers);
  timeline.merge(o.timeline);
  counters.merge(o.counters);
  snapshots.merge(o.snapshots);
  clock.merge(o.clock);
}

nlohmann::json analysis::partial() const
{
  return {{"datacrumbs_partial", partial_version},
          {"inputs", inputs.partial()},
          {"names", names.partial()},
          {"run", run.partial()},
          {"layers", layers.partial()},
          {"timeline", timeline.partial()},
          {"counters", counters.partial()},
          {"snapshots", snapshots.partial()},
          {"clock", clock.partial()}};
}

dc::result<analysis> analysis::from_partial(const nlohmann::json& j)
{
  if (!j.is_object() || !j.contains("datacrumbs_partial") || j["datacrumbs_partial"] != partial_version)
    return dc::fail("not a version-" + std::to_string(partial_version) + " datacrumbs partial result");
  analysis a;
  auto section = [&](const char* key, auto& into, auto parse) -> dc::result<> {
    if (!j.contains(key))
      return dc::fail(std::string("no \"") + key + "\" section");
    auto s = parse(j.at(key));
    if (!s)
      return std::unexpected(s.error());
    into = std::move(*s);
    return {};
  };
  for (auto r : {section("inputs", a.inputs, inputs_section::from_partial),
                 section("names", a.names, names_section::from_partial),
                 section("run", a.run, run_section::from_partial),
                 section("layers", a.layers, layers_section::from_partial),
                 section("timeline", a.timeline, timeline_section::from_partial),
                 section("counters", a.counters, counter_sections::from_partial),
                 section("snapshots", a.snapshots, snapshots::from_partial),
                 section("clock", a.clock, clock_section::from_partial)})
    if (!r)
      return std::unexpected(r.error());
  return a;
}

nlohmann::json analysis::report(uint64_t bin_ms) const
{
  const name_map& n = names.names;
  nlohmann::json layer_json = layers.report(n, run.wall_s());
  nlohmann::json time_json = timeline.report(n, run, bin_ms);
  nlohmann::json j = {{"version", report_version},
                      {"inputs", inputs.report()},
                      {"run", run.report(n)},
                      {"layers", layer_json["layers"]},
                      {"layer_time", layer_json["layer_time"]},
                      {"files", nlohmann::json::array()},
                      {"files_unattributed", nlohmann::json::object()},
                      {"amplification", nlohmann::json::object()},
                      {"page_cache", nlohmann::json::object()},
                      {"network", nlohmann::json::object()},
                      {"diagnostics", nlohmann::json::array()},
                      {"snapshots", snapshots.report(n)},
                      {"timeseries", time_json["timeseries"]},
                      {"heatmap", time_json["heatmap"]},
                      {"clock", clock.report(n, run.hosts)}};
  j.update(counters.report(n, run));
  // Each process's I/O cost split (the HTML's per-process bars): its POSIX files' Darshan times.
  std::map<std::pair<std::string, uint64_t>, nlohmann::json> cost;
  for (auto& [key, c] : counters.files.io_cost_us(n))
    cost[{host_name(key.first, n), key.second}] = std::move(c);
  for (auto& p : j["run"]["processes"]) {
    auto it = cost.find({p["host"].get<std::string>(), p["pid"].get<uint64_t>()});
    p["io_cost_us"] = it != cost.end() ? it->second : nlohmann::json{{"read", 0}, {"write", 0}, {"meta", 0}};
  }
  j["diagnostics"] = diagnose(j);
  return j;
}

}  // namespace dc::analyze
