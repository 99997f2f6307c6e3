#include "analyze/timeline_section.h"

#include <algorithm>
#include <cmath>

#include "analyze/record_values.h"

namespace dc::analyze {

namespace {

int64_t floor_div(int64_t a, int64_t b)
{
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

void coarsen(bin_series& s, int64_t factor)
{
  if (factor == 1 || s.empty())
    return;
  bin_series out;
  for (const auto& [k, c] : s) {
    timeline_cell& o = out[floor_div(k, factor)];
    o.bytes += c.bytes;
    o.ops += c.ops;
  }
  s.swap(out);
}

void add_cells(bin_series& into, const bin_series& from)
{
  for (const auto& [k, c] : from) {
    timeline_cell& o = into[k];
    o.bytes += c.bytes;
    o.ops += c.ops;
  }
}

// The bins [ts, ts + dur) covers: the first and the last (no duration: the bin of ts).
struct bin_range {
  int64_t first, last;
};

bin_range bins_of(int64_t width, int64_t ts, int64_t dur)
{
  int64_t first = floor_div(ts, width);
  return {first, dur > 0 ? floor_div(ts + dur - 1, width) : first};
}

// Spreads `bytes` over the bins [ts, ts + dur) covers, in proportion, with cumulative rounding
// (a bin gets F(hi) - F(lo), F(t) = floor(bytes × (t - ts) / dur)): at any bin width the parts
// are integers summing to `bytes`, and a coarse bin's part is the sum of its fine bins' parts.
void spread(timeline_section::series_ref& s, int64_t width, bin_range bins, int64_t ts, int64_t dur,
            uint64_t bytes, uint64_t ops)
{
  timeline_cell& first = s.at(bins.first);
  first.ops += ops;
  if (bytes == 0)
    return;
  if (bins.last == bins.first) {  // one bin (or no duration): all of it
    first.bytes += bytes;
    return;
  }
  int64_t end = ts + dur;
  auto f = [&](int64_t t) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(bytes) * static_cast<uint64_t>(t - ts) /
                                 static_cast<uint64_t>(dur));
  };
  for (int64_t k = bins.first; k <= bins.last; ++k) {
    int64_t lo = std::max(ts, k * width), hi = std::min(end, (k + 1) * width);
    if (uint64_t part = f(hi) - f(lo))
      s.at(k).bytes += part;
  }
}

nlohmann::json series_json(const bin_series& s)
{
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [k, c] : s) j.push_back({k, c.bytes, c.ops});
  return j;
}

bin_series series_from(const nlohmann::json& j)
{
  bin_series s;
  for (const auto& e : j) s[e.at(0).get<int64_t>()] = {e.at(1).get<uint64_t>(), e.at(2).get<uint64_t>()};
  return s;
}

// The smallest 1, 2 or 5 × 10^k at least x (x ≥ 1).
uint64_t nice_at_least(double x)
{
  for (uint64_t decade = 1;; decade *= 10)
    for (uint64_t m : {1, 2, 5})
      if (static_cast<double>(m * decade) >= x)
        return m * decade;
}

}  // namespace

int64_t timeline_section::pow10(uint32_t k)
{
  int64_t p = 1;
  for (uint32_t i = 0; i < k; ++i) p *= 10;
  return p;
}

timeline_cell& timeline_section::series_ref::at(int64_t k)
{
  if (k != bin) {
    cell = &(*series)[k];
    bin = k;
  }
  return *cell;
}

uint32_t level_for(int64_t min_us, int64_t max_us, uint32_t from)
{
  uint32_t level = from;
  while (level < 15) {
    int64_t w = 1000 * timeline_section::pow10(level);
    if (floor_div(max_us, w) - floor_div(min_us, w) + 1 <= timeline_section::max_bins)
      break;
    ++level;
  }
  return level;
}

void timeline_section::coarsen_to(uint32_t new_level)
{
  if (new_level <= level)
    return;
  int64_t factor = pow10(new_level - level);
  for (auto& [k, s] : layers) coarsen(s, factor);
  for (auto& [k, s] : processes) coarsen(s, factor);
  level = new_level;
  for (auto& [k, ref] : layer_index.map) ref.bin = INT64_MIN;
  for (auto& [k, ref] : process_index.map) ref.bin = INT64_MIN;
}

