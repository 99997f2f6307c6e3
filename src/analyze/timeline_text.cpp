#include "analyze/timeline_text.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analyze/text_format.h"

namespace dc::analyze {

namespace {

using json = nlohmann::json;

// j[key], or an empty object when there is none (never a temporary).
const json& member(const json& j, const char* key)
{
  static const json none = json::object();
  if (!j.is_object())
    return none;
  auto it = j.find(key);
  return it == j.end() ? none : *it;
}

// Bins grouped into columns of `per` consecutive bins (the last may hold fewer).
struct grouping {
  size_t bins = 0, per = 1, columns = 0;
  uint64_t bin_ms = 0;
  double column_s(size_t c) const  // a column's width in seconds
  {
    size_t n = std::min(per, bins - c * per);
    return static_cast<double>(n * bin_ms) / 1000.0;
  }
};

std::vector<double> sums(const json& values, const grouping& g)
{
  std::vector<double> out(g.columns, 0.0);
  if (!values.is_array())
    return out;
  for (size_t i = 0; i < std::min(values.size(), g.bins); ++i)
    out[i / g.per] += values[i].is_number() ? values[i].get<double>() : 0.0;
  return out;
}

std::string number(double v)
{
  if (v == static_cast<double>(static_cast<int64_t>(v)))  // counts, zeros
    return fmt("%.0f", v);
  if (v < 10)
    return fmt("%.2f", v);
  if (v < 1000)
    return fmt("%.1f", v);
  return fmt("%.0f", v);
}

std::string header(const char* first, const grouping& g)
{
  std::string out = fmt("%-24s %10s", first, "total");
  for (size_t c = 0; c < g.columns; ++c)
    out += fmt(" %8s", fmt("+%gs", static_cast<double>(c * g.per * g.bin_ms) / 1000.0).c_str());
  return out + "\n";
}

std::string row(const std::string& label, double total, const std::vector<double>& v)
{
  std::string name = label.size() > 24 ? "..." + label.substr(label.size() - 21) : label;
  std::string out = fmt("%-24s %10s", name.c_str(), number(total).c_str());
  for (double x : v) out += fmt(" %8s", number(x).c_str());
  return out + "\n";
}

}  // namespace

std::string timeline_text(const json& report, size_t columns, size_t rows)
{
  const json& ts = member(report, "timeseries");
  grouping g;
  g.bins = ts.value("bins", size_t{0});
  g.bin_ms = ts.value("bin_ms", uint64_t{0});
  if (g.bins == 0 || g.bin_ms == 0)
    return "time series: no events\n";
  g.per = (g.bins + columns - 1) / columns;
  g.columns = (g.bins + g.per - 1) / g.per;
  std::string out =
      fmt("time series: %zu bins of %llu ms; in columns of %zu bins (%g s) from the first bin\n", g.bins,
          static_cast<unsigned long long>(g.bin_ms), g.per, static_cast<double>(g.per * g.bin_ms) / 1000.0);
  // Layers by bytes, then by ops; a table of MB/s (layers that moved bytes) and of ops/s.
  struct series {
    std::string layer;
    std::vector<double> bytes, ops;
    double total_bytes = 0, total_ops = 0;
  };
  std::vector<series> layers;
  for (const auto& [layer, s] : member(ts, "layers").items()) {
    series x{layer, sums(member(s, "bytes"), g), sums(member(s, "ops"), g)};
    for (double b : x.bytes) x.total_bytes += b;
    for (double o : x.ops) x.total_ops += o;
    layers.push_back(std::move(x));
  }
  std::stable_sort(layers.begin(), layers.end(), [](const series& a, const series& b) {
    return a.total_bytes != b.total_bytes ? a.total_bytes > b.total_bytes : a.total_ops > b.total_ops;
  });
  auto per_second = [&](const std::vector<double>& v, double scale) {
    std::vector<double> out(v.size());
    for (size_t c = 0; c < v.size(); ++c) out[c] = v[c] / scale / g.column_s(c);
    return out;
  };
  auto table = [&](const char* title, bool bytes) {
    std::string t = header(title, g);
    size_t shown = 0, with = 0;
    for (const series& s : layers) {
      if ((bytes ? s.total_bytes : s.total_ops) == 0)
        continue;
      if (++with > rows)
        continue;
      ++shown;
      t += bytes ? row(s.layer, s.total_bytes / 1e6, per_second(s.bytes, 1e6))
                 : row(s.layer, s.total_ops, per_second(s.ops, 1.0));
    }
    if (with > shown)
      t += fmt("... %zu layers in all (see --json)\n", with);
    return with ? t : "";
  };
  out += table("layer: MB/s (total MB)", true);
  out += table("layer: ops/s (total ops)", false);
  // The heat map: the processes that moved the most bytes.
  const json& hm = member(report, "heatmap");
  if (!member(hm, "layer").is_string())
    return out;
  std::vector<std::pair<double, const json*>> procs;
  for (const json& r : member(hm, "rows")) {
    double total = 0;
    for (double b : sums(member(r, "bytes"), g)) total += b;
    procs.emplace_back(total, &r);
  }
  std::stable_sort(procs.begin(), procs.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  out += fmt("heat map: %s MB per process and column (the %zu busiest of %zu processes)\n",
             hm["layer"].get<std::string>().c_str(), std::min(rows, procs.size()), procs.size());
  out += header("process", g);
  for (size_t i = 0; i < std::min(rows, procs.size()); ++i) {
    std::vector<double> mb = sums(member(*procs[i].second, "bytes"), g);
    for (double& x : mb) x /= 1e6;
    out += row(procs[i].second->value("process", ""), procs[i].first / 1e6, mb);
  }
  return out;
}

}  // namespace dc::analyze
