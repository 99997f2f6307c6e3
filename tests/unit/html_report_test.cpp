// The HTML report's page as text: the report JSON embedded so no string in it can end its
// <script>, the libraries inlined with their licenses, nothing loaded from elsewhere, limits
// on what the page embeds, and errors as values when the file cannot be written.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analyze/html_report.h"
#include "analyze/report/report_assets.h"

namespace {

using nlohmann::json;
namespace asset = dc::analyze::report_assets;

size_t count(std::string_view text, std::string_view what)
{
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

json file_with_bytes(const std::string& name, int64_t read, int64_t written)
{
  return {{"file", name},
          {"module", "POSIX"},
          {"counters", {{"POSIX_BYTES_READ", read}, {"POSIX_BYTES_WRITTEN", written}}}};
}

TEST(HtmlReport, JsonInsideAScriptCannotEndIt)
{
  const json report = {{"files", {file_with_bytes("/x/</script><script>alert(1)</script><!--&.txt", 1, 2)}}};
  const std::string text = dc::analyze::script_safe_json(report);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(text.find('>'), std::string::npos);
  EXPECT_EQ(text.find('&'), std::string::npos);
  EXPECT_EQ(json::parse(text), report);  // the same document once parsed
}

TEST(HtmlReport, BytesThatAreNotUtf8BecomeReplacementCharacters)
{
  const json report = {{"file", std::string("/data/\xff\xfe.bin")}};
  std::string text;
  ASSERT_NO_THROW(text = dc::analyze::script_safe_json(report));
  EXPECT_EQ(json::parse(text)["file"], "/data/\xEF\xBF\xBD\xEF\xBF\xBD.bin");
}

TEST(HtmlReport, EveryMarkerOfThePageIsFilledOnce)
{
  for (std::string_view marker :
       {"@@TITLE@@", "@@LICENSES@@", "@@REPORT_JSON@@", "@@CHART_JS@@", "@@MATRIX_JS@@", "@@REPORT_JS@@"})
    EXPECT_EQ(count(asset::page, marker), 1u) << marker;
  const std::string page = dc::analyze::render_html_report(json::object());
  EXPECT_EQ(count(page, "@@"), 0u);
}

TEST(HtmlReport, PageIsSelfContained)
{
  const json report = {{"files", {file_with_bytes("/x/</script>.txt", 1, 2)}}};
  const std::string page = dc::analyze::render_html_report(report);
  // Five script elements (error capture, data, two libraries, ours), whatever the data holds.
  EXPECT_EQ(count(page, "<script"), 5u);
  EXPECT_EQ(count(page, "</script>"), 5u);
  EXPECT_EQ(count(page, "<script src"), 0u);
  EXPECT_EQ(count(page, "<link"), 0u);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(count(page, "sourceMappingURL"), 0u);
  // The libraries at their pinned versions, with their licenses.
  EXPECT_NE(page.find("Chart.js v4.5.1"), std::string::npos);
  EXPECT_NE(page.find("chartjs-chart-matrix v3.1.0"), std::string::npos);
  EXPECT_NE(page.find("Chart.js 4.5.1 (https://www.chartjs.org):"), std::string::npos);
  EXPECT_NE(page.find("chartjs-chart-matrix 3.1.0"), std::string::npos);
  EXPECT_GE(count(page, "Permission is hereby granted, free of charge"), 3u);
  EXPECT_EQ(asset::versions, "chart.js 4.5.1, chartjs-chart-matrix 3.1.0");
}

TEST(HtmlReport, TitleNamesTheCommandEscaped)
{
  const json report = {{"run", {{"processes", {{{"host", "h"}, {"pid", 1}, {"command", "ior -o <a&b>"}}}}}}};
  const std::string page = dc::analyze::render_html_report(report);
  EXPECT_NE(page.find("<title>DataCrumbs I/O report: ior -o &lt;a&amp;b&gt;</title>"), std::string::npos);
}

TEST(HtmlReport, PageKeepsTheBiggestFilesAndHeatMapRows)
{
  json report = {{"files", json::array()}, {"heatmap", {{"rows", json::array()}}}};
  const size_t files = dc::analyze::html_max_files + 100, rows = dc::analyze::html_max_heatmap_rows + 10;
  // Appended: `"p" + std::to_string(i)` trips GCC 12's -Wrestrict at -O3 (GCC bug 105329).
  auto numbered = [](const char* prefix, size_t i) {
    std::string s = prefix;
    s += std::to_string(i);
    return s;
  };
  for (size_t i = 0; i < files; ++i)
    report["files"].push_back(file_with_bytes(numbered("/f", i), static_cast<int64_t>(i), 1));
  for (size_t i = 0; i < rows; ++i)
    report["heatmap"]["rows"].push_back({{"process", numbered("p", i)}, {"bytes", {i, 1}}});
  const json view = dc::analyze::html_view(report);
  ASSERT_EQ(view["files"].size(), dc::analyze::html_max_files);
  // The 100 smallest (f0..f99) are cut; the rest stay in their order.
  EXPECT_EQ(view["files"].front()["file"], "/f100");
  EXPECT_EQ(view["files"].back()["file"], "/f" + std::to_string(files - 1));
  ASSERT_EQ(view["heatmap"]["rows"].size(), dc::analyze::html_max_heatmap_rows);
  EXPECT_EQ(view["heatmap"]["rows"].front()["process"], "p10");
  EXPECT_EQ(view["html"]["files_total"], files);
  EXPECT_EQ(view["html"]["heatmap_rows_total"], rows);
}

TEST(HtmlReport, DirectorySnapshotsKeepTheirCountNotTheirEntries)
{
  const json report = {
      {"snapshots",
       {{"filesystem",
         {{{"dir", "/d"}, {"total", 2}, {"entries", {{{"path", "/d/a"}}, {{"path", "/d/b"}}}}}}}}}};
  const json view = dc::analyze::html_view(report);
  EXPECT_EQ(view["snapshots"]["filesystem"][0]["entries"], 2);
  EXPECT_EQ(view["snapshots"]["filesystem"][0]["dir"], "/d");
}

TEST(HtmlReport, UnwritablePathIsAnErrorValue)
{
  const auto out = std::filesystem::temp_directory_path() / "dc-no-such-dir" / "sub" / "report.html";
  auto written = dc::analyze::write_html_report(json::object(), out);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().message,
            "cannot write the HTML report " + out.string() + ": No such file or directory");
}

TEST(HtmlReport, WritesThePageAtomically)
{
  const auto dir = std::filesystem::temp_directory_path() / ("dc-html-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "report.html";
  ASSERT_TRUE(dc::analyze::write_html_report(json::object(), out).has_value());
  EXPECT_EQ(std::filesystem::file_size(out), dc::analyze::render_html_report(json::object()).size());
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);  // no temporary file left beside it
  std::filesystem::remove_all(dir);
}

}  // namespace
