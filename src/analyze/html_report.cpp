#include "analyze/html_report.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "analyze/report/report_assets.h"

namespace dc::analyze {

namespace {

using json = nlohmann::json;

double number_at(const json& j, std::string_view key)
{
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

// Bytes read and written by a file, under its module's Darshan prefix (POSIX_BYTES_READ ...).
double file_bytes(const json& file)
{
  const std::string module = file.value("module", std::string("POSIX"));
  auto counters = file.find("counters");
  if (counters == file.end() || !counters->is_object())
    return 0;
  return number_at(*counters, module + "_BYTES_READ") + number_at(*counters, module + "_BYTES_WRITTEN");
}

// Bytes of an amplification row: the application's and the device's, read and written.
double flow_bytes(const json& row)
{
  double sum = 0;
  for (const char* layer : {"POSIX", "BLOCK"})
    if (auto l = row.find(layer); l != row.end() && l->is_object())
      sum += number_at(*l, "read_bytes") + number_at(*l, "write_bytes");
  for (const char* key : {"sys_read_bytes", "sys_write_bytes", "blk_read_bytes", "blk_write_bytes"})
    sum += number_at(row, key);
  return sum;
}

double lookups(const json& row)
{
  return number_at(row, "hits") + number_at(row, "misses");
}

// The array at section.key, when there is one.
json* array_at(json& report, std::string_view section, std::string_view key)
{
  auto s = report.find(section);
  if (s == report.end() || !s->is_object())
    return nullptr;
  auto a = s->find(key);
  return a != s->end() && a->is_array() ? &*a : nullptr;
}

double row_bytes(const json& row)
{
  double sum = 0;
  if (auto bytes = row.find("bytes"); bytes != row.end() && bytes->is_array())
    for (const json& b : *bytes) sum += b.is_number() ? b.get<double>() : 0.0;
  return sum;
}

// Keeps the `limit` elements of array j with the largest weight (ties: the earlier first).
template <class Weight>
void keep_heaviest(json& j, size_t limit, Weight weight)
{
  if (!j.is_array() || j.size() <= limit)
    return;
  std::vector<std::pair<double, size_t>> order;
  order.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) order.emplace_back(-weight(j[i]), i);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(limit), order.end());
  order.resize(limit);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  json kept = json::array();
  for (const auto& [w, i] : order) kept.push_back(std::move(j[i]));
  j = std::move(kept);
}

std::string html_escape(std::string_view s)
{
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string page_title(const json& report)
{
  std::string title = "DataCrumbs I/O report";
  const json* processes = nullptr;
  if (auto run = report.find("run"); run != report.end() && run->is_object())
    if (auto p = run->find("processes"); p != run->end() && p->is_array() && !p->empty())
      processes = &*p;
  if (processes && (*processes)[0].is_object()) {
    std::string command = (*processes)[0].value("command", std::string());
    if (command.size() > 80)
      command = command.substr(0, 77) + "...";
    if (!command.empty())
      title += ": " + command;
  }
  return html_escape(title);
}

}  // namespace

std::string script_safe_json(const json& j)
{
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  // These characters occur in JSON text only inside strings, where \u escapes mean the same.
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

json html_view(const json& report)
{
  json view = report.is_object() ? report : json::object();
  size_t files_total = 0, rows_total = 0;
  if (auto files = view.find("files"); files != view.end() && files->is_array()) {
    files_total = files->size();
    keep_heaviest(*files, html_max_files, file_bytes);
  }
  if (json* rows = array_at(view, "heatmap", "rows")) {
    rows_total = rows->size();
    keep_heaviest(*rows, html_max_heatmap_rows, row_bytes);
  }
  if (json* files = array_at(view, "amplification", "files"))
    keep_heaviest(*files, html_max_files, flow_bytes);
  if (json* processes = array_at(view, "amplification", "processes"))
    keep_heaviest(*processes, html_max_processes, flow_bytes);
  if (json* files = array_at(view, "page_cache", "files"))
    keep_heaviest(*files, html_max_files, lookups);
  if (json* processes = array_at(view, "page_cache", "processes"))
    keep_heaviest(*processes, html_max_processes, lookups);
  // A directory snapshot lists every entry; the page shows the totals only.
  if (json* dirs = array_at(view, "snapshots", "filesystem"))
    for (json& dir : *dirs)
      if (auto entries = dir.find("entries"); dir.is_object() && entries != dir.end() && entries->is_array())
        *entries = entries->size();
  view["html"] = {{"files_total", files_total},
                  {"heatmap_rows_total", rows_total},
                  {"libraries", std::string(report_assets::versions)}};
  return view;
}

std::string render_html_report(const json& report)
{
  const std::string page(report_assets::page);
  const std::string data = script_safe_json(html_view(report));
  auto insert = [&](std::string_view marker, std::string& out) {
    if (marker == "TITLE")
      out += page_title(report);
    else if (marker == "LICENSES")
      out += "<pre>" + html_escape(report_assets::licenses) + "</pre>";
    else if (marker == "REPORT_JSON")
      out += data;
    else if (marker == "CHART_JS")
      out += report_assets::chart_js;
    else if (marker == "MATRIX_JS")
      out += report_assets::matrix_js;
    else if (marker == "REPORT_JS")
      out += report_assets::script;
    else
      out.append("@@").append(marker).append("@@");
  };
  std::string out;
  out.reserve(page.size() + data.size() + report_assets::chart_js.size() + report_assets::matrix_js.size() +
              report_assets::script.size() + report_assets::licenses.size() + 1024);
  // Only the template is scanned for markers: inserted text is never read again.
  size_t at = 0;
  while (at < page.size()) {
    const size_t open = page.find("@@", at);
    const size_t close = open == std::string::npos ? open : page.find("@@", open + 2);
    if (close == std::string::npos) {
      out.append(page, at);
      break;
    }
    out.append(page, at, open - at);
    insert(std::string_view(page).substr(open + 2, close - open - 2), out);
    at = close + 2;
  }
  return out;
}

dc::result<void> write_html_report(const json& report, const std::filesystem::path& out)
{
  const std::string page = render_html_report(report);
  std::filesystem::path tmp = out;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      return dc::fail("cannot write the HTML report " + out.string() + ": " + std::strerror(errno));
    f.write(page.data(), static_cast<std::streamsize>(page.size()));
    f.close();
    if (!f) {
      const int err = errno;
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return dc::fail("cannot write the HTML report " + out.string() + ": " + std::strerror(err));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return dc::fail("cannot write the HTML report " + out.string() + ": " + ec.message());
  }
  return {};
}

}  // namespace dc::analyze
