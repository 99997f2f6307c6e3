#include "analyze/snapshots.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace dc::analyze {

namespace {

// The value of a snapshot line: a JSON object written as a string (nullopt when it is not).
std::optional<nlohmann::json> value_of(const record& r)
{
  nlohmann::json v = nlohmann::json::parse(r.text("value"), nullptr, false);
  if (v.is_discarded() || !v.is_object())
    return std::nullopt;
  return v;
}

std::string host_name(const name_map& names, uint64_t hhash)
{
  auto it = names.hosts.find(hhash);
  if (it != names.hosts.end())
    return it->second;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(hhash));
  return buf;
}

std::string human_bytes(double bytes)
{
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

std::string str(const nlohmann::json& j, const char* key)
{
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void snapshots::add(const record& r)
{
  if (r.ph != phase::metadata || r.cat != "dftracer" || !r.name.starts_with("snapshot_"))
    return;
  if (r.name != "snapshot_system" && r.name != "snapshot_process" && r.name != "snapshot_files")
    return;
  auto value = value_of(r);
  if (!value) {
    ++unreadable;
    return;
  }
  if (r.name == "snapshot_system") {
    auto [at, added] = systems.try_emplace(r.hhash, r.ts_us, *value);
    if (!added && r.ts_us >= at->second.first)
      at->second = {r.ts_us, std::move(*value)};
  } else if (r.name == "snapshot_process") {
    processes[{r.hhash, r.pid, r.ts_us, str(*value, "command")}] = std::move(*value);
  } else {
    directory& d = directories[{r.hhash, str(*value, "dir"), str(*value, "when"), r.ts_us}];
    d.total = value->value("total", uint64_t{0});
    d.error = str(*value, "error");
    d.truncated = value->value("truncated", false);
    if (auto e = value->find("entries"); e != value->end() && e->is_array())
      for (auto& entry : *e)
        if (entry.is_object()) {
          std::string path = str(entry, "path");  // before the move: json's operator= takes its value first
          d.entries[path] = std::move(entry);
        }
  }
}

void snapshots::merge(const snapshots& other)
{
  for (const auto& [host, spec] : other.systems) {
    auto [at, added] = systems.try_emplace(host, spec);
    // The later spec wins; equal times keep the greater text, so the order of merging never matters.
    if (!added && (spec.first > at->second.first ||
                   (spec.first == at->second.first && spec.second.dump() > at->second.second.dump())))
      at->second = spec;
  }
  for (const auto& [key, p] : other.processes) processes.try_emplace(key, p);
  for (const auto& [key, d] : other.directories) {
    directory& mine = directories[key];
    mine.total = std::max(mine.total, d.total);
    if (mine.error.empty())
      mine.error = d.error;
    mine.truncated |= d.truncated;
    for (const auto& [path, e] : d.entries) mine.entries.try_emplace(path, e);
  }
  unreadable += other.unreadable;
}

nlohmann::json snapshots::partial() const
{
  nlohmann::json sys = nlohmann::json::array(), procs = nlohmann::json::array(),
                 dirs = nlohmann::json::array();
  for (const auto& [host, spec] : systems) sys.push_back({host, spec.first, spec.second});
  for (const auto& [key, p] : processes)
    procs.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), p});
  for (const auto& [key, d] : directories) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [path, e] : d.entries) entries.push_back(e);
    dirs.push_back(
        {std::get<0>(key),
         std::get<1>(key),
         std::get<2>(key),
         std::get<3>(key),
         {{"total", d.total}, {"error", d.error}, {"truncated", d.truncated}, {"entries", entries}}});
  }
  return {{"systems", sys}, {"processes", procs}, {"directories", dirs}, {"unreadable", unreadable}};
}

dc::result<snapshots> snapshots::from_partial(const nlohmann::json& j)
{
  try {
    snapshots s;
    for (const auto& e : j.at("systems"))
      s.systems[e.at(0).get<uint64_t>()] = {e.at(1).get<int64_t>(), e.at(2)};
    for (const auto& e : j.at("processes"))
      s.processes[{e.at(0).get<uint64_t>(), e.at(1).get<uint64_t>(), e.at(2).get<int64_t>(),
                   e.at(3).get<std::string>()}] = e.at(4);
    for (const auto& e : j.at("directories")) {
      directory& d = s.directories[{e.at(0).get<uint64_t>(), e.at(1).get<std::string>(),
                                    e.at(2).get<std::string>(), e.at(3).get<int64_t>()}];
      const nlohmann::json& v = e.at(4);
      d.total = v.at("total").get<uint64_t>();
      d.error = v.at("error").get<std::string>();
      d.truncated = v.at("truncated").get<bool>();
      for (const auto& entry : v.at("entries")) d.entries[entry.at("path").get<std::string>()] = entry;
    }
    s.unreadable = j.at("unreadable").get<uint64_t>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("snapshots: bad partial: ") + e.what());
  }
}

