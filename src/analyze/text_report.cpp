// The text report: the report JSON's main facts as aligned tables, for a terminal.
#include <cstdio>
#include <string>

#include "analyze/analysis.h"
#include "analyze/counters_text.h"
#include "analyze/timeline_text.h"

#include "analyze/text_format.h"

namespace dc::analyze {

namespace {

std::string num_or_dash(const nlohmann::json& v, const char* f = "%.1f")
{
  if (v.is_null())
    return "-";
  return fmt(f, v.get<double>());
}

unsigned long long u(const nlohmann::json& v)
{
  return v.is_null() ? 0 : v.get<unsigned long long>();
}

}  // namespace

std::string text_report(const nlohmann::json& r)
{
  std::string out;
  const auto& in = r["inputs"];
  out += fmt("inputs: %llu files, %.1f MB, %llu lines", u(in["files"]), u(in["bytes"]) / 1e6, u(in["lines"]));
  if (!in["skipped"].empty()) {
    out += "; skipped:";
    for (const auto& [k, v] : in["skipped"].items()) out += fmt(" %s %llu", k.c_str(), u(v));
  }
  if (in.contains("unreadable") && u(in["unreadable"]["bytes"]) > 0) {
    const auto& un = in["unreadable"];
    out += fmt("; unreadable: %llu bytes", u(un["bytes"]));
    if (u(un["corrupt_members"]) > 0)
      out += fmt(" (%llu corrupt gzip members, at least %llu lines lost)", u(un["corrupt_members"]),
                 u(un["corrupt_lines_at_least"]));
  }
  out += "\n";
  const auto& run = r["run"];
  std::string hosts;
  for (const auto& h : run["hosts"]) hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
  out += fmt("run: %zu host(s) (%s), %zu processes, %llu threads, wall %.3f s\n", run["hosts"].size(),
             hosts.c_str(), run["processes"].size(), u(run["threads"]), run["wall_s"].get<double>());
  out += fmt("events: %llu spans, %llu counter samples, %llu metadata lines", u(run["events"]),
             u(run["counters"]), u(run["metadata"]));
  if (!run["lost"].empty()) {
    out += "; lost:";
    for (const auto& [k, v] : run["lost"].items()) out += fmt(" %s %llu", k.c_str(), u(v));
  }
  out += '\n';
  out += clock_text(r["clock"]);
  out += '\n';
  size_t shown = 0;
  out += fmt("%-22s %-8s %-6s %-16s %10s %14s\n", "process", "pid", "rank", "name", "events", "bytes");
  for (const auto& p : run["processes"]) {
    if (u(p["events"]) == 0)
      continue;
    if (++shown > 20) {
      out += fmt("... %zu processes in all (see --json)\n", run["processes"].size());
      break;
    }
    out +=
        fmt("%-22s %-8llu %-6s %-16s %10llu %14llu\n", p["host"].get<std::string>().c_str(), u(p["pid"]),
            p["rank"].is_null() ? "-" : std::to_string(p["rank"].get<long long>()).c_str(),
            p["name"].is_null() ? "-" : p["name"].get<std::string>().c_str(), u(p["events"]), u(p["bytes"]));
  }
  out += "\n";
  out += fmt("%-9s %-20s %10s %14s %12s %10s %9s %9s %9s %9s %9s\n", "layer", "operation", "count", "bytes",
             "time_us", "ops/s", "MB/s", "p50_us", "p90_us", "p99_us", "max_us");
  for (const auto& l : r["layers"]) {
    const auto& lat = l["latency_us"];
    out += fmt("%-9s %-20s %10llu %14llu %12llu %10s %9s %9s %9s %9s %9s\n",
               l["layer"].get<std::string>().c_str(), l["op"].get<std::string>().c_str(), u(l["count"]),
               u(l["bytes"]), u(l["time_us"]), num_or_dash(l["ops_per_s"]).c_str(),
               num_or_dash(l["mb_per_s"], "%.2f").c_str(), num_or_dash(lat["p50"]).c_str(),
               num_or_dash(lat["p90"]).c_str(), num_or_dash(lat["p99"]).c_str(),
               num_or_dash(lat["max"], "%.0f").c_str());
  }
  out += "\n";
  out += fmt("%-9s %10s %14s %14s %16s %14s\n", "layer", "count", "bytes", "time_us", "unoverlapped_us",
             "top_level_us");
  for (const auto& l : r["layer_time"])
    out += fmt("%-9s %10llu %14llu %14llu %16llu %14llu\n", l["layer"].get<std::string>().c_str(),
               u(l["count"]), u(l["bytes"]), u(l["time_us"]), u(l["unoverlapped_us"]), u(l["top_level_us"]));
  out += "\n";
  out += timeline_text(r);
  // Appended in steps: "\n" + a temporary trips GCC 12's -Wrestrict at -O3 (a false positive
  // inside libstdc++'s operator+, GCC bug 105329), and this way makes no temporary.
  out += "\n";
  out += counters_text(r);
  if (std::string snaps = snapshots_text(r["snapshots"]); !snaps.empty()) {
    out += "\n";
    out += snaps;
  }
  return out;
}

}  // namespace dc::analyze
