// The report's tables as CSV (`analyze --csv DIR`): rendered from the report JSON, so the CSV
// says exactly what --json says. Columns are documented in docs/analyze.md ("CSV").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace dc::analyze {

// One table: rows (JSON objects) flattened to columns. Nested objects become columns named
// parent_child (latency_us.p50 -> latency_us_p50), except those named in `unprefixed`, whose
// members become columns by their own names (a file's "counters" -> POSIX_READS, ...). Arrays
// become their JSON text. Columns: `first` (in that order, when present), then every other key
// in the order it first appears.
struct csv_table_spec {
  std::vector<std::string> first;
  std::vector<std::string> unprefixed;
};

// Writes rows (an array of objects; null or absent: no rows) to path. Returns the rows written.
dc::result<size_t> write_json_table(const std::string& path, const nlohmann::json& rows,
                                    const csv_table_spec& spec);

// files.csv, layers.csv, layer_time.csv, amplification*.csv, page_cache*.csv, network.csv,
// timeseries.csv, heatmap.csv, diagnostics.csv and snapshots/*.csv under dir.
dc::result<> write_report_tables(const nlohmann::json& report, const std::string& dir);

}  // namespace dc::analyze
