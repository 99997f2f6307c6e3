// What the HTML report is made of, embedded at build time by cmake/embed_report_assets.cmake
// from src/analyze/report (the page, our scripts) and its node_modules (the pinned charting
// libraries and their licenses), so the installed binary needs no node_modules.
#pragma once

#include <string_view>

namespace dc::analyze::report_assets {

extern const std::string_view page;       // page.html, with @@NAME@@ markers
extern const std::string_view script;     // report_util.js, report.js, report_tables.js
extern const std::string_view chart_js;   // Chart.js, UMD build
extern const std::string_view matrix_js;  // chartjs-chart-matrix (the heat map)
extern const std::string_view licenses;   // the libraries' license texts (plain text)
extern const std::string_view versions;   // "chart.js 4.5.1, chartjs-chart-matrix 3.1.0"

}  // namespace dc::analyze::report_assets