timeline_section::series_ref& timeline_section::layer_ref(std::string_view layer)
{
  if (series_ref* found = layer_index.find(layer))
    return *found;
  auto at = layers.try_emplace(std::string(layer)).first;
  return layer_index.add(at->first, {&at->second});
}

timeline_section::series_ref& timeline_section::process_ref(uint64_t hhash, uint64_t pid,
                                                            std::string_view layer)
{
  if (series_ref* found = process_index.find({hhash, pid, layer}))
    return *found;
  auto at = processes.try_emplace({hhash, pid, std::string(layer)}).first;
  return process_index.add({hhash, pid, std::get<2>(at->first)}, {&at->second});
}

void timeline_section::add(const record& r, const call_facts& c)
{
  if (!c.call)
    return;
  int64_t dur = r.ph == phase::complete ? r.dur_us : 0;
  int64_t last_us = r.ts_us + std::max<int64_t>(0, dur - 1);
  if (r.ts_us < min_us || last_us > max_us) {  // the span grew: the bins may have to be wider
    min_us = std::min(min_us, r.ts_us);
    max_us = std::max(max_us, last_us);
    coarsen_to(level_for(min_us, max_us, level));
  }
  uint64_t bytes = c.bytes, ops = c.count;
  bin_range bins = bins_of(base_us(), r.ts_us, dur);
  spread(layer_ref(r.cat), base_us(), bins, r.ts_us, dur, bytes, ops);
  if (bytes == 0)
    return;
  spread(process_ref(r.hhash, r.pid, r.cat), base_us(), bins, r.ts_us, dur, bytes, ops);
}

void timeline_section::merge(const timeline_section& o)
{
  if (o.min_us > o.max_us)
    return;
  min_us = std::min(min_us, o.min_us);
  max_us = std::max(max_us, o.max_us);
  uint32_t target = std::max({level, o.level, level_for(min_us, max_us, 0)});
  coarsen_to(target);
  timeline_section copy = o;
  copy.coarsen_to(target);
  for (const auto& [k, s] : copy.layers) add_cells(layers[k], s);
  for (const auto& [k, s] : copy.processes) add_cells(processes[k], s);
}

nlohmann::json timeline_section::partial() const
{
  nlohmann::json l = nlohmann::json::object(), p = nlohmann::json::array();
  for (const auto& [k, s] : layers) l[k] = series_json(s);
  for (const auto& [k, s] : processes)
    p.push_back({{"hhash", std::get<0>(k)},
                 {"pid", std::get<1>(k)},
                 {"layer", std::get<2>(k)},
                 {"bins", series_json(s)}});
  return {{"base_ms", pow10(level)}, {"min_us", min_us}, {"max_us", max_us}, {"layers", l}, {"processes", p}};
}

dc::result<timeline_section> timeline_section::from_partial(const nlohmann::json& j)
{
  timeline_section t;
  try {
    // Base bins of 10^level ms (older analyze versions wrote 2^level ms bins as "level").
    int64_t base_ms = j.at("base_ms").get<int64_t>();
    while (t.level < 15 && pow10(t.level) < base_ms) ++t.level;
    if (pow10(t.level) != base_ms)
      return dc::fail("timeline: base_ms " + std::to_string(base_ms) + " is not a power of ten");
    t.min_us = j.at("min_us").get<int64_t>();
    t.max_us = j.at("max_us").get<int64_t>();
    for (const auto& [k, s] : j.at("layers").items()) t.layers[k] = series_from(s);
    for (const auto& p : j.at("processes"))
      t.processes[{p.at("hhash").get<uint64_t>(), p.at("pid").get<uint64_t>(),
                   p.at("layer").get<std::string>()}] = series_from(p.at("bins"));
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("timeline: ") + e.what());
  }
  return t;
}

