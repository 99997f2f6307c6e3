#include "unit/headless_chromium.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

namespace dc::test {

namespace fs = std::filesystem;

const std::vector<std::string> html_chart_ids = {
    "chart-io-cost",     "chart-amp-system",   "chart-ops-system",     "chart-latency-system",
    "chart-amp-scatter", "chart-volume-layer", "chart-latency-layer",  "chart-bandwidth",
    "chart-heatmap",     "chart-access-size",  "chart-access-pattern", "chart-cache"};

std::string chromium_binary()
{
  const char* env = std::getenv("DATACRUMBS_CHROMIUM");
  return env ? env : "chromium";
}

bool chromium_available()
{
  return std::system(("command -v " + chromium_binary() + " >/dev/null").c_str()) == 0;
}

std::string read_text(const fs::path& p)
{
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

namespace {

std::string unescape_html(std::string s)
{
  const std::pair<std::string, std::string> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  return s;
}

}  // namespace

browser_page open_in_chromium(const fs::path& page, const std::string& fragment, const std::string& mode,
                              const fs::path& scratch)
{
  const fs::path out = scratch / "chromium.out", err = scratch / "chromium.err";
  // --no-sandbox: tests run as root too; the page is ours and local.
  const std::string cmd = "timeout 120 " + chromium_binary() +
                          " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
                          " --user-data-dir=" +
                          (scratch / "chromium-profile").string() +
                          " --enable-logging=stderr --v=0 --window-size=1400,9000 " + mode + " 'file://" +
                          page.string() + fragment + "' >" + out.string() + " 2>" + err.string();
  browser_page result;
  result.status = std::system(cmd.c_str());
  result.dom = read_text(out);
  result.log = read_text(err);
  std::istringstream lines(result.log);
  for (std::string line; std::getline(lines, line);)
    if (line.find(":CONSOLE") != std::string::npos)
      result.console += line + "\n";
  return result;
}

std::map<std::string, std::string> attributes_of(const std::string& dom, const std::string& id)
{
  std::map<std::string, std::string> attrs;
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos)
    return attrs;
  const size_t open = dom.rfind('<', at), close = dom.find('>', at);
  const std::string tag = dom.substr(open, close - open);
  static const std::regex attr(R"re(([\w-]+)="([^"]*)")re");
  for (std::sregex_iterator it(tag.begin(), tag.end(), attr), end; it != end; ++it)
    attrs[(*it)[1]] = unescape_html((*it)[2]);
  return attrs;
}

std::vector<std::string> file_rows(const std::string& dom)
{
  std::vector<std::string> rows;
  const size_t table = dom.find("id=\"files-table\"");
  if (table == std::string::npos)
    return rows;
  const std::string body = dom.substr(table, dom.find("</table>", table) - table);
  static const std::regex row(R"re(<tr data-file="([^"]*)")re");
  for (std::sregex_iterator it(body.begin(), body.end(), row), end; it != end; ++it)
    rows.push_back(unescape_html((*it)[1]));
  return rows;
}

void expect_clean_report(const browser_page& page)
{
  EXPECT_EQ(page.console, "") << "the page wrote to the console";
  const auto errors = attributes_of(page.dom, "dc-errors");
  EXPECT_EQ(errors.count("data-count") ? errors.at("data-count") : "missing", "0");
  EXPECT_NE(page.dom.find("data-rendered=\"done\""), std::string::npos) << "report.js did not finish";
}

}  // namespace dc::test
