// datacrumbs analyze: traces (or partial results) in, the report out (text on stdout, JSON,
// a mergeable partial).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace dc {

struct analyze_options {
  std::vector<std::string> inputs;  // trace paths, or partials with merge
  bool merge = false;
  std::string json_path;
  std::string csv_dir;
  std::string html_path;
  std::string partial_path;
  uint64_t bin_ms = 0;  // 0: chosen from the run length
  unsigned threads = 0;
  int64_t clock_skew_us = -1;  // -1: analyze::default_clock_skew_us (traces only, not --merge)
  bool progress = true;        // when stderr is a terminal
};

// Returns the exit code: 0 when something was read, 1 when nothing could be.
result<int> run_analyze(const analyze_options& options);

}  // namespace dc
