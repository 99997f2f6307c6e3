// Opening a page in headless Chromium from tests (Debian's `chromium`, or $DATACRUMBS_CHROMIUM)
// and reading the DOM it leaves: the HTML report's browser tests, with and without root.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dc::test {

// The report's charts (figure ids in src/analyze/report/page.html).
extern const std::vector<std::string> html_chart_ids;

struct browser_page {
  int status = -1;      // the browser's exit status (0: ran)
  std::string dom;      // --dump-dom output (empty for --screenshot)
  std::string console;  // the page's console lines from Chromium's log
  std::string log;      // all of Chromium's stderr
};

std::string chromium_binary();
bool chromium_available();

// Opens file://page + fragment with `mode` (--dump-dom or --screenshot=PNG); `scratch` holds
// the browser profile and its output.
browser_page open_in_chromium(const std::filesystem::path& page, const std::string& fragment,
                              const std::string& mode, const std::filesystem::path& scratch);

std::string read_text(const std::filesystem::path& p);

// Expects (gtest) a report page that wrote nothing to the console, counted no script error and
// finished drawing (report.js marks the body).
void expect_clean_report(const browser_page& page);

// The attributes of the element whose id is `id`, from serialized DOM text (entities decoded).
std::map<std::string, std::string> attributes_of(const std::string& dom, const std::string& id);

// The data-file of each row of the top files table, in order.
std::vector<std::string> file_rows(const std::string& dom);

}  // namespace dc::test
