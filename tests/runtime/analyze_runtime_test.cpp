// datacrumbs analyze on traces of real runs: its layer breakdown, amplification and counts must equal the
// run's own summary exactly, in trace mode and in profile mode, and its partial must merge to
// the same report.
#include <string>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

struct analyze_runtime : runtime_test {
  // datacrumbs analyze TRACE --json R.json --partial P.json; the report.
  nlohmann::json analyze(const std::string& trace)
  {
    std::string cmd = std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(trace) + " --json " +
                      shell_quote(dir / "report.json") + " --partial " +
                      shell_quote(dir / "partial.json.gz") + " --no-progress > " +
                      shell_quote(dir / "report.txt");
    EXPECT_EQ(run_shell(cmd), 0) << cmd;
    return nlohmann::json::parse(read_file(dir / "report.json"));
  }

  // Every (layer, op) of the summary, and only those, with the same count, bytes and time.
  void expect_layers_equal(const nlohmann::json& summary, const nlohmann::json& report)
  {
    size_t compared = 0;
    for (const auto& [layer, ops] : summary["layers"].items())
      for (const auto& [op, s] : ops.items()) {
        auto it = std::find_if(report["layers"].begin(), report["layers"].end(),
                               [&](const auto& l) { return l["layer"] == layer && l["op"] == op; });
        ASSERT_NE(it, report["layers"].end()) << layer << " " << op;
        EXPECT_EQ((*it)["count"], s["count"]) << layer << " " << op;
        EXPECT_EQ((*it)["bytes"], s["bytes"]) << layer << " " << op;
        EXPECT_EQ((*it)["time_us"], s["time_us"]) << layer << " " << op;
        if (s.contains("latency_us"))  // device latencies: the sketch is within 1 % (exact < 1024)
          for (const char* q : {"p50", "p90", "p99", "max"}) {
            double truth = s["latency_us"][q].get<double>(), got = (*it)["latency_us"][q].get<double>();
            EXPECT_LE(std::abs(got - truth), truth < 1024 ? 0.0 : 0.01 * truth)
                << layer << " " << op << " " << q;
          }
        ++compared;
      }
    EXPECT_EQ(report["layers"].size(), compared);
    EXPECT_GT(compared, 5u);
  }

  // The amplification section against the summary's: the run's bytes per layer and direction,
  // R_AMP and W_AMP, every file's bytes and calls per layer, every process's bytes.
  void expect_amplification_equal(const nlohmann::json& summary, const nlohmann::json& report)
  {
    const nlohmann::json& amp = report["amplification"];
    const nlohmann::json& bytes = summary["amplification"]["bytes"];
    auto of = [](const nlohmann::json& b, const char* layer, const char* way) -> uint64_t {
      return b.contains(layer) ? b[layer][way].get<uint64_t>() : 0;
    };
    for (auto [row, layer] : {std::pair{"sys", "POSIX"}, {"vfs", "FS"}, {"blk", "BLOCK"}}) {
      EXPECT_EQ(amp["total"][std::string(row) + "_read_bytes"], of(bytes, layer, "read")) << layer;
      EXPECT_EQ(amp["total"][std::string(row) + "_write_bytes"], of(bytes, layer, "write")) << layer;
    }
    EXPECT_EQ(amp["total"]["R_AMP"], summary["amplification"]["read"]);
    EXPECT_EQ(amp["total"]["W_AMP"], summary["amplification"]["write"]);
    size_t files = 0;
    for (const auto& f : amp["files"]) {
      const std::string name = f["file"];
      ASSERT_TRUE(summary["files"].contains(name)) << name;
      const auto& sf = summary["files"][name];
      for (const char* l : {"POSIX", "FS", "BLOCK"})
        for (const char* k : {"read_bytes", "write_bytes", "reads", "writes"})
          EXPECT_EQ(f.contains(l) ? f[l][k].get<uint64_t>() : 0,
                    sf.contains(l) ? sf[l][k].get<uint64_t>() : 0)
              << name << " " << l << " " << k;
      ++files;
    }
    EXPECT_EQ(files, summary["files"].size());
    size_t processes = 0;
    for (const auto& p : amp["processes"]) {
      const auto& sp = summary["processes"][p["pid"].dump()]["amplification"]["bytes"];
      for (auto [row, layer] : {std::pair{"sys", "POSIX"}, {"vfs", "FS"}, {"blk", "BLOCK"}}) {
        EXPECT_EQ(p[std::string(row) + "_read_bytes"], of(sp, layer, "read")) << p["pid"] << " " << layer;
        EXPECT_EQ(p[std::string(row) + "_write_bytes"], of(sp, layer, "write")) << p["pid"] << " " << layer;
      }
      ++processes;
    }
    EXPECT_GE(processes, 1u);
  }

