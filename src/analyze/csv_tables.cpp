#include "analyze/csv_tables.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "analyze/csv_file.h"

namespace dc::analyze {

namespace {

using json = nlohmann::json;
using flat_row = std::vector<std::pair<std::string, const json*>>;

bool contains(const std::vector<std::string>& names, const std::string& name)
{
  return std::find(names.begin(), names.end(), name) != names.end();
}

void flatten(const json& object, const std::string& prefix, const csv_table_spec& spec, flat_row& out)
{
  for (const auto& [key, value] : object.items()) {
    if (value.is_object() && prefix.empty() && contains(spec.unprefixed, key))
      flatten(value, "", spec, out);
    else if (value.is_object() && !value.empty())
      flatten(value, prefix + key + "_", spec, out);
    else
      out.emplace_back(prefix + key, &value);
  }
}

std::string cell(const json* value)
{
  if (!value || value->is_null())
    return "";
  if (value->is_string())
    return value->get<std::string>();
  return value->dump();  // numbers as JSON writes them (shortest exact form), arrays as JSON text
}

// `object` under `key` of `parent`, or null.
const json& member(const json& parent, const char* key)
{
  static const json none;
  if (!parent.is_object())
    return none;
  auto it = parent.find(key);
  return it == parent.end() ? none : *it;
}

const json& array_or_empty(const json& value)
{
  static const json empty = json::array();
  return value.is_array() ? value : empty;
}

const json& object_or_empty(const json& value)
{
  static const json empty = json::object();
  return value.is_object() ? value : empty;
}

// A section that is one object of totals: one row.
json one_row(const json& object)
{
  json rows = json::array();
  if (object.is_object() && !object.empty())
    rows.push_back(object);
  return rows;
}

// Each row of `rows` with its `list` member expanded: one output row per element, the parent's
// `keep` fields first, then the element's.
json expand(const json& rows, const char* list, const std::vector<std::string>& keep)
{
  json out = json::array();
  for (const json& row : array_or_empty(rows)) {
    json parent = json::object();
    for (const std::string& key : keep)
      if (row.contains(key))
        parent[key] = row[key];
    for (const json& element : member(row, list)) {
      json r = parent;
      for (const auto& [key, value] : element.items()) r[key] = value;
      out.push_back(std::move(r));
    }
  }
  return out;
}

// A series section ({"bin_ms","start_us", KEY: {NAME: {"bytes":[..],"ops":[..]}}} or rows of
// {"process","bytes":[..]}) in long form: one row per name and bin.
json long_series(const json& section, const json& groups, const char* group_column)
{
  json out = json::array();
  const json& bin_ms = member(section, "bin_ms");
  int64_t bin_us = bin_ms.is_number() ? std::llround(bin_ms.get<double>() * 1000) : 0;
  int64_t start_us = member(section, "start_us").is_number() ? member(section, "start_us").get<int64_t>() : 0;
  for (const auto& [name, series] : groups.items()) {
    size_t bins = 0;
    for (const auto& [key, values] : series.items())
      if (values.is_array())
        bins = std::max(bins, values.size());
    for (size_t i = 0; i < bins; ++i) {
      json r = json::object();
      r[group_column] = name;
      r["bin"] = i;
      r["start_us"] = start_us + static_cast<int64_t>(i) * bin_us;
      r["end_us"] = start_us + static_cast<int64_t>(i + 1) * bin_us;
      for (const auto& [key, values] : series.items())
        if (!values.is_array())
          r[key] = values;  // the row's own facts (a heat-map row's host, pid, rank)
        else if (i < values.size())
          r[key] = values[i];
      out.push_back(std::move(r));
    }
  }
  return out;
}

// The heat map's rows keyed by their process label.
json heatmap_groups(const json& heatmap)
{
  json groups = json::object();
  for (const json& row : member(heatmap, "rows")) {
    json series = row;
    series.erase("process");
    series["layer"] = member(heatmap, "layer");  // the layer whose bytes the map shows
    groups[member(row, "process").is_string() ? member(row, "process").get<std::string>() : row.dump()] =
        series;
  }
  return groups;
}

// Hosts keyed objects ({"host": {...}}) as rows with a host column.
json host_rows(const json& by_host)
{
  json rows = json::array();
  for (const auto& [host, spec] : object_or_empty(by_host).items()) {
    json r = json::object();
    r["host"] = host;
    for (const auto& [key, value] : spec.items()) r[key] = value;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

dc::result<size_t> write_json_table(const std::string& path, const json& rows, const csv_table_spec& spec)
{
  std::vector<flat_row> flat;
  std::vector<std::string> columns = spec.first;
  std::unordered_map<std::string, size_t> column_of;
  for (size_t i = 0; i < columns.size(); ++i) column_of.emplace(columns[i], i);
  for (const json& row : array_or_empty(rows)) {
    flat_row& f = flat.emplace_back();
    if (row.is_object())
      flatten(row, "", spec, f);
    else
      f.emplace_back("value", &row);
    for (const auto& [name, value] : f)
      if (column_of.emplace(name, columns.size()).second)
        columns.push_back(name);
  }
  std::vector<std::string_view> header(columns.begin(), columns.end());
  auto out = csv_file::create(path, header);
  if (!out)
    return std::unexpected(out.error());
  std::vector<const json*> cells(columns.size());
  for (const flat_row& f : flat) {
    std::fill(cells.begin(), cells.end(), nullptr);
    for (const auto& [name, value] : f) cells[column_of.at(name)] = value;
    for (const json* value : cells) out->field(cell(value));
    out->end_row();
  }
  if (auto closed = out->close(); !closed)
    return std::unexpected(closed.error());
  return flat.size();
}

dc::result<> write_report_tables(const json& report, const std::string& dir)
{
  const json& amplification = member(report, "amplification");
  const json& page_cache = member(report, "page_cache");
  const json& snapshots = member(report, "snapshots");
  json page_cache_totals = page_cache;
  if (page_cache_totals.is_object())
    page_cache_totals.erase("processes");
  json network_totals = member(report, "network");
  // The network section's lists (per process, per connection, ...) are tables of their own.
  json network_lists = json::object();
  for (const auto& [key, value] : object_or_empty(network_totals).items())
    if (value.is_array())
      network_lists[key] = value;
  for (const auto& [key, value] : network_lists.items()) network_totals.erase(key);
  json system = host_rows(member(snapshots, "system"));
  // The seed's table: the run's totals first (as the text's "(run)" row), then each system.
  json amp_rows = json::array();
  if (member(amplification, "total").is_object()) {
    json run = member(amplification, "total");
    run["system"] = "(run)";
    amp_rows.push_back(std::move(run));
  }
  for (const json& s : array_or_empty(member(amplification, "systems"))) amp_rows.push_back(s);
  // Processes named as everywhere else: "host:pid".
  json amp_processes = array_or_empty(member(amplification, "processes"));
  for (json& p : amp_processes)
    if (p.is_object() && !p.contains("process"))
      p["process"] = cell(&member(p, "host")) + ":" + cell(&member(p, "pid"));

  struct table {
    std::string name;
    json rows;
    csv_table_spec spec;
  };
  std::vector<table> tables = {
      {"files.csv", member(report, "files"), {{"file", "module"}, {"counters", "fcounters"}}},
      {"layers.csv",
       member(report, "layers"),
       {{"layer", "op", "count", "bytes", "time_us", "ops_per_s", "mb_per_s", "latency_us_p50",
         "latency_us_p90", "latency_us_p99", "latency_us_max"},
        {}}},
      {"layer_time.csv",
       member(report, "layer_time"),
       {{"layer", "time_us", "unoverlapped_us", "top_level_us", "count", "bytes"}, {}}},
      {"amplification.csv",
       amp_rows,
       {{"system", "R_AMP", "W_AMP", "SYS_R", "SYS_W", "VFS_R", "VFS_W", "BLK_R", "BLK_W"}, {}}},
      {"amplification_files.csv", member(amplification, "files"), {{"file"}, {}}},
      {"amplification_processes.csv", amp_processes, {{"process", "host", "pid"}, {}}},
      {"page_cache.csv",
       one_row(page_cache_totals),
       {{"hits", "misses", "hit_ratio", "written_back", "evicted"}, {}}},
      {"page_cache_processes.csv", member(page_cache, "processes"), {{}, {}}},
      {"network.csv", one_row(network_totals), {{"bytes_sent", "bytes_received", "connections"}, {}}},
      {"timeseries.csv",
       long_series(member(report, "timeseries"), member(member(report, "timeseries"), "layers"), "layer"),
       {{"layer", "bin", "start_us", "end_us", "bytes", "ops"}, {}}},
      {"heatmap.csv",
       long_series(member(report, "heatmap"), heatmap_groups(member(report, "heatmap")), "process"),
       {{"process", "host", "pid", "rank", "layer", "bin", "start_us", "end_us", "bytes"}, {}}},
      {"diagnostics.csv", member(report, "diagnostics"), {{"rule", "severity", "message"}, {}}},
      {"snapshots/system.csv", system, {{"host"}, {}}},
      {"snapshots/block_devices.csv", expand(system, "block_devices", {"host"}), {{"host", "name"}, {}}},
      {"snapshots/mounts.csv",
       expand(system, "mounts", {"host"}),
       {{"host", "device", "mount_point", "fs_type"}, {}}},
      {"snapshots/processes.csv", member(snapshots, "processes"), {{"host", "pid", "ts_us", "command"}, {}}},
      {"snapshots/filesystem_snapshots.csv",
       member(snapshots, "filesystem"),
       {{"host", "dir", "when", "ts_us"}, {}}},
      {"snapshots/filesystem.csv",
       expand(member(snapshots, "filesystem"), "entries", {"host", "dir", "when", "ts_us"}),
       {{"host", "dir", "when", "ts_us", "path", "type", "size", "mtime_us"}, {}}},
  };
  for (auto& [name, list] : network_lists.items()) tables.push_back({"network_" + name + ".csv", list, {}});
  for (table& t : tables) {
    // Lists with tables of their own are not repeated as JSON text.
    if (t.name == "snapshots/system.csv")
      for (json& row : t.rows)
        for (const char* list : {"block_devices", "mounts"}) row.erase(list);
    if (t.name == "snapshots/filesystem_snapshots.csv")
      for (json& row : t.rows) row.erase("entries");
    if (auto written = write_json_table(dir + "/" + t.name, t.rows, t.spec); !written)
      return std::unexpected(written.error());
  }
  return {};
}

}  // namespace dc::analyze
