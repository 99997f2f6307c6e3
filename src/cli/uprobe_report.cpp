#include "cli/uprobe_report.h"

#include <algorithm>

namespace dc {

namespace {

// Whether process pid made a call of the entry (its layer in the summary is the entry's name).
bool called(const summary_builder& summary, process_key process, const std::string& category)
{
  auto p = summary.per_process().find(process);
  if (p == summary.per_process().end())
    return false;
  auto layer = p->second.ops.find(category);
  if (layer == p->second.ops.end())
    return false;
  return std::ranges::any_of(layer->second, [](const auto& op) { return op.second.count > 0; });
}

}  // namespace

nlohmann::json uprobe_entries_json(const std::vector<uprobe_entry>& entries,
                                   const std::vector<uprobe_placement>& placements,
                                   const summary_builder& summary, const process_table& processes)
{
  nlohmann::json all = nlohmann::json::array();
  for (const uprobe_entry& e : entries) {
    nlohmann::json found = nlohmann::json::array();
    std::vector<uint32_t> found_pids;
    for (const uprobe_placement& p : placements) {
      if (p.category != e.category)
        continue;
      nlohmann::json where = {{"object", p.object}, {"functions", p.functions}};
      if (!p.pids.empty())
        where["pids"] = p.pids;
      found.push_back(std::move(where));
      found_pids.insert(found_pids.end(), p.pids.begin(), p.pids.end());
    }
    nlohmann::json nothing = nlohmann::json::array();
    for (const auto& [key, info] : processes) {
      if (called(summary, key, e.category))
        continue;
      // Processes folded by command (summary.h): none of them called it; whether it was found
      // in them is no longer known per process.
      if (info.folded)
        nothing.push_back({{"command", info.command}, {"processes", info.folded}});
      else if (std::ranges::find(found_pids, info.pid) == found_pids.end())
        nothing.push_back({{"pid", info.pid}, {"comm", info.comm}});
    }
    all.push_back({{"name", e.category}, {"found_in", std::move(found)}, {"nothing_in", std::move(nothing)}});
  }
  return all;
}

std::string uprobe_entries_text(const nlohmann::json& entries)
{
  std::string out;
  for (const auto& e : entries) {
    std::string line = "uprobe entry '" + e["name"].get<std::string>() + "': ";
    if (e["found_in"].empty())
      line += "found nowhere";
    for (size_t i = 0; i < e["found_in"].size(); ++i) {
      const auto& w = e["found_in"][i];
      line += (i ? ", " : "found in ") + w["object"].get<std::string>() + " (" +
              std::to_string(w["functions"].get<size_t>()) + " functions" +
              (w.contains("pids") ? ", " + std::to_string(w["pids"].size()) + " processes" : "") + ")";
    }
    out += line + "\n";
    if (e["nothing_in"].empty())
      continue;
    // A fork storm leaves thousands of such processes: the line names the first few, the
    // summary's JSON every one.
    constexpr size_t named = 10;
    size_t n = 0, shown = 0;
    for (const auto& p : e["nothing_in"]) n += p.contains("processes") ? p["processes"].get<size_t>() : 1;
    out += "  no function of it found or called in " + std::to_string(n) +
           (n == 1 ? " process:" : " processes:");
    for (const auto& p : e["nothing_in"]) {
      if (p.contains("processes") || shown == named)
        continue;
      out.append(" ")
          .append(std::to_string(p["pid"].get<uint32_t>()))
          .append(" (")
          .append(p["comm"].get<std::string>())
          .append(")");
      ++shown;
    }
    if (n > shown)
      out += " and " + std::to_string(n - shown) + " more (all in the --summary JSON's uprobes.entries)";
    out += "\n";
  }
  return out;
}

}  // namespace dc