nlohmann::json snapshots::report(const name_map& names) const
{
  nlohmann::json sys = nlohmann::json::object(), procs = nlohmann::json::array(),
                 dirs = nlohmann::json::array();
  for (const auto& [host, spec] : systems) sys[host_name(names, host)] = spec.second;
  for (const auto& [key, p] : processes) {
    nlohmann::json entry = {{"host", host_name(names, std::get<0>(key))}, {"ts_us", std::get<2>(key)}};
    entry.update(p);
    procs.push_back(std::move(entry));
  }
  for (const auto& [key, d] : directories) {
    nlohmann::json entries = nlohmann::json::array();
    uint64_t bytes = 0;
    for (const auto& [path, e] : d.entries) {
      entries.push_back(e);
      if (e.value("type", "") == "file")
        bytes += e.value("size", uint64_t{0});
    }
    nlohmann::json entry = {{"host", host_name(names, std::get<0>(key))},
                            {"dir", std::get<1>(key)},
                            {"when", std::get<2>(key)},
                            {"ts_us", std::get<3>(key)},
                            {"total", d.total},
                            {"complete", d.entries.size() == d.total && !d.truncated},
                            {"file_bytes", bytes},
                            {"entries", std::move(entries)}};
    if (!d.error.empty())
      entry["error"] = d.error;
    dirs.push_back(std::move(entry));
  }
  // Per host and directory in time order: its start snapshot before its end one.
  auto order = [](const nlohmann::json& d) {
    return std::make_tuple(str(d, "host"), str(d, "dir"), d.value("ts_us", int64_t{0}));
  };
  std::stable_sort(dirs.begin(), dirs.end(),
                   [&](const nlohmann::json& a, const nlohmann::json& b) { return order(a) < order(b); });
  return {{"system", sys}, {"processes", procs}, {"filesystem", dirs}, {"unreadable", unreadable}};
}

std::string snapshots_text(const nlohmann::json& section)
{
  std::string out;
  char buf[512];
  const nlohmann::json systems = section.value("system", nlohmann::json::object());
  for (const auto& [host, s] : systems.items()) {
    std::snprintf(buf, sizeof(buf), "System %s: %s, kernel %s (%s); %llu CPUs (%s), %s memory\n",
                  host.c_str(), str(s, "os").c_str(), str(s, "kernel").c_str(), str(s, "machine").c_str(),
                  static_cast<unsigned long long>(s.value("cpu_count", uint64_t{0})),
                  str(s, "cpu_model").c_str(),
                  human_bytes(static_cast<double>(s.value("memory_bytes", uint64_t{0}))).c_str());
    out += buf;
    for (const auto& b : s.value("block_devices", nlohmann::json::array())) {
      std::snprintf(buf, sizeof(buf), "  disk %-10s %10s  %s  %s  scheduler %s\n", str(b, "name").c_str(),
                    human_bytes(static_cast<double>(b.value("size_bytes", uint64_t{0}))).c_str(),
                    b.value("rotational", false) ? "rotational" : "solid-state",
                    str(b, "model").empty() ? "-" : str(b, "model").c_str(), str(b, "scheduler").c_str());
      out += buf;
    }
    std::snprintf(buf, sizeof(buf), "  %zu mounts\n", s.value("mounts", nlohmann::json::array()).size());
    out += buf;
  }
  const nlohmann::json procs = section.value("processes", nlohmann::json::array());
  size_t shown = 0;
  for (const auto& p : procs) {
    if (shown++ == 10) {
      std::snprintf(buf, sizeof(buf), "  ... %zu more process snapshots\n", procs.size() - 10);
      out += buf;
      break;
    }
    std::string where = p.value("gone", false)
                            ? " (exited before its snapshot)"
                            : " uid " + p.value("uid", nlohmann::json()).dump() + " cwd " + str(p, "cwd");
    if (p.contains("rank"))
      where = " rank " + p["rank"].dump() + where;
    std::snprintf(buf, sizeof(buf), "Process %s:%s%s: %.200s\n", str(p, "host").c_str(),
                  p.value("pid", nlohmann::json()).dump().c_str(), where.c_str(), str(p, "command").c_str());
    out += buf;
  }
  for (const auto& d : section.value("filesystem", nlohmann::json::array())) {
    std::string error = d.contains("error") ? " (" + str(d, "error") + ")" : "";
    std::snprintf(buf, sizeof(buf), "Directory %s:%s at %s: %llu entries, %s in files%s\n",
                  str(d, "host").c_str(), str(d, "dir").c_str(), str(d, "when").c_str(),
                  static_cast<unsigned long long>(d.value("total", uint64_t{0})),
                  human_bytes(static_cast<double>(d.value("file_bytes", uint64_t{0}))).c_str(),
                  error.c_str());
    out += buf;
  }
  return out.empty() ? out : "Snapshots\n" + out;
}

}  // namespace dc::analyze
