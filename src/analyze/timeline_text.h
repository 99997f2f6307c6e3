// The text form of the time series and the heat map, rendered from the report JSON: the same
// numbers as --json, grouped into at most a dozen columns so a terminal line holds them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dc::analyze {

// MB/s and ops/s per layer, and MB per process (the busiest `rows`), per column of whole bins.
std::string timeline_text(const nlohmann::json& report, size_t columns = 12, size_t rows = 10);

}  // namespace dc::analyze
