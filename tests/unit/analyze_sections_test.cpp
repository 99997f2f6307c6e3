// The sections: the latency sketch's error bound, exact merges of partial results (timeline
// levels included), and DFTracer's own cm1 traces read with the right counts.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "core/latency_sketch.h"
#include "unit/analyze_test_util.h"

namespace dc::test {
namespace {

std::vector<std::string> cm1_files()
{
  std::vector<std::string> files;
  for (int pid : {3537780, 3537781, 3537782, 3537783})
    files.push_back(std::string(DATACRUMBS_SOURCE_DIR) + "/tests/data/dftracer-cm1/cm1-DEFAULT-" +
                    std::to_string(pid) + "-preload.pfw.gz");
  return files;
}

std::string zcat(const std::string& path)
{
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

TEST(AnalyzeSketch, ExactBelow1024AndWithinOnePercentAbove)
{
  std::mt19937_64 rng(7);
  std::vector<uint64_t> values;
  latency_sketch s;
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = rng() % 3 == 0 ? rng() % 1000 : rng() % 5'000'000;
    values.push_back(v);
    s.add(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 1.0}) {
    size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
    double truth = static_cast<double>(values[rank - 1]);
    double got = s.quantile(q);
    if (truth < 1024)
      EXPECT_EQ(got, truth) << q;
    else
      EXPECT_LE(std::abs(got - truth), 0.01 * truth + 1e-9) << q;
  }
  EXPECT_EQ(s.max, values.back());
}

TEST(AnalyzeSketch, MergedEqualsAllAndSurvivesPartials)
{
  latency_sketch a, b, all;
  for (uint64_t v = 0; v < 100000; v += 37) {
    (v % 2 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  EXPECT_EQ(a.partial(), all.partial());
  auto back = latency_sketch::from_partial(all.partial());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->report(), all.report());
}

TEST(AnalyzeTimeline, BytesSpreadOverBinsSumExactlyAtEveryWidth)
{
  analyze::timeline_section t;
  analyze::record r;
  r.ph = analyze::phase::complete;
  r.cat = "BLOCK";
  r.name = "write";
  r.ts_us = 1'000'500;
  r.dur_us = 7'777;
  analyze::record_arg bytes{"bytes", 1'000'003};
  r.args = std::span<const analyze::record_arg>(&bytes, 1);
  t.add(r);
  analyze::run_section run;
  for (uint64_t bin : {1u, 2u, 3u, 8u, 1000u}) {
    nlohmann::json ts = t.report({}, run, bin)["timeseries"];
    auto v = ts["layers"]["BLOCK"]["bytes"].get<std::vector<uint64_t>>();
    uint64_t sum = 0;
    for (uint64_t x : v) sum += x;
    EXPECT_EQ(sum, 1'000'003u) << bin;
    EXPECT_EQ(ts["layers"]["BLOCK"]["ops"].get<std::vector<uint64_t>>()[0], 1u);
  }
}

// The text report holds the time series and heat map themselves (not only "see --json"), grouped
// into at most 12 columns: 24 bins of 10 ms, two writes of 100 kB per 20 ms column.
TEST(AnalyzeTimeline, TheTextReportShowsTheSeriesAndTheHeatMap)
{
  analyze::analysis a;
  analyze::record r;
  r.ph = analyze::phase::complete;
  r.cat = "POSIX";
  r.name = "write";
  r.pid = r.tid = 5;
  r.hhash = 9;
  analyze::record_arg ret{"ret", 100'000};
  r.args = std::span<const analyze::record_arg>(&ret, 1);
  for (int i = 0; i < 24; ++i) {
    r.ts_us = 1'000'000 + i * 10'000;
    a.add(r);
  }
  std::string text = analyze::text_report(a.report(10));
  auto tokens_of_line_after = [&](const std::string& heading, const std::string& first) {
    size_t at = text.find(heading);
    EXPECT_NE(at, std::string::npos) << text;
    at = text.find("\n" + first + " ", at);
    EXPECT_NE(at, std::string::npos) << text;
    std::istringstream line(text.substr(at + 1, text.find('\n', at + 1) - at - 1));
    std::vector<std::string> t;
    for (std::string w; line >> w;) t.push_back(w);
    return t;
  };
  EXPECT_NE(text.find("time series: 24 bins of 10 ms; in columns of 2 bins (0.02 s) from the first bin"),
            std::string::npos)
      << text;
  std::vector<std::string> mbs = {"POSIX", "2.40"}, ops = {"POSIX", "24"}, heat = {"9:5", "2.40"};
  for (int c = 0; c < 12; ++c) {
    mbs.push_back("10");  // 200 kB in 0.02 s
    ops.push_back("100");
    heat.push_back("0.20");
  }
  EXPECT_EQ(tokens_of_line_after("layer: MB/s", "POSIX"), mbs);
  EXPECT_EQ(tokens_of_line_after("layer: ops/s", "POSIX"), ops);
  EXPECT_EQ(tokens_of_line_after("heat map: POSIX MB per process", "9:5"), heat);
  EXPECT_EQ(text.find("(in --json)"), std::string::npos);
}

// What a partial round trip and merge give must equal one analysis of all the inputs.
nlohmann::json merged_report(const std::vector<std::vector<std::string>>& groups, uint64_t bin_ms)
{
  analyze::analysis all;
  for (const auto& g : groups) {
    read_result r = read_all(g, 2);
    auto back = analyze::analysis::from_partial(nlohmann::json::parse(r.all.partial().dump()));
    EXPECT_TRUE(back) << (back ? "" : back.error().message);
    if (back)
      all.merge(*back);
  }
  return all.report(bin_ms);
}

TEST(AnalyzeMerge, PartialsOfDisjointInputsMergeToTheSingleRun)
{
  temp_dir d;
  // A short run and a long one: their timelines sit at different base levels.
  std::string shortrun, longrun;
  for (int i = 0; i < 50; ++i) shortrun += span_line("write", "POSIX", 3, 5'000'000 + i * 100, 40, 4096);
  for (int i = 0; i < 50; ++i)
    longrun += span_line("read", "POSIX", 4, 1'000'000 + i * 90'000'000L, 1'000'000, 65536);
  write_members(d.file("s.pfw.gz"), {shortrun});
  write_members(d.file("l.pfw.gz"), {longrun});
  std::vector<std::string> inputs = cm1_files();
  inputs.push_back(d.file("s.pfw.gz"));
  inputs.push_back(d.file("l.pfw.gz"));
  for (uint64_t bin : {0u, 5000u}) {
    nlohmann::json one = read_all(inputs, 2).all.report(bin);
    nlohmann::json merged =
        merged_report({{inputs[0], inputs[5]}, {inputs[1], inputs[2]}, {inputs[3], inputs[4]}}, bin);
    EXPECT_EQ(one, merged) << bin;
    EXPECT_GT(one["timeseries"]["bins"].get<uint64_t>(), 1u);
  }
}

// One event per call: a buffered read or write written in its call's args ("fs") is counted as
// the FS event it stands for, so a trace of folded calls reports what one of separate events does.
TEST(AnalyzeFolded, AFoldedFsOperationCountsAsItsOwnEventDid)
{
  temp_dir d;
  std::string separate, folded;
  for (long i = 0; i < 10; ++i) {
    std::string id = std::to_string(1000 + 2 * i), ts = std::to_string(5'000'000 + i * 100);
    std::string call =
        "{\"id\":" + id + ",\"name\":\"pread64\",\"cat\":\"POSIX\",\"pid\":3,\"tid\":3,\"ts\":" + ts +
        ",\"dur\":7,\"ph\":\"X\",\"args\":{\"hhash\":7,\"level\":1,\"p_idx\":-1,\"fd\":3,\"count\":4096,"
        "\"offset\":" +
        std::to_string(i * 4096) + ",\"ret\":4096";
    std::string pages = ",\"first_page\":" + std::to_string(i) + ",\"last_page\":" + std::to_string(i);
    separate += call + ",\"fhash\":5}}\n";
    separate += "{\"id\":" + std::to_string(1001 + 2 * i) +
                ",\"name\":\"buffered_read\",\"cat\":\"FS\",\"pid\":3,\"tid\":3,\"ts\":" + ts +
                ",\"dur\":7,\"ph\":\"X\",\"args\":{\"hhash\":7,\"level\":2,\"p_idx\":" + id +
                ",\"ret\":4096,\"offset\":" + std::to_string(i * 4096) + pages + ",\"fhash\":5}}\n";
    folded += call + pages + ",\"fs\":\"buffered_read\",\"fhash\":5}}\n";
  }
  write_members(d.file("separate.pfw.gz"), {separate});
  write_members(d.file("folded.pfw.gz"), {folded});
  nlohmann::json a = read_all({d.file("separate.pfw.gz")}, 1).all.report(0);
  nlohmann::json b = read_all({d.file("folded.pfw.gz")}, 1).all.report(0);
  for (const char* section : {"layers", "layer_time", "amplification", "timeseries", "files"})
    EXPECT_EQ(a[section], b[section]) << section;
  auto fs =
      std::find_if(b["layers"].begin(), b["layers"].end(), [](const auto& l) { return l["layer"] == "FS"; });
  ASSERT_NE(fs, b["layers"].end());
  EXPECT_EQ((*fs)["count"], 10);
  EXPECT_EQ((*fs)["bytes"], 40960);
  // The run counts the trace's lines: one per call now.
  EXPECT_EQ(a["run"]["events"], 20);
  EXPECT_EQ(b["run"]["events"], 10);
}

// Found by fuzzing (tests/fuzz/regressions/analyze_partial/): a number JSON gives as a float
// (fractional, or too large for 64 bits) where a partial holds a counter converted with
// undefined behaviour. A partial holds whole numbers only; anything else is refused.
TEST(AnalyzeMerge, APartialWithAFloatAnywhereIsRefused)
{
  temp_dir d;
  write_members(d.file("t.pfw.gz"), {span_line("read", "POSIX", 3, 1000, 5, 100)});
  const std::string good = read_all({d.file("t.pfw.gz")}, 1).all.partial().dump();
  ASSERT_TRUE(analyze::analysis::from_partial(nlohmann::json::parse(good)));
  for (const char* number : {"1.5", "18446744073709551616", "1e3", "-0.0"}) {
    std::string bad = good;
    size_t at = bad.find("\"lines\":");
    ASSERT_NE(at, std::string::npos);
    at += 8;
    bad.replace(at, bad.find_first_of(",}", at) - at, number);
    auto refused = analyze::analysis::from_partial(nlohmann::json::parse(bad));
    ASSERT_FALSE(refused) << number;
    EXPECT_NE(refused.error().message.find("not a whole number"), std::string::npos);
  }
}

TEST(AnalyzeDFTracer, Cm1TracesAreReadWithTheirEventCounts)
{
  // Ground truth from the text itself: every object line, X lines of I/O layers, M lines.
  uint64_t objects = 0, spans = 0, metadata = 0, posix = 0, stdio = 0;
  for (const std::string& f : cm1_files()) {
    std::istringstream text(zcat(f));
    for (std::string line; std::getline(text, line);) {
      if (line.empty() || line[0] != '{')
        continue;
      ++objects;
      bool x = line.find("\"ph\":\"X\"") != std::string::npos;
      bool ours = line.find("\"cat\":\"dftracer\"") == std::string::npos;
      spans += x && ours;
      metadata += line.find("\"ph\":\"M\"") != std::string::npos;
      posix += line.find("\"cat\":\"POSIX\"") != std::string::npos;
      stdio += line.find("\"cat\":\"STDIO\"") != std::string::npos;
    }
  }
  ASSERT_EQ(objects, 28518u);  // 8792 + 6575 + 6590 + 6565 lines less the [ and ] lines
  read_result r = read_all(cm1_files(), 2);
  EXPECT_EQ(r.all.inputs.problems_total, 0u);
  EXPECT_EQ(r.all.inputs.lines, objects);
  EXPECT_EQ(r.all.run.events, spans);
  EXPECT_EQ(r.all.run.metadata, metadata);
  EXPECT_EQ(r.all.layers.layers["POSIX"].count, posix);
  EXPECT_EQ(r.all.layers.layers["STDIO"].count, stdio);
  nlohmann::json rep = r.all.report(0);
  ASSERT_EQ(rep["run"]["processes"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(rep["run"]["processes"][i]["rank"], i);
    EXPECT_EQ(rep["run"]["processes"][i]["host"], "corona173");
    EXPECT_EQ(rep["run"]["processes"][i]["command"], "./cm1.exe");
  }
  EXPECT_EQ(rep["heatmap"]["rows"].size(), 4u);
  EXPECT_EQ(rep["heatmap"]["rows"][2]["process"], "corona173:3537782 (rank 2)");
}

// Bins are what docs/analyze.md promises: by default about 200 of 1, 2 or 5 × 10^k ms; a
// requested width as given, rounded up to the base width (10^k ms) only when the run spans more
// than 16384 base bins of a finer one.
TEST(AnalyzeTimeline, BinsAreOneTwoOrFiveTimesAPowerOfTenMilliseconds)
{
  read_result r = read_all(cm1_files(), 2);
  double wall_ms = r.all.run.wall_s() * 1000;
  ASSERT_GT(wall_ms, 100'000);  // cm1 ran about 145 s: 10 ms base bins (14,500 of them)
  ASSERT_LT(wall_ms, 163'840);
  EXPECT_EQ(r.all.report(0)["timeseries"]["bin_ms"], 1000);  // 145 s / 200 = 0.73 s -> 1 s
  EXPECT_EQ(r.all.report(0)["heatmap"]["bin_ms"], 1000);
  for (uint64_t asked : {1000u, 500u, 200u, 20u, 10u, 30u})
    EXPECT_EQ(r.all.report(asked)["timeseries"]["bin_ms"], asked) << asked;
  EXPECT_EQ(r.all.report(2)["timeseries"]["bin_ms"], 10);  // finer than the 10 ms base bins
  EXPECT_EQ(r.all.report(15)["timeseries"]["bin_ms"], 20);
  // A short run: 1 ms base bins, every width as asked.
  analyze::analysis one;
  analyze::record rec;
  rec.ph = analyze::phase::complete;
  rec.cat = "POSIX";
  rec.name = "read";
  for (int64_t ts : {1'000'000, 1'900'000}) {
    rec.ts_us = ts;
    one.add(rec);
  }
  EXPECT_EQ(one.report(0)["timeseries"]["bin_ms"], 5);  // 900 ms / 200 = 4.5 ms -> 5 ms
  EXPECT_EQ(one.report(7)["timeseries"]["bin_ms"], 7);
}

// same_text compares in words: every length up to 24 against a change at each position (first,
// middle and last bytes, the overlapping last word), and strings cut from a longer buffer.
TEST(SameText, EqualsStringViewEquality)
{
  std::string base = "abcdefghijklmnopqrstuvwxyz";
  for (size_t n = 0; n <= 24; ++n) {
    std::string a = base.substr(0, n), b = a;
    EXPECT_TRUE(analyze::same_text(a, b)) << n;
    EXPECT_TRUE(analyze::same_text(std::string_view(base).substr(1, n), base.substr(1, n))) << n;
    EXPECT_FALSE(analyze::same_text(a, base.substr(0, n + 1))) << n;
    for (size_t i = 0; i < n; ++i) {
      std::string c = a;
      c[i] = '#';
      EXPECT_FALSE(analyze::same_text(a, c)) << n << " " << i;
      EXPECT_FALSE(analyze::same_text(c, a)) << n << " " << i;
    }
  }
}

}  // namespace
}  // namespace dc::test
