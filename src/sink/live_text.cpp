// The live view's frame as text and as JSON (sink/live_view.h).
#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "core/category.h"
#include "sink/live_view.h"

namespace dc {

namespace {

const live_row* row_of(const std::vector<live_row>& rows, std::string_view name)
{
  for (const auto& r : rows)
    if (r.name == name)
      return &r;
  return nullptr;
}

std::string ratio_text(std::optional<double> r)
{
  if (!r)
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", *r);
  return buf;
}

// `app`: the rows' bytes are the application's (processes, files), not a layer's own.
void append_table(std::string& out, std::string_view title, const std::vector<live_row>& rows,
                  bool app = false)
{
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-40.*s %12s %14s %14s\n", static_cast<int>(title.size()), title.data(),
                "OPS", app ? "APP_READ" : "READ_BYTES", app ? "APP_WRITE" : "WRITE_BYTES");
  out += buf;
  for (const auto& r : rows) {
    // A long path keeps its end (the file's name), not its start.
    std::string_view name = r.name;
    if (name.size() > 40)
      name = name.substr(name.size() - 40);
    std::snprintf(buf, sizeof(buf), "%-40.*s %12" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
                  static_cast<int>(name.size()), name.data(), r.ops, r.read_bytes, r.write_bytes);
    out += buf;
  }
}

}  // namespace

std::optional<double> live_amplification(const live_frame& f, bool read)
{
  const live_row* app = row_of(f.totals, category::posix);
  const live_row* dev = row_of(f.totals, category::block);
  uint64_t a = app ? (read ? app->read_bytes : app->write_bytes) : 0;
  uint64_t d = dev ? (read ? dev->read_bytes : dev->write_bytes) : 0;
  if (a == 0)
    return std::nullopt;
  return static_cast<double>(d) / static_cast<double>(a);
}

std::optional<double> live_hit_ratio(const live_frame& f)
{
  if (!f.cache_known)
    return std::nullopt;
  uint64_t hits = f.pages_read > f.cache_misses ? f.pages_read - f.cache_misses : 0;
  if (hits + f.cache_misses == 0)
    return std::nullopt;
  return static_cast<double>(hits) / static_cast<double>(hits + f.cache_misses);
}

std::string live_text(const live_frame& f)
{
  char clock[16] = "";
  auto second = static_cast<time_t>(f.time_us / 1000000);
  std::tm tm{};
  localtime_r(&second, &tm);
  std::strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
  double rate = f.interval_s > 0 ? static_cast<double>(f.interval_events) / f.interval_s : 0;
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof(buf),
                "datacrumbs live %s  run %.1f s%s  events %" PRIu64 "  events/s %.0f  lost %" PRIu64 "\n",
                clock, f.elapsed_s, f.ended ? " (ended)" : "", f.events, rate, f.lost);
  out += buf;
  std::snprintf(buf, sizeof(buf),
                "page cache hit ratio %s (pages read %" PRIu64 ", misses %" PRIu64
                ")  amplification read %s write %s\n",
                ratio_text(live_hit_ratio(f)).c_str(), f.pages_read, f.cache_misses,
                ratio_text(live_amplification(f, true)).c_str(),
                ratio_text(live_amplification(f, false)).c_str());
  out += buf;
  std::snprintf(buf, sizeof(buf), "last %.1f s:\n", f.interval_s);
  out += buf;
  append_table(out, "LAYER", f.layers);
  append_table(out, "PROCESS", f.processes, true);
  append_table(out, "FILE", f.files, true);
  out += "so far:\n";
  append_table(out, "TOTAL", f.totals);
  return out;
}

namespace {

nlohmann::json rows_json(const std::vector<live_row>& rows)
{
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows)
    j.push_back(
        {{"name", r.name}, {"ops", r.ops}, {"read_bytes", r.read_bytes}, {"write_bytes", r.write_bytes}});
  return j;
}

std::vector<live_row> rows_from(const nlohmann::json& j)
{
  std::vector<live_row> rows;
  for (const auto& r : j)
    rows.push_back({r.at("name").get<std::string>(), r.at("read_bytes").get<uint64_t>(),
                    r.at("write_bytes").get<uint64_t>(), r.at("ops").get<uint64_t>()});
  return rows;
}

}  // namespace

nlohmann::json live_frame_json(const live_frame& f)
{
  return {{"seq", f.seq},
          {"time_us", f.time_us},
          {"elapsed_s", f.elapsed_s},
          {"interval_s", f.interval_s},
          {"events", f.events},
          {"interval_events", f.interval_events},
          {"lost", f.lost},
          {"cache_known", f.cache_known},
          {"pages_read", f.pages_read},
          {"cache_misses", f.cache_misses},
          {"processes", rows_json(f.processes)},
          {"files", rows_json(f.files)},
          {"layers", rows_json(f.layers)},
          {"totals", rows_json(f.totals)},
          {"ended", f.ended}};
}

result<live_frame> live_frame_from_json(const nlohmann::json& j)
{
  try {
    live_frame f;
    f.seq = j.at("seq").get<uint64_t>();
    f.time_us = j.at("time_us").get<uint64_t>();
    f.elapsed_s = j.at("elapsed_s").get<double>();
    f.interval_s = j.at("interval_s").get<double>();
    f.events = j.at("events").get<uint64_t>();
    f.interval_events = j.at("interval_events").get<uint64_t>();
    f.lost = j.at("lost").get<uint64_t>();
    f.cache_known = j.at("cache_known").get<bool>();
    f.pages_read = j.at("pages_read").get<uint64_t>();
    f.cache_misses = j.at("cache_misses").get<uint64_t>();
    f.processes = rows_from(j.at("processes"));
    f.files = rows_from(j.at("files"));
    f.layers = rows_from(j.at("layers"));
    f.totals = rows_from(j.at("totals"));
    f.ended = j.at("ended").get<bool>();
    return f;
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("not a live snapshot: ") + e.what());
  }
}

}  // namespace dc
