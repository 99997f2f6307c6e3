// `datacrumbs analyze --html` on the trace of a real run: dd writes 64 blocks of 64 KiB (4 MiB)
// under `datacrumbs run`; analyze writes the JSON and the page; headless Chromium opens the page,
// which must log nothing, draw the charts the run has data for (layers, bandwidth, heat map),
// say "No data" for the others (never a blank or broken chart), and show the layer table
// with dd's 64 writes and 4 MiB, as the JSON has them.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/runtime_helpers.h"
#include "unit/headless_chromium.h"

namespace dc::test {
namespace {

TEST_F(runtime_test, AnalyzeHtmlOfARealRunDrawsItsData)
{
  ASSERT_TRUE(chromium_available()) << chromium_binary() << " not found: run scripts/install-deps.sh";
  const std::string out = dir / "out.dat";
  traced_run run =
      trace_command(dir, "dd if=/dev/zero of=" + out + " bs=64k count=64 conv=fsync status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;

  const std::string json_path = dir / "report.json", html_path = dir / "report.html";
  ASSERT_EQ(
      run_shell(std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") + " --json " +
                shell_quote(json_path) + " --html " + shell_quote(html_path) + " >/dev/null"),
      0);
  const nlohmann::json report = nlohmann::json::parse(read_file(json_path));
  nlohmann::json posix_write;
  for (const auto& l : report["layers"])
    if (l["layer"] == "POSIX" && l["op"] == "write")
      posix_write = l;
  ASSERT_FALSE(posix_write.is_null()) << report["layers"].dump();
  EXPECT_EQ(posix_write["count"], 64);
  EXPECT_EQ(posix_write["bytes"], 64 * 65536);

  const browser_page page = open_in_chromium(html_path, "", "--dump-dom", dir.path);
  ASSERT_EQ(page.status, 0) << page.log;
  expect_clean_report(page);
  for (const std::string& id : html_chart_ids) {
    const std::string status = attributes_of(page.dom, id)["data-status"];
    EXPECT_TRUE(status == "drawn" || status == "empty") << id << ": " << status;
  }
  for (const std::string id :
       {"chart-volume-layer", "chart-latency-layer", "chart-bandwidth", "chart-heatmap"})
    EXPECT_EQ(attributes_of(page.dom, id)["data-status"], "drawn") << id;
  EXPECT_NE(page.dom.find("<td class=\"text\">POSIX</td><td class=\"text\">write</td><td class=\"\">64</td>"
                          "<td class=\"\">4.00 MiB</td>"),
            std::string::npos);
}

// The I/O cost chart splits read, write and metadata time per process from the report's own
// numbers (run.processes[].io_cost_us): one bar per process that spent any, not one for the job.
TEST_F(runtime_test, AnalyzeHtmlOfARealRunSplitsIoCostPerProcess)
{
  ASSERT_TRUE(chromium_available()) << chromium_binary() << " not found: run scripts/install-deps.sh";
  const std::string a = dir / "a.dat", b = dir / "b.dat";
  traced_run run = trace_command(dir, "sh -c 'dd if=/dev/zero of=" + a +
                                          " bs=64k count=64 conv=fsync status=none && dd if=" + a +
                                          " of=" + b + " bs=64k conv=fsync status=none'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string json_path = dir / "report.json", html_path = dir / "report.html";
  ASSERT_EQ(
      run_shell(std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") + " --json " +
                shell_quote(json_path) + " --html " + shell_quote(html_path) + " >/dev/null"),
      0);
  const nlohmann::json report = nlohmann::json::parse(read_file(json_path));
  // Per process: its POSIX files' Darshan times; the two dd processes wrote (and the second read).
  size_t with_cost = 0, writers = 0;
  std::map<std::string, int64_t> by_kind;
  for (const auto& p : report["run"]["processes"]) {
    const auto& c = p["io_cost_us"];
    ASSERT_TRUE(c.is_object()) << p.dump();
    int64_t sum = 0;
    for (const char* k : {"read", "write", "meta"}) {
      by_kind[k] += c[k].get<int64_t>();
      sum += c[k].get<int64_t>();
    }
    with_cost += sum > 0;
    writers += p["name"] == "dd" && c["write"].get<int64_t>() > 0;
  }
  EXPECT_EQ(writers, 2u) << report["run"]["processes"].dump();
  ASSERT_GE(with_cost, 2u);
  // The processes' split adds up to the files' Darshan times (the same calls, counted once).
  for (const auto& [k, name] : std::map<std::string, std::string>{
           {"read", "POSIX_F_READ_TIME"}, {"write", "POSIX_F_WRITE_TIME"}, {"meta", "POSIX_F_META_TIME"}}) {
    double files_s = 0;
    for (const auto& f : report["files"])
      if (f["module"] == "POSIX")
        files_s += f["fcounters"][name].get<double>();
    EXPECT_EQ(by_kind[k], std::llround(files_s * 1e6)) << k;
  }
  const browser_page page = open_in_chromium(html_path, "", "--dump-dom", dir.path);
  ASSERT_EQ(page.status, 0) << page.log;
  expect_clean_report(page);
  auto chart = attributes_of(page.dom, "chart-io-cost");
  EXPECT_EQ(chart["data-status"], "drawn");
  EXPECT_EQ(chart["data-source"], "processes");
  EXPECT_EQ(chart["data-rows"], std::to_string(with_cost));
}

}  // namespace
}  // namespace dc::test
