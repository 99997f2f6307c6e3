// The report's "timeseries" (bytes and ops per layer per time bin) and "heatmap" (bytes per
// process per time bin). Kept in sparse epoch-aligned base bins 10^level ms wide, the level
// growing so the run spans at most max_bins: bins nest, so partials coarsened to a common
// level and summed equal one run over all inputs exactly, and every 1, 2 or 5 × 10^k ms report
// bin at least as wide as a base bin is a whole number of them.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "analyze/lookup_index.h"
#include "analyze/record.h"
#include "analyze/record_values.h"
#include "analyze/run_section.h"
#include "core/result.h"

namespace dc::analyze {

struct timeline_cell {
  uint64_t bytes = 0;
  uint64_t ops = 0;
};

using bin_series = std::map<int64_t, timeline_cell>;  // bin index -> totals

struct timeline_section {
  static constexpr int64_t max_bins = 16384;

  uint32_t level = 0;  // base bins are 10^level ms wide
  int64_t min_us = INT64_MAX, max_us = INT64_MIN;
  std::map<std::string, bin_series, std::less<>> layers;
  // (host hash, pid, layer) -> bytes per bin (ops unused)
  std::map<std::tuple<uint64_t, uint64_t, std::string>, bin_series, std::less<>> processes;

  // A series and the cell of the bin it was last added to (lines come in time order, so most
  // land in the same bin); the cell is forgotten when the bins are coarsened.
  struct series_ref {
    bin_series* series = nullptr;
    int64_t bin = INT64_MIN;
    timeline_cell* cell = nullptr;
    timeline_cell& at(int64_t k);
  };
  lookup_index<std::string_view, series_ref, key_hash> layer_index;
  lookup_index<std::tuple<uint64_t, uint64_t, std::string_view>, series_ref, key_hash> process_index;
  series_ref& layer_ref(std::string_view layer);
  series_ref& process_ref(uint64_t hhash, uint64_t pid, std::string_view layer);

  void add(const record& r) { add(r, facts_of(r)); }
  void add(const record& r, const call_facts& c);  // c: facts_of(r)
  void merge(const timeline_section& other);
  nlohmann::json partial() const;
  static dc::result<timeline_section> from_partial(const nlohmann::json& j);
  // {"timeseries": {...}, "heatmap": {...}}; bin_ms 0: chosen from the run length.
  nlohmann::json report(const name_map& names, const run_section& run, uint64_t bin_ms) const;

  int64_t base_us() const { return 1000 * pow10(level); }
  static int64_t pow10(uint32_t k);
  void coarsen_to(uint32_t new_level);
};

// The smallest level, from `from` up, at which [min_us, max_us] spans at most max_bins bins.
uint32_t level_for(int64_t min_us, int64_t max_us, uint32_t from = 0);

}  // namespace dc::analyze
