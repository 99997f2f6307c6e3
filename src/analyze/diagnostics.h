// The "diagnostics" section: rules over the finished report (its files, amplification,
// page_cache and run sections), each with its threshold in docs/analyze.md and the numbers it
// fired on as evidence. A rule that does not fire writes nothing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace dc::analyze {

// The thresholds (documented; tests use them by name).
struct diagnostic_thresholds {
  int64_t small_io_bytes = 4096;               // an access smaller than this is small
  double small_io_fraction = 0.5;              // small accesses above this share of all
  int64_t small_io_min_ops = 100;              // ... when at least this many accesses
  double random_fraction = 0.5;                // non-sequential accesses above this share of a file's
  int64_t random_min_ops = 100;                // ... when the file had at least this many with known offsets
  double meta_min_s = 0.1;                     // metadata time above data time, when at least this long
  double imbalance_ratio = 1.5;                // the busiest process moved more than this x the mean
  double amplification_ratio = 5.0;            // device bytes above this x application bytes
  uint64_t amplification_min_bytes = 1 << 20;  // ... when the device moved at least this many
  double reread_hit_ratio = 0.5;               // page-cache hit ratio below this on a re-read file
  int64_t reread_min_bytes = 1 << 20;          // ... when at least this many bytes were read again
};

// [{"rule","severity","message","evidence":{..}}] for `report` (the other sections, done).
nlohmann::json diagnose(const nlohmann::json& report, const diagnostic_thresholds& t = {});

}  // namespace dc::analyze
