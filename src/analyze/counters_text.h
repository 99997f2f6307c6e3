// The text form of the counter sections (files, amplification, page_cache, network,
// diagnostics), rendered from the report JSON for the text report on stdout.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dc::analyze {

// Top files by bytes with their main Darshan counters, the seed's amplification table (run,
// systems, busiest processes), page cache, network and the diagnostics; at most `rows` rows
// per table.
std::string counters_text(const nlohmann::json& report, size_t rows = 10);

}  // namespace dc::analyze