  void expect_merge_of_partial_equal(const nlohmann::json& report)
  {
    std::string cmd = std::string(DATACRUMBS_BIN) + " analyze --merge " +
                      shell_quote(dir / "partial.json.gz") + " --json " + shell_quote(dir / "merged.json") +
                      " > /dev/null";
    ASSERT_EQ(run_shell(cmd), 0) << cmd;
    EXPECT_EQ(nlohmann::json::parse(read_file(dir / "merged.json")), report);
  }
};

TEST_F(analyze_runtime, DdTraceLayersEqualTheRunSummary)
{
  std::string out = dir / "f";
  traced_run run =
      trace_command(dir, "dd if=/dev/zero of=" + out + " bs=4k count=300 conv=fsync status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json report = analyze(dir / "trace.pfw.gz");
  expect_layers_equal(run.summary, report);
  EXPECT_EQ(report["run"]["events"], run.summary["events"]["written"]);
  EXPECT_EQ(report["run"]["counters"], run.summary["events"]["counters"]);
  EXPECT_EQ(report["run"]["lost"]["events_lost"], run.summary["events"]["lost"]);
  EXPECT_EQ(report["inputs"]["problems_total"], 0);
  // dd's own writes: 300 of 4 KiB, in the POSIX layer and its time series.
  auto w = std::find_if(report["layers"].begin(), report["layers"].end(),
                        [](const auto& l) { return l["layer"] == "POSIX" && l["op"] == "write"; });
  ASSERT_NE(w, report["layers"].end());
  EXPECT_GE((*w)["bytes"].get<uint64_t>(), 300u * 4096);
  uint64_t series = 0;
  for (uint64_t b : report["timeseries"]["layers"]["POSIX"]["bytes"]) series += b;
  uint64_t posix = 0;
  for (const auto& l : report["layers"])
    if (l["layer"] == "POSIX")
      posix += l["bytes"].get<uint64_t>();
  EXPECT_EQ(series, posix);
  // Amplification: dd wrote 300 × 4 KiB to f, with fsync: they reached the device.
  expect_amplification_equal(run.summary, report);
  EXPECT_GE(report["amplification"]["total"]["sys_write_bytes"].get<uint64_t>(), 300u * 4096);
  EXPECT_GE(report["amplification"]["total"]["blk_write_bytes"].get<uint64_t>(), 300u * 4096);
  expect_merge_of_partial_equal(report);
}

TEST_F(analyze_runtime, ProfileModeCountersEqualTheRunSummary)
{
  std::string out = dir / "f";
  traced_run run =
      trace_command(dir, "dd if=/dev/zero of=" + out + " bs=64k count=200 conv=fsync status=none",
                    "--mode profile --interval-ms 100");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json report = analyze(dir / "trace.pfw.gz");
  expect_layers_equal(run.summary, report);
  EXPECT_EQ(report["run"]["counters"], run.summary["events"]["counters"]);
  expect_amplification_equal(run.summary, report);
  expect_merge_of_partial_equal(report);
}

}  // namespace
}  // namespace dc::test
