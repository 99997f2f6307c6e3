// The HTML report opened in a real browser (headless Chromium): the page loads with no console
// message and no script error, every chart of a realistic report is drawn (the page counts the
// coloured pixels of each chart's plot area and writes them into the DOM, which --dump-dom
// returns), the top files table holds the expected rows in the expected order, and an empty
// report shows "No data" in every chart instead of a broken one. A screenshot is left in
// HTML_REPORT_ARTIFACTS for people to look at.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/html_report.h"
#include "unit/headless_chromium.h"

namespace {

namespace fs = std::filesystem;
using dc::test::attributes_of;
using dc::test::browser_page;
using dc::test::file_rows;
using dc::test::html_chart_ids;
using dc::test::read_text;
using nlohmann::json;

class HtmlReportBrowser : public ::testing::Test {
 protected:
  void SetUp() override
  {
    ASSERT_TRUE(dc::test::chromium_available())
        << dc::test::chromium_binary() << " not found: scripts/install-deps.sh installs Debian's chromium";
    dir_ = fs::temp_directory_path() / ("dc-html-browser-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  browser_page open(const fs::path& page, const std::string& fragment, const std::string& mode)
  {
    browser_page run = dc::test::open_in_chromium(page, fragment, mode, dir_);
    EXPECT_EQ(run.status, 0) << run.log;
    return run;
  }

  fs::path render(const json& report, const std::string& name)
  {
    const fs::path page = dir_ / name;
    auto written = dc::analyze::write_html_report(report, page);
    EXPECT_TRUE(written.has_value()) << written.error().message;
    return page;
  }

  fs::path dir_;
};

TEST_F(HtmlReportBrowser, RealisticReportDrawsEveryChartAndTheTopFiles)
{
  const json report =
      json::parse(read_text(fs::path(DATACRUMBS_SOURCE_DIR) / "tests/data/analyze/report_fixture.json"));
  const fs::path page = render(report, "report.html");
  const browser_page run = open(page, "", "--dump-dom");
  dc::test::expect_clean_report(run);
  for (const std::string& id : html_chart_ids) {
    const auto attrs = attributes_of(run.dom, id);
    EXPECT_EQ(attrs.count("data-status") ? attrs.at("data-status") : "missing", "drawn") << id;
    EXPECT_GT(attrs.count("data-ink") ? std::stol(attrs.at("data-ink")) : 0, 100)
        << id << ": too few pixels drawn";
  }
  // Most bytes first; files with equal bytes by name.
  const std::vector<std::string> expected = {"/scratch/ior/test.00000000",
                                             "/scratch/ior/test.00000001",
                                             "/scratch/ior/test.00000002",
                                             "/scratch/ior/test.00000003",
                                             "/scratch/ior/random.dat",
                                             "/home/user/ior.log",
                                             "/etc/locale.alias",
                                             "/etc/passwd",
                                             "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                             "/home/user/run.sh",
                                             "/scratch/ior/odd, \"name\" </script><b>x</b>.txt",
                                             "/etc/ld.so.cache"};
  EXPECT_EQ(file_rows(run.dom), expected);
  // Without labelled systems or a per-process time split, those charts say what they show.
  EXPECT_EQ(attributes_of(run.dom, "chart-io-cost")["data-source"], "files");
  EXPECT_NE(run.dom.find("<span class=\"amp-rows\">process (no storage system was labelled)</span>"),
            std::string::npos);
  // Snapshot, diagnostics and the process table were drawn (the DOM also holds the JSON and the
  // scripts, so the checks look for the elements that report.js makes).
  EXPECT_NE(run.dom.find("<dd>AMD EPYC 7763 64-Core Processor</dd>"), std::string::npos);
  EXPECT_NE(run.dom.find("data-rule=\"random_access\""), std::string::npos);
  EXPECT_NE(run.dom.find("<td class=\"text\">node-b</td>"), std::string::npos);

  fs::create_directories(HTML_REPORT_ARTIFACTS);
  const fs::path png = fs::path(HTML_REPORT_ARTIFACTS) / "report.png";
  fs::remove(png);
  EXPECT_EQ(open(page, "", "--screenshot=" + png.string()).console, "");
  ASSERT_TRUE(fs::exists(png));
  EXPECT_EQ(read_text(png).substr(1, 3), "PNG");
  fs::copy_file(page, fs::path(HTML_REPORT_ARTIFACTS) / "report.html", fs::copy_options::overwrite_existing);
}

TEST_F(HtmlReportBrowser, TopFilesSortByTheColumnTheAddressNames)
{
  const json report =
      json::parse(read_text(fs::path(DATACRUMBS_SOURCE_DIR) / "tests/data/analyze/report_fixture.json"));
  const browser_page run = open(render(report, "report.html"), "#files-sort=meta_s", "--dump-dom");
  dc::test::expect_clean_report(run);
  const auto table = attributes_of(run.dom, "files-table");
  EXPECT_EQ(table.at("data-sort-key"), "meta_s");
  EXPECT_EQ(table.at("data-sort-order"), "desc");
  auto rows = file_rows(run.dom);
  ASSERT_EQ(rows.size(), 12u);
  rows.resize(6);
  const std::vector<std::string> most_meta_time = {"/scratch/ior/test.00000003", "/scratch/ior/test.00000002",
                                                   "/scratch/ior/test.00000001", "/scratch/ior/test.00000000",
                                                   "/scratch/ior/random.dat",    "/home/user/ior.log"};
  EXPECT_EQ(rows, most_meta_time);
}

// Also a run of 4000 bins (each fixture bin split in 100): the page draws it in wider bins.
TEST_F(HtmlReportBrowser, LabelledSystemsPerProcessTimesAndThousandsOfBinsAreDrawn)
{
  json report =
      json::parse(read_text(fs::path(DATACRUMBS_SOURCE_DIR) / "tests/data/analyze/report_fixture.json"));
  json& processes = report["run"]["processes"];
  for (size_t i = 0; i < processes.size(); ++i)
    processes[i]["io_cost_us"] = {{"read", 1000 * (i + 1)}, {"write", 2000 * (i + 1)}, {"meta", 300}};
  json system = report["amplification"]["total"];
  system["system"] = "ior";
  system["processes"] = 4;
  report["amplification"]["systems"] = json::array({system});
  auto split = [](json& bytes) {
    json fine = json::array();
    for (const json& b : bytes)
      for (int i = 0; i < 100; ++i) fine.push_back(b.get<int64_t>() / 100);
    bytes = std::move(fine);
  };
  for (auto& [layer, series] : report["timeseries"]["layers"].items()) split(series["bytes"]);
  for (json& row : report["heatmap"]["rows"]) split(row["bytes"]);
  report["timeseries"]["bin_ms"] = 2.5;
  report["heatmap"]["bin_ms"] = 2.5;
  const browser_page run = open(render(report, "labelled.html"), "", "--dump-dom");
  dc::test::expect_clean_report(run);
  EXPECT_EQ(attributes_of(run.dom, "chart-io-cost")["data-source"], "processes");
  for (const std::string& id : html_chart_ids)
    EXPECT_EQ(attributes_of(run.dom, id)["data-status"], "drawn") << id;
  EXPECT_NE(run.dom.find("<span class=\"amp-rows\">system</span>"), std::string::npos);
}

TEST_F(HtmlReportBrowser, EmptyReportSaysNoDataInEveryChart)
{
  const json empty = json::parse(R"({"version": 1,
    "inputs": {"files": 1, "lines": 0, "skipped": {}, "problems": []},
    "run": {"hosts": [], "processes": [], "threads": 0, "start_us": 0, "end_us": 0, "wall_s": 0, "events": 0, "lost": {}},
    "layers": [], "layer_time": [], "files": [],
    "amplification": {"files": [], "processes": [], "systems": []},
    "page_cache": {"hits": 0, "misses": 0, "hit_ratio": null, "written_back": 0, "evicted": 0, "processes": []},
    "network": {"bytes_sent": 0, "bytes_received": 0, "connections": 0},
    "timeseries": {"bin_ms": 100, "start_us": 0, "layers": {}},
    "heatmap": {"bin_ms": 100, "start_us": 0, "rows": []},
    "diagnostics": [], "snapshots": {"system": {}, "processes": [], "filesystem": []}})");
  const browser_page run = open(render(empty, "empty.html"), "", "--dump-dom");
  dc::test::expect_clean_report(run);
  for (const std::string& id : html_chart_ids) {
    const auto attrs = attributes_of(run.dom, id);
    EXPECT_EQ(attrs.count("data-status") ? attrs.at("data-status") : "missing", "empty") << id;
  }
  EXPECT_EQ(run.dom.find("<canvas"), std::string::npos);
  EXPECT_NE(run.dom.find("No data: no file was accessed"), std::string::npos);
}

}  // namespace
