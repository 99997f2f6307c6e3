#include "cli/analyze_mode.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <optional>

#include "analyze/analysis.h"
#include "analyze/csv_events.h"
#include "analyze/csv_tables.h"
#include "analyze/html_report.h"
#include "analyze/trace_reader.h"
#include "sink/gzip_members.h"

namespace dc {

namespace {

// A whole file, inflated when it is gzip (zlib's gzread reads plain files as they are).
result<std::string> read_maybe_gzip(const std::string& path)
{
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    return fail(path + ": cannot open");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  bool bad = n < 0;
  gzclose(f);
  if (bad)
    return fail(path + ": not a readable gzip file");
  return out;
}

result<> write_text(const std::string& path, const std::string& text)
{
  if (path.ends_with(".gz")) {
    auto w = gzip_member_writer::create(path);
    if (!w)
      return std::unexpected(w.error());
    w->buffer() = text;
    return w->close();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    return fail(path + ": cannot write");
  return {};
}

result<analyze::analysis> merge_partials(const std::vector<std::string>& paths)
{
  analyze::analysis all;
  bool first = true;
  for (const std::string& p : paths) {
    auto text = read_maybe_gzip(p);
    if (!text)
      return std::unexpected(text.error());
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded())
      return fail(p + ": not JSON, so not a partial result");
    auto part = analyze::analysis::from_partial(j);
    if (!part)
      return fail(p + ": " + part.error().message);
    if (first)
      all = std::move(*part);  // its clock threshold, not the default's
    else
      all.merge(*part);
    first = false;
  }
  return all;
}

}  // namespace

result<int> run_analyze(const analyze_options& o)
{
  if (!o.csv_dir.empty())
    if (auto made = analyze::make_directory(o.csv_dir); !made)
      return std::unexpected(made.error());
  analyze::analysis all;
  // --csv's per-event tables, written as the records stream by (not from partials: they hold none).
  std::optional<analyze::event_csv_writer> events_csv;
  std::optional<dc::error> csv_error;
  if (o.merge) {
    auto merged = merge_partials(o.inputs);
    if (!merged)
      return std::unexpected(merged.error());
    all = std::move(*merged);
  } else {
    all.inputs.print = true;
    if (o.clock_skew_us >= 0)
      all.clock.threshold_us = o.clock_skew_us;
    std::vector<std::string> files = analyze::expand_inputs(o.inputs, all.inputs);
    analyze::reader_options ro{o.threads, o.progress && isatty(STDERR_FILENO)};
    if (!o.csv_dir.empty())
      events_csv.emplace(o.csv_dir, all.names.names);
    analyze::record_sink sink{[&](const analyze::record& r) {
                                // names first: the CSV row resolves its hashes
                                const analyze::record& placed = all.add(r);
                                if (events_csv) {
                                  events_csv->add(placed);
                                  if (const analyze::record* fs = all.folded())
                                    events_csv->add(*fs);  // a row of the fs table, as before
                                }
                              },
                              [&] {
                                all.end_file();
                                if (events_csv)
                                  if (auto ended = events_csv->end_file(); !ended && !csv_error)
                                    csv_error = ended.error();
                              },
                              [&](const std::string& path) {
                                if (events_csv)
                                  events_csv->begin_file(path);
                              }};
    analyze::read_traces(files, ro, all.inputs, sink);
    if (csv_error)
      return std::unexpected(*csv_error);
    if (all.inputs.problems_total > all.inputs.problems.size())
      std::fprintf(stderr, "analyze: %llu problems in all (the first %zu are listed)\n",
                   static_cast<unsigned long long>(all.inputs.problems_total), all.inputs.problems.size());
    if (!o.partial_path.empty())
      if (auto w = write_text(o.partial_path, all.partial().dump()); !w)
        return std::unexpected(w.error());
  }
  nlohmann::json report = all.report(o.bin_ms);
  if (!o.json_path.empty())
    if (auto w = write_text(o.json_path, report.dump(1)); !w)
      return std::unexpected(w.error());
  if (!o.csv_dir.empty())
    if (auto w = analyze::write_report_tables(report, o.csv_dir); !w)
      return std::unexpected(w.error());
  if (!o.html_path.empty())
    if (auto w = analyze::write_html_report(report, o.html_path); !w)
      return std::unexpected(w.error());
  std::fputs(analyze::text_report(report).c_str(), stdout);
  if (all.inputs.records() == 0) {  // no line was a trace record: there is no report to trust
    if (all.inputs.lines == 0)
      std::fprintf(stderr, "datacrumbs: analyze: nothing could be read\n");
    else
      std::fprintf(stderr, "datacrumbs: analyze: nothing could be read: all %llu lines were skipped\n",
                   static_cast<unsigned long long>(all.inputs.lines));
    return 1;
  }
  return 0;
}

}  // namespace dc