nlohmann::json timeline_section::report(const name_map& names, const run_section& run, uint64_t bin_ms) const
{
  uint64_t base_ms = static_cast<uint64_t>(pow10(level));
  if (min_us > max_us)
    return {{"timeseries",
             {{"bin_ms", base_ms}, {"start_us", nullptr}, {"bins", 0}, {"layers", nlohmann::json::object()}}},
            {"heatmap",
             {{"bin_ms", base_ms},
              {"start_us", nullptr},
              {"bins", 0},
              {"layer", nullptr},
              {"rows", nlohmann::json::array()}}}};
  // Default: about 200 bins, 1, 2 or 5 × 10^k ms (a whole number of base bins, as every such
  // width at least as wide as they are). A requested width that is not a multiple of the base
  // width (only when the run spans more than max_bins base bins of a smaller width) is rounded up.
  if (bin_ms == 0)
    bin_ms = nice_at_least(std::max(1.0, static_cast<double>(max_us - min_us + 1) / 1000.0 / 200.0));
  bin_ms = std::max<uint64_t>(1, (bin_ms + base_ms - 1) / base_ms) * base_ms;
  auto span_bins = [&](uint64_t w) {
    return floor_div(max_us, static_cast<int64_t>(w) * 1000) -
           floor_div(min_us, static_cast<int64_t>(w) * 1000) + 1;
  };
  while (span_bins(bin_ms) > max_bins) bin_ms = nice_at_least(static_cast<double>(bin_ms) + 1);
  int64_t width = static_cast<int64_t>(bin_ms) * 1000, first = floor_div(min_us, width);
  size_t n = static_cast<size_t>(span_bins(bin_ms));
  auto rebin = [&](const bin_series& s, bool ops) {
    std::vector<uint64_t> v(n, 0);
    for (const auto& [k, c] : s) {
      int64_t at = floor_div(k * base_us(), width) - first;
      if (at >= 0 && static_cast<size_t>(at) < n)
        v[static_cast<size_t>(at)] += ops ? c.ops : c.bytes;
    }
    return v;
  };
  nlohmann::json ls = nlohmann::json::object();
  std::map<std::string, uint64_t> layer_bytes;
  for (const auto& [k, s] : layers) {
    ls[k] = {{"bytes", rebin(s, false)}, {"ops", rebin(s, true)}};
    for (const auto& [i, c] : s) layer_bytes[k] += c.bytes;
  }
  std::string heat_layer;
  if (layer_bytes.contains("POSIX") && layer_bytes["POSIX"] > 0)
    heat_layer = "POSIX";
  else
    for (const auto& [k, b] : layer_bytes)
      if (b > 0 && (heat_layer.empty() || b > layer_bytes[heat_layer]))
        heat_layer = k;
  struct row {
    int64_t rank;
    std::string host;
    uint64_t pid;
    nlohmann::json j;
  };
  std::vector<row> rows;
  for (const auto& [k, s] : processes) {
    if (std::get<2>(k) != heat_layer)
      continue;
    process_key key{std::get<0>(k), std::get<1>(k)};
    auto p = run.processes.find(key);
    const process_facts* facts = p == run.processes.end() ? nullptr : &p->second;
    int64_t rank = facts ? facts->rank : -1;
    std::string host = host_name(key.first, names);
    rows.push_back({rank < 0 ? INT64_MAX : rank,
                    host,
                    key.second,
                    {{"process", process_label(key, facts, names)},
                     {"host", host},
                     {"pid", key.second},
                     {"rank", rank >= 0 ? nlohmann::json(rank) : nlohmann::json(nullptr)},
                     {"bytes", rebin(s, false)}}});
  }
  std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) {
    return std::tie(a.rank, a.host, a.pid) < std::tie(b.rank, b.host, b.pid);
  });
  nlohmann::json hr = nlohmann::json::array();
  for (row& r : rows) hr.push_back(std::move(r.j));
  int64_t start = first * width;
  return {{"timeseries", {{"bin_ms", bin_ms}, {"start_us", start}, {"bins", n}, {"layers", ls}}},
          {"heatmap",
           {{"bin_ms", bin_ms},
            {"start_us", start},
            {"bins", n},
            {"layer", heat_layer.empty() ? nlohmann::json(nullptr) : nlohmann::json(heat_layer)},
            {"rows", hr}}}};
}

}  // namespace dc::analyze
