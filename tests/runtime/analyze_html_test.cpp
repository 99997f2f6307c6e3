// `datacrumbs analyze --html` on the trace of a real run: dd writes 64 blocks of 64 KiB (4 MiB)
// under `datacrumbs run`; analyze writes the JSON and the page; headless Chromium opens the page,
// which must log nothing, draw the charts the run has data for (layers, bandwidth, heat map),
// say "No data" for the others (never a blank or broken chart), and show the layer table
// with dd's 64 writes and 4 MiB, as the JSON has them.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dc::test
