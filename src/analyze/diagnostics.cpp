#include "analyze/diagnostics.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace dc::analyze {

namespace {

// A member of `j`, or an empty array/object when it has none (never a temporary).
const nlohmann::json& member(const nlohmann::json& j, const char* key, bool array = true)
{
  static const nlohmann::json empty_array = nlohmann::json::array(), empty_object = nlohmann::json::object();
  auto it = j.find(key);
  return it != j.end() ? *it : array ? empty_array : empty_object;
}

int64_t counter(const nlohmann::json& file, const char* name)
{
  const auto& c = member(file, "counters", false);
  auto it = c.find(name);
  return it != c.end() && it->is_number() ? it->get<int64_t>() : 0;
}

double fcounter(const nlohmann::json& file, const char* name)
{
  const auto& c = member(file, "fcounters", false);
  auto it = c.find(name);
  return it != c.end() && it->is_number() ? it->get<double>() : 0.0;
}

uint64_t num(const nlohmann::json& j, const char* key)
{
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<uint64_t>() : 0;
}

std::string percent(double f)
{
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f%%", 100.0 * f);
  return b;
}

std::string fixed(double v)
{
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", v);
  return b;
}

nlohmann::json finding(const char* rule, const char* severity, std::string message, nlohmann::json evidence)
{
  return {{"rule", rule},
          {"severity", severity},
          {"message", std::move(message)},
          {"evidence", std::move(evidence)}};
}

void small_io(const nlohmann::json& files, const diagnostic_thresholds& t, nlohmann::json& out)
{
  int64_t ops = 0, small = 0;
  for (const auto& f : files) {
    ops += counter(f, "POSIX_READS") + counter(f, "POSIX_WRITES");
    small += f.value("small_ops", int64_t{0});
  }
  if (ops < t.small_io_min_ops ||
      static_cast<double>(small) <= t.small_io_fraction * static_cast<double>(ops))
    return;
  double share = static_cast<double>(small) / static_cast<double>(ops);
  out.push_back(
      finding("small_io", "warning",
              std::to_string(small) + " of " + std::to_string(ops) + " POSIX reads and writes (" +
                  percent(share) + ") moved fewer than " + std::to_string(t.small_io_bytes) + " bytes",
              {{"small_ops", small}, {"ops", ops}, {"fraction", share}, {"below_bytes", t.small_io_bytes}}));
}

// Files of /proc, /sys and /dev are not storage: re-reading /proc/self/stat at offset 0 every
// second is how such files are read, not a random access pattern.
bool on_pseudo_filesystem(const std::string& path)
{
  return path.starts_with("/proc/") || path.starts_with("/sys/") ||
         (path.starts_with("/dev/") && !path.starts_with("/dev/shm/"));
}

void random_access(const nlohmann::json& files, const diagnostic_thresholds& t, nlohmann::json& out)
{
  for (const auto& f : files) {
    if (on_pseudo_filesystem(f.value("file", "")))
      continue;
    int64_t known =
        counter(f, "POSIX_READS") + counter(f, "POSIX_WRITES") - f.value("unknown_offset_ops", int64_t{0});
    int64_t seq = counter(f, "POSIX_SEQ_READS") + counter(f, "POSIX_SEQ_WRITES");
    if (known < t.random_min_ops)
      continue;
    double share = static_cast<double>(known - seq) / static_cast<double>(known);
    if (share <= t.random_fraction)
      continue;
    out.push_back(finding("random_access", "info",
                          f.value("file", "") + ": " + std::to_string(known - seq) + " of " +
                              std::to_string(known) + " accesses (" + percent(share) +
                              ") were not sequential",
                          {{"file", f.value("file", "")},
                           {"accesses", known},
                           {"sequential", seq},
                           {"random", known - seq},
                           {"fraction", share}}));
  }
}

void metadata_storm(const nlohmann::json& files, const diagnostic_thresholds& t, nlohmann::json& out)
{
  double meta = 0, read = 0, write = 0;
  int64_t opens = 0, stats = 0, seeks = 0;
  for (const auto& f : files) {
    meta += fcounter(f, "POSIX_F_META_TIME");
    read += fcounter(f, "POSIX_F_READ_TIME");
    write += fcounter(f, "POSIX_F_WRITE_TIME");
    opens += counter(f, "POSIX_OPENS");
    stats += counter(f, "POSIX_STATS");
    seeks += counter(f, "POSIX_SEEKS");
  }
  if (meta < t.meta_min_s || meta <= read + write)
    return;
  out.push_back(finding(
      "metadata_storm", "warning",
      "metadata calls took " + fixed(meta) + " s, more than reads and writes (" + fixed(read + write) + " s)",
      {{"meta_time_s", meta},
       {"read_time_s", read},
       {"write_time_s", write},
       {"opens", opens},
       {"stats", stats},
       {"seeks", seeks}}));
}

void imbalance(const nlohmann::json& amp, const diagnostic_thresholds& t, nlohmann::json& out)
{
  std::vector<std::pair<uint64_t, std::string>> moved;
  for (const auto& p : member(amp, "processes")) {
    uint64_t bytes = num(p, "sys_read_bytes") + num(p, "sys_write_bytes");
    if (bytes > 0)
      moved.emplace_back(bytes, p.value("host", "") + ":" + std::to_string(p.value("pid", uint64_t{0})));
  }
  if (moved.size() < 2)
    return;
  std::sort(moved.begin(), moved.end());
  uint64_t sum = 0;
  for (const auto& m : moved) sum += m.first;
  double mean = static_cast<double>(sum) / static_cast<double>(moved.size());
  double ratio = static_cast<double>(moved.back().first) / mean;
  if (ratio <= t.imbalance_ratio)
    return;
  out.push_back(finding("imbalance", "warning",
                        "process " + moved.back().second + " moved " + fixed(ratio) +
                            "x the mean bytes of the " + std::to_string(moved.size()) +
                            " processes that did I/O",
                        {{"processes", moved.size()},
                         {"max_bytes", moved.back().first},
                         {"max_process", moved.back().second},
                         {"min_bytes", moved.front().first},
                         {"mean_bytes", mean},
                         {"ratio", ratio}}));
}

void high_amplification(const nlohmann::json& amp, const diagnostic_thresholds& t, nlohmann::json& out)
{
  auto check = [&](const nlohmann::json& row, const std::string& scope) {
    for (bool read : {true, false}) {
      uint64_t app = num(row, read ? "sys_read_bytes" : "sys_write_bytes");
      uint64_t dev = num(row, read ? "blk_read_bytes" : "blk_write_bytes");
      if (app == 0 || dev < t.amplification_min_bytes)
        continue;
      double ratio = static_cast<double>(dev) / static_cast<double>(app);
      if (ratio <= t.amplification_ratio)
        continue;
      out.push_back(finding("high_amplification", "warning",
                            scope + ": the device " + (read ? "read " : "wrote ") + fixed(ratio) +
                                "x the bytes the "
                                "application " +
                                (read ? "read" : "wrote"),
                            {{"scope", scope},
                             {"direction", read ? "read" : "write"},
                             {"application_bytes", app},
                             {"device_bytes", dev},
                             {"ratio", ratio}}));
    }
  };
  if (amp.contains("total"))
    check(amp["total"], "run");
  for (const auto& s : member(amp, "systems")) check(s, "system " + s.value("system", ""));
}

void reread_cache(const nlohmann::json& files, const nlohmann::json& cache, const diagnostic_thresholds& t,
                  nlohmann::json& out)
{
  std::map<std::string, const nlohmann::json*> cached;
  for (const auto& f : member(cache, "files")) cached[f.value("file", "")] = &f;
  for (const auto& f : files) {
    int64_t read = counter(f, "POSIX_BYTES_READ"), extent = counter(f, "POSIX_MAX_BYTE_READ") + 1;
    auto c = cached.find(f.value("file", ""));
    if (read - extent < t.reread_min_bytes || c == cached.end())
      continue;
    uint64_t hits = num(*c->second, "hits"), misses = num(*c->second, "misses");
    if (hits + misses == 0)
      continue;
    double ratio = static_cast<double>(hits) / static_cast<double>(hits + misses);
    if (ratio >= t.reread_hit_ratio)
      continue;
    out.push_back(finding("low_cache_hit_ratio", "warning",
                          f.value("file", "") + ": read " + std::to_string(read) + " bytes of a " +
                              std::to_string(extent) + "-byte extent, but only " + percent(ratio) +
                              " of page lookups hit the cache",
                          {{"file", f.value("file", "")},
                           {"bytes_read", read},
                           {"extent_bytes", extent},
                           {"hits", hits},
                           {"misses", misses},
                           {"hit_ratio", ratio}}));
  }
}

void lost_events(const nlohmann::json& run, nlohmann::json& out)
{
  const auto& lost = member(run, "lost", false);
  // The end record's events_lost is the total; its kinds include some that count no event (a
  // record_ring_full is a lost name, not a lost event), so they are summed only without it.
  uint64_t total = 0, stated_total = 0, unended = 0, untimed = 0;
  bool stated = false;
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, n] : lost.items()) {
    if (!n.is_number())
      continue;
    if (kind == "total" || kind == "events_lost") {
      stated = true;
      stated_total = n.get<uint64_t>();
      continue;
    }
    // Block requests not seen to end when tracing stopped: in flight then (past the traced
    // window) or ended unseen, so not summed as events lost but said apart.
    if (kind == "block_unended" || kind == "lost_block_unended") {
      unended += n.get<uint64_t>();
      continue;
    }
    // Traced without their end (args.end_unseen): no event is missing, their times are.
    if (kind == "block_end_unseen" || kind == "lost_block_end_unseen") {
      untimed += n.get<uint64_t>();
      continue;
    }
    if (n.get<uint64_t>() == 0)
      continue;
    total += n.get<uint64_t>();
    kinds[kind] = n;
  }
  if (unended)
    out.push_back(finding("block_requests_unended", "warning",
                          std::to_string(unended) +
                              " block requests had started and were not seen to end when tracing stopped (in "
                              "flight then, or ended unseen): their bytes are in no BLOCK count",
                          {{"requests", unended}}));
  if (untimed)
    out.push_back(
        finding("block_requests_untimed", "info",
                std::to_string(untimed) +
                    " block requests are traced without their end (the kernel ran no tracing program "
                    "for their completion): their bytes are counted, their latency is not",
                {{"requests", untimed}}));
  if (stated)
    total = stated_total;
  if (total == 0)
    return;
  out.push_back(finding("lost_events", "error",
                        std::to_string(total) + " events were lost; counts below are lower bounds",
                        {{"lost", total}, {"kinds", kinds}}));
}

}  // namespace

nlohmann::json diagnose(const nlohmann::json& report, const diagnostic_thresholds& t)
{
  nlohmann::json out = nlohmann::json::array();
  const auto& files = member(report, "files");
  const auto& amp = member(report, "amplification", false);
  small_io(files, t, out);
  random_access(files, t, out);
  metadata_storm(files, t, out);
  imbalance(amp, t, out);
  high_amplification(amp, t, out);
  reread_cache(files, member(report, "page_cache", false), t, out);
  lost_events(member(report, "run", false), out);
  return out;
}

}  // namespace dc::analyze
