// A mergeable latency quantile sketch (DDSketch-like): durations below 1024 µs are counted
// exactly, one bucket per microsecond; longer ones in logarithmic buckets of relative width
// 2 %, so every reported quantile above 1024 µs is within 1 % of a true sample value. Merging
// adds bucket counts, so merged sketches equal the sketch of all samples exactly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/result.h"

namespace dc {

struct latency_sketch {
  static constexpr uint64_t exact_below = 1024;
  static constexpr double relative_error = 0.01;

  std::vector<uint64_t> buckets;  // index: bucket_of(value)
  uint64_t count = 0;
  uint64_t max = 0;

  void add(uint64_t value_us, uint64_t times = 1);
  void merge(const latency_sketch& other);
  // Nearest-rank quantile (0 < q <= 1): the bucket's representative value; 0 when empty.
  double quantile(double q) const;

  nlohmann::json partial() const;  // [[bucket, count], ...], count, max
  static dc::result<latency_sketch> from_partial(const nlohmann::json& j);
  nlohmann::json report() const;  // {"p50","p90","p99","max"}, null values when empty
};

}  // namespace dc
