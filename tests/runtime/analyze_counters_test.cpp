// Ground truth for the analyze report's counter sections: a workload whose Darshan counters are
// known (tests/runtime/darshan_workload.c) is traced by the real `datacrumbs run`, and the
// counters computed from its trace must equal the workload's, every one of them; the
// amplification and page-cache numbers must equal the run's own summary.
#include <algorithm>

#include "analyze/amplification.h"
#include "analyze/file_counters.h"
#include "analyze/page_cache.h"
#include "runtime/runtime_helpers.h"
#include "unit/analyze_lines.h"

namespace dc::test {
namespace {

struct analyzed {
  analyze::name_map names;
  std::vector<trace_line> lines;
  int64_t start_us = 0;
};

analyzed from_trace(const parsed_trace& t)
{
  analyzed a;
  for (const auto& j : t.lines) {
    a.lines.push_back(line_from_json(j, a.names));
    const trace_line& l = a.lines.back();
    if (l.ph != analyze::phase::metadata && l.ts_us > 0 && (a.start_us == 0 || l.ts_us < a.start_us))
      a.start_us = l.ts_us;
  }
  return a;
}

nlohmann::json file_entry(const nlohmann::json& files, const std::string& path)
{
  for (const auto& f : files)
    if (f["file"] == path)
      return f;
  return nullptr;
}

// The workload's calls on `fhash` whose names are in `names`, as [start, end] intervals.
std::vector<std::pair<int64_t, int64_t>> intervals(const analyzed& a, uint64_t fhash,
                                                   std::initializer_list<std::string_view> names)
{
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& l : a.lines)
    if (l.cat == "POSIX" && l.fhash == fhash && std::ranges::find(names, l.name) != names.end())
      out.emplace_back(l.ts_us, l.ts_us + l.dur_us);
  std::ranges::sort(out);
  return out;
}

// Seconds covered by the union of intervals (what Darshan's non-overlapping timers sum).
double covered_s(std::vector<std::pair<int64_t, int64_t>> v)
{
  int64_t total = 0, end = INT64_MIN;
  for (auto [s, e] : v) {
    s = std::max(s, end);
    if (e > s)
      total += e - s;
    end = std::max(end, e);
  }
  return static_cast<double>(total) / 1e6;
}

// The workload's counters.dat, as Darshan's rules count the calls darshan_workload.c makes.
std::map<std::string, int64_t> expected_counters()
{
  return {{"OPENS", 2},
          {"DUPS", 1},
          {"READS", 11},
          {"WRITES", 5},
          {"SEEKS", 1},
          {"STATS", 2},
          {"MMAPS", 1},
          {"FSYNCS", 1},
          {"FDSYNCS", 1},
          {"BYTES_READ", 5846},
          {"BYTES_WRITTEN", 16484},
          {"MAX_BYTE_READ", 14511},
          {"MAX_BYTE_WRITTEN", 20099},
          {"CONSEC_READS", 3},
          {"CONSEC_WRITES", 3},
          {"SEQ_READS", 8},
          {"SEQ_WRITES", 4},
          {"RW_SWITCHES", 3},
          {"SIZE_READ_0_100", 4},
          {"SIZE_READ_100_1K", 7},
          {"SIZE_READ_1K_10K", 0},
          {"SIZE_WRITE_0_100", 1},
          {"SIZE_WRITE_100_1K", 0},
          {"SIZE_WRITE_1K_10K", 4},
          {"SIZE_WRITE_10K_100K", 0},
          {"SIZE_WRITE_1G_PLUS", 0},
          {"ACCESS1_ACCESS", 4096},
          {"ACCESS1_COUNT", 4},
          {"ACCESS2_ACCESS", 1000},
          {"ACCESS2_COUNT", 4},
          {"ACCESS3_ACCESS", 100},
          {"ACCESS3_COUNT", 4},
          {"ACCESS4_ACCESS", 512},
          {"ACCESS4_COUNT", 3},
          {"STRIDE1_STRIDE", 900},
          {"STRIDE1_COUNT", 2},
          {"STRIDE2_STRIDE", 11488},
          {"STRIDE2_COUNT", 1},
          {"STRIDE3_STRIDE", 4000},
          {"STRIDE3_COUNT", 1},
          {"STRIDE4_STRIDE", 3616},
          {"STRIDE4_COUNT", 1}};
}

TEST_F(runtime_test, DarshanCountersOfAControlledWorkloadAreExact)
{
  auto run = trace_command(dir, std::string(DARSHAN_WORKLOAD_BIN) + " " + shell_quote(dir.path));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  analyzed a = from_trace(run.trace);
  analyze::file_counters acc;
  feed(acc, a.lines);
  nlohmann::json files = acc.report(a.names);
  std::string path = dir / "counters.dat";
  nlohmann::json f = file_entry(files, path);
  ASSERT_FALSE(f.is_null()) << "no counters for " << path;
  const auto expected = expected_counters();
  for (const auto& [name, value] : expected) EXPECT_EQ(f["counters"]["POSIX_" + name], value) << name;
  EXPECT_EQ(f["small_ops"], 12);
  EXPECT_EQ(f["unknown_offset_ops"], 0);
  EXPECT_EQ(f["processes"], 1);

  // Times: from the trace's own ts/dur of the workload's calls on the file.
  uint64_t fhash = 0;
  for (const auto& [h, name] : a.names.files)
    if (name == path)
      fhash = h;
  auto reads = intervals(a, fhash, {"read", "pread64"});
  auto writes = intervals(a, fhash, {"write", "pwrite64"});
  auto syncs = intervals(a, fhash, {"fsync", "fdatasync"});
  auto opens = intervals(a, fhash, {"openat", "dup"});
  auto closes = intervals(a, fhash, {"close"});
  auto meta = intervals(a, fhash, {"openat", "dup", "close", "lseek", "fstat", "newfstatat"});
  ASSERT_EQ(reads.size(), 11u);
  ASSERT_EQ(opens.size(), 2u);
  ASSERT_EQ(meta.size(), 7u);
  auto all_writes = writes;
  all_writes.insert(all_writes.end(), syncs.begin(), syncs.end());
  std::ranges::sort(all_writes);
  auto fc = [&](const std::string& n) { return f["fcounters"]["POSIX_" + n].get<double>(); };
  auto rel = [&](int64_t us) { return static_cast<double>(us - a.start_us) / 1e6; };
  auto last_end = [](const auto& v) {
    int64_t e = 0;
    for (const auto& i : v) e = std::max(e, i.second);
    return e;
  };
  EXPECT_DOUBLE_EQ(fc("F_READ_TIME"), covered_s(reads));
  EXPECT_DOUBLE_EQ(fc("F_WRITE_TIME"), covered_s(all_writes));
  EXPECT_DOUBLE_EQ(fc("F_META_TIME"), covered_s(meta));
  EXPECT_DOUBLE_EQ(fc("F_OPEN_START_TIMESTAMP"), rel(opens.front().first));
  EXPECT_DOUBLE_EQ(fc("F_OPEN_END_TIMESTAMP"), rel(last_end(opens)));
  EXPECT_DOUBLE_EQ(fc("F_READ_START_TIMESTAMP"), rel(reads.front().first));
  EXPECT_DOUBLE_EQ(fc("F_READ_END_TIMESTAMP"), rel(last_end(reads)));
  EXPECT_DOUBLE_EQ(fc("F_WRITE_START_TIMESTAMP"), rel(writes.front().first));
  EXPECT_DOUBLE_EQ(fc("F_WRITE_END_TIMESTAMP"), rel(last_end(writes)));
  EXPECT_DOUBLE_EQ(fc("F_CLOSE_START_TIMESTAMP"), rel(closes.front().first));
  EXPECT_DOUBLE_EQ(fc("F_CLOSE_END_TIMESTAMP"), rel(last_end(closes)));
  // The slowest read and write, and the size of the first call that took that long.
  for (bool read : {true, false}) {
    int64_t slowest = -1, size = 0;
    for (const auto& l : a.lines)
      if (l.cat == "POSIX" && l.fhash == fhash &&
          (read ? l.name == "read" || l.name == "pread64" : l.name == "write" || l.name == "pwrite64") &&
          l.dur_us > slowest) {
        slowest = l.dur_us;
        for (const auto& [k, v] : l.args)
          if (k == "ret")
            size = v;
      }
    EXPECT_DOUBLE_EQ(fc(read ? "F_MAX_READ_TIME" : "F_MAX_WRITE_TIME"), static_cast<double>(slowest) / 1e6);
    EXPECT_EQ(f["counters"][read ? "POSIX_MAX_READ_TIME_SIZE" : "POSIX_MAX_WRITE_TIME_SIZE"], size);
  }

  // Appends: counted, but at offsets the trace cannot place.
  nlohmann::json app = file_entry(files, dir / "append.dat");
  ASSERT_FALSE(app.is_null());
  EXPECT_EQ(app["counters"]["POSIX_OPENS"], 1);
  EXPECT_EQ(app["counters"]["POSIX_WRITES"], 3);
  EXPECT_EQ(app["counters"]["POSIX_BYTES_WRITTEN"], 150);
  EXPECT_EQ(app["counters"]["POSIX_SEQ_WRITES"], 0);
  EXPECT_EQ(app["counters"]["POSIX_SIZE_WRITE_0_100"], 3);
  EXPECT_EQ(app["counters"]["POSIX_ACCESS1_ACCESS"], 50);
  EXPECT_EQ(app["unknown_offset_ops"], 3);
}

TEST_F(runtime_test, AmplificationAndPageCacheEqualTheRunsOwnSummary)
{
  auto run = trace_command(dir, std::string(DARSHAN_WORKLOAD_BIN) + " " + shell_quote(dir.path));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  analyzed a = from_trace(run.trace);
  analyze::amplification amp;
  analyze::page_cache cache;
  feed(amp, a.lines);
  feed(cache, a.lines);
  nlohmann::json j = amp.report(a.names), pc = cache.report(a.names);
  const nlohmann::json& s = run.summary;
  const auto& bytes = s["amplification"]["bytes"];
  auto layer = [&](const char* l, const char* way) {
    return bytes.contains(l) ? bytes[l][way].get<uint64_t>() : 0;
  };
  EXPECT_EQ(j["total"]["sys_read_bytes"], layer("POSIX", "read"));
  EXPECT_EQ(j["total"]["sys_write_bytes"], layer("POSIX", "write"));
  EXPECT_EQ(j["total"]["vfs_read_bytes"], layer("FS", "read"));
  EXPECT_EQ(j["total"]["vfs_write_bytes"], layer("FS", "write"));
  EXPECT_EQ(j["total"]["blk_read_bytes"], layer("BLOCK", "read"));
  EXPECT_EQ(j["total"]["blk_write_bytes"], layer("BLOCK", "write"));
  EXPECT_EQ(j["total"]["R_AMP"], s["amplification"]["read"]);
  EXPECT_EQ(j["total"]["W_AMP"], s["amplification"]["write"]);
  EXPECT_GE(j["total"]["sys_write_bytes"].get<uint64_t>(), 16484u + 150u);  // at least the workload's
  // Per file, every layer's bytes and calls.
  size_t compared = 0;
  for (const auto& f : j["files"]) {
    ASSERT_TRUE(s["files"].contains(f["file"].get<std::string>())) << f["file"];
    const auto& sf = s["files"][f["file"].get<std::string>()];
    for (const char* l : {"POSIX", "FS", "BLOCK"})
      for (const char* k : {"read_bytes", "write_bytes", "reads", "writes"})
        EXPECT_EQ(f.contains(l) ? f[l][k].get<uint64_t>() : 0, sf.contains(l) ? sf[l][k].get<uint64_t>() : 0)
            << f["file"] << " " << l << " " << k;
    ++compared;
  }
  EXPECT_EQ(compared, s["files"].size());
  // Per process.
  for (const auto& p : j["processes"]) {
    const auto& sp = s["processes"][std::to_string(p["pid"].get<uint64_t>())]["amplification"]["bytes"];
    auto get = [&](const char* l, const char* way) {
      return sp.contains(l) ? sp[l][way].get<uint64_t>() : 0;
    };
    EXPECT_EQ(p["sys_read_bytes"], get("POSIX", "read"));
    EXPECT_EQ(p["sys_write_bytes"], get("POSIX", "write"));
    EXPECT_EQ(p["blk_write_bytes"], get("BLOCK", "write"));
  }
  if (s.contains("page_cache")) {
    EXPECT_EQ(pc["hits"], s["page_cache"]["hits"]);
    EXPECT_EQ(pc["misses"], s["page_cache"]["misses"]);
    EXPECT_EQ(pc["pages_written_back"], s["page_cache"]["pages_written_back"]);
    EXPECT_EQ(pc["pages_evicted"], s["page_cache"]["pages_evicted"]);
  }
}

TEST_F(runtime_test, TheAnalyzeCommandReportsTheSameCountersAndAmplification)
{
  auto run = trace_command(dir, std::string(DARSHAN_WORKLOAD_BIN) + " " + shell_quote(dir.path));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string json = dir / "report.json", partial = dir / "part.json", merged = dir / "merged.json";
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") +
                      " --json " + shell_quote(json) + " --partial " + shell_quote(partial) + " > /dev/null"),
            0);
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze --merge " + shell_quote(partial) + " --json " +
                      shell_quote(merged) + " > /dev/null"),
            0);
  auto report = nlohmann::json::parse(read_file(json));
  nlohmann::json f = file_entry(report["files"], dir / "counters.dat");
  ASSERT_FALSE(f.is_null());
  for (const auto& [name, value] : expected_counters())
    EXPECT_EQ(f["counters"]["POSIX_" + name], value) << name;
  // A layer that moved nothing has no entry (the fsyncs' block writes can all end unseen and be
  // still held when tracing stops): 0, as analyze says, not a lookup of a missing key.
  const nlohmann::json& bytes = run.summary["amplification"]["bytes"];
  auto written = [&](const char* layer) {
    return bytes.contains(layer) ? bytes[layer]["write"].get<uint64_t>() : 0;
  };
  EXPECT_EQ(report["amplification"]["total"]["sys_write_bytes"], written("POSIX"));
  EXPECT_EQ(report["amplification"]["total"]["blk_write_bytes"], written("BLOCK"));
  EXPECT_EQ(report["amplification"]["total"]["W_AMP"], run.summary["amplification"]["write"]);
  EXPECT_EQ(report["page_cache"]["hits"], run.summary["page_cache"]["hits"]);
  EXPECT_TRUE(report["diagnostics"].is_array());
  // The partial merges back to the same sections.
  auto again = nlohmann::json::parse(read_file(merged));
  for (const char* section : {"files", "amplification", "page_cache", "network", "diagnostics"})
    EXPECT_EQ(again[section], report[section]) << section;
}

}  // namespace
}  // namespace dc::test
