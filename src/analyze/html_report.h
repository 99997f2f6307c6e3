// The HTML report of `datacrumbs analyze --html FILE`: one self-contained page (no network
// access when opened) drawn in the browser from the report JSON (docs/analyze.md) with the
// pinned charting libraries inlined.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace dc::analyze {

// The page keeps this many files, heat map rows and per-process rows of the amplification and
// page cache sections (the busiest); the JSON report keeps them all.
inline constexpr size_t html_max_files = 500;
inline constexpr size_t html_max_heatmap_rows = 64;
inline constexpr size_t html_max_processes = 2000;

// The report JSON as text that may sit inside a <script> element: '<', '>' and '&' are written
// as \u escapes (so no "</script>" or "<!--" can appear), bytes that are not UTF-8 become U+FFFD.
std::string script_safe_json(const nlohmann::json& j);

// What the page embeds: the report with its long lists cut to the limits above, and "html":
// {"files_total", "heatmap_rows_total", "libraries"} saying how many files and rows there were.
nlohmann::json html_view(const nlohmann::json& report);

std::string render_html_report(const nlohmann::json& report);

// Writes the page to `out` (a temporary file beside it, renamed into place).
dc::result<void> write_html_report(const nlohmann::json& report, const std::filesystem::path& out);

}  // namespace dc::analyze
