#include "cli/analyze_mode.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>

#include "analyze/analysis.h"
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
    all.merge(*part);
  }
  return all;
}

}  // namespace

result<int> run_analyze(const analyze_options& o)
{
  if (!o.csv_dir.empty() || !o.html_path.empty())
    // Hook: the CSV and HTML renderers (issue 12) take the report JSON.
    return fail("--csv and --html are not in this build yet", 2);
  analyze::analysis all;
  if (o.merge) {
    auto merged = merge_partials(o.inputs);
    if (!merged)
      return std::unexpected(merged.error());
    all = std::move(*merged);
  } else {
    all.inputs.print = true;
    std::vector<std::string> files = analyze::expand_inputs(o.inputs, all.inputs);
    analyze::reader_options ro{o.threads, o.progress && isatty(STDERR_FILENO)};
    analyze::record_sink sink{[&](const analyze::record& r) { all.add(r); }, [&] { all.end_file(); }};
    analyze::read_traces(files, ro, all.inputs, sink);
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
  std::fputs(analyze::text_report(report).c_str(), stdout);
  if (all.inputs.lines == 0) {
    std::fprintf(stderr, "datacrumbs: analyze: nothing could be read\n");
    return 1;
  }
  return 0;
}

}  // namespace dc
