// The clock section: traces of two hosts put on one timeline from their clock records. Each
// trace here is what DataCrumbs writes (HH line, clock record, spans) with chosen clock values;
// the shifted timestamps are checked exactly, and partials merge to the same report.
#include <gtest/gtest.h>

#include "unit/analyze_test_util.h"

namespace dc::test {
namespace {

struct host_trace {
  std::string host;
  uint64_t hhash;
  bool synchronized;
  int64_t offset_ns;
};

std::string clock_line(const host_trace& h, int64_t rt_mono_ns = 1'700'000'000'000'000'000)
{
  return "{\"id\":1,\"name\":\"clock\",\"cat\":\"dftracer\",\"pid\":5,\"tid\":5,\"ph\":\"M\",\"args\":{"
         "\"hhash\":" +
         std::to_string(h.hhash) + ",\"host\":\"" + h.host +
         "\",\"realtime_minus_monotonic_ns\":" + std::to_string(rt_mono_ns) +
         ",\"ntp_synchronized\":" + (h.synchronized ? "1" : "0") +
         ",\"ntp_offset_ns\":" + std::to_string(h.offset_ns) +
         ",\"ntp_est_error_us\":40,\"ntp_max_error_us\":900,\"ntp_source\":\"chrony\"}}\n";
}

// Two write spans at ts and ts + 1000 µs (dur 10, 4096 bytes) by pid 5 of the host.
std::string trace_text(const host_trace& h, int64_t ts, int64_t rt_mono_ns = 1'700'000'000'000'000'000)
{
  std::string hh =
      "{\"id\":0,\"name\":\"HH\",\"cat\":\"dftracer\",\"pid\":5,\"tid\":5,\"ph\":\"M\",\"args\":{"
      "\"hhash\":" +
      std::to_string(h.hhash) + ",\"name\":\"" + h.host + "\",\"value\":" + std::to_string(h.hhash) + "}}\n";
  std::string text = "[\n" + hh + clock_line(h, rt_mono_ns);
  for (int64_t t : {ts, ts + 1000})
    text += "{\"id\":2,\"name\":\"write\",\"cat\":\"POSIX\",\"pid\":5,\"tid\":5,\"ts\":" + std::to_string(t) +
            ",\"dur\":10,\"ph\":\"X\",\"args\":{\"hhash\":" + std::to_string(h.hhash) + ",\"ret\":4096}}\n";
  return text;
}

const host_trace node_a{"node-a", 11, true, -400'000}, node_b{"node-b", 22, true, 2'500'000};
constexpr int64_t t0 = 1'700'000'000'000'000;

nlohmann::json process(const nlohmann::json& report, const std::string& host)
{
  for (const auto& p : report["run"]["processes"])
    if (p["host"] == host)
      return p;
  return nullptr;
}

nlohmann::json clock_host(const nlohmann::json& report, const std::string& host)
{
  for (const auto& h : report["clock"]["hosts"])
    if (h["host"] == host)
      return h;
  return nullptr;
}

TEST(AnalyzeClock, AHostOffBeyondTheThresholdIsMovedOntoNtpTimeExactly)
{
  temp_dir d;
  write_members(d.file("a.pfw.gz"), {trace_text(node_a, t0)});
  write_members(d.file("b.pfw.gz"), {trace_text(node_b, t0 + 100)});
  auto r = read_all({d.file("a.pfw.gz"), d.file("b.pfw.gz")});
  auto j = r.all.report(0);
  // node-a: 400 µs ahead of NTP time, within 1000 µs: not moved.
  EXPECT_EQ(process(j, "node-a")["start_us"], t0);
  EXPECT_EQ(process(j, "node-a")["end_us"], t0 + 1010);
  // node-b: 2.5 ms slow: every span 2500 µs later.
  EXPECT_EQ(process(j, "node-b")["start_us"], t0 + 100 + 2500);
  EXPECT_EQ(process(j, "node-b")["end_us"], t0 + 100 + 2500 + 1010);
  EXPECT_EQ(j["run"]["end_us"], t0 + 3610);
  const auto& c = j["clock"];
  EXPECT_EQ(c["threshold_us"], 1000);
  EXPECT_EQ(c["corrected"], true);
  EXPECT_EQ(clock_host(j, "node-b")["shift_us"], (nlohmann::json{{"min", 2500}, {"max", 2500}}));
  EXPECT_EQ(clock_host(j, "node-b")["records_shifted"], 2);
  EXPECT_EQ(clock_host(j, "node-a")["shift_us"], (nlohmann::json{{"min", 0}, {"max", 0}}));
  EXPECT_EQ(clock_host(j, "node-a")["offset_ns"], (nlohmann::json{{"min", -400'000}, {"max", -400'000}}));
  EXPECT_EQ(clock_host(j, "node-a")["est_error_us"], 40);
  EXPECT_EQ(clock_host(j, "node-a")["sources"], nlohmann::json::array({"chrony"}));
  EXPECT_EQ(c["skew_us"], 2900.0);
  EXPECT_EQ(c["residual_skew_us"], 400.0);
  std::string text = analyze::text_report(j);
  EXPECT_NE(
      text.find("clock: node-b: clock off NTP time by more than 1000 us: its timestamps moved +2500 us\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("clock: skew between synchronized hosts: 2900.000 us recorded, 400.000 us after correction"),
      std::string::npos)
      << text;
}

TEST(AnalyzeClock, ThresholdZeroMovesEveryOffsetRoundedToTheMicrosecond)
{
  temp_dir d;
  host_trace odd{"node-c", 33, true, -1'234'567};
  write_members(d.file("a.pfw.gz"), {trace_text(node_a, t0)});
  write_members(d.file("c.pfw.gz"), {trace_text(odd, t0)});
  read_result r;
  r.all.clock.threshold_us = 0;
  std::vector<std::string> files = analyze::expand_inputs({d.path}, r.all.inputs);
  analyze::record_sink sink{[&](const analyze::record& rec) { r.all.add(rec); }, [&] { r.all.end_file(); }};
  analyze::read_traces(files, {1, false}, r.all.inputs, sink);
  auto j = r.all.report(0);
  EXPECT_EQ(process(j, "node-a")["start_us"], t0 - 400);
  EXPECT_EQ(process(j, "node-c")["start_us"], t0 - 1235);
  EXPECT_EQ(j["clock"]["residual_skew_us"], 0.433);  // -1234.567 + 1235 against 0
}

TEST(AnalyzeClock, UnsynchronizedClocksAreNotMovedAndTheReportSaysTheirPlacementIsUnknown)
{
  temp_dir d;
  host_trace loose{"node-u", 44, false, 9'000'000};
  write_members(d.file("a.pfw.gz"), {trace_text(node_a, t0)});
  write_members(d.file("u.pfw.gz"), {trace_text(loose, t0)});
  auto j = read_all({d.path}).all.report(0);
  EXPECT_EQ(process(j, "node-u")["start_us"], t0);
  EXPECT_EQ(clock_host(j, "node-u")["synchronized"], false);
  EXPECT_EQ(clock_host(j, "node-u")["offset_ns"], nullptr);
  EXPECT_EQ(j["clock"]["unsynchronized"], nlohmann::json::array({"node-u"}));
  EXPECT_EQ(j["clock"]["corrected"], false);
  EXPECT_NE(
      analyze::text_report(j).find("clock: 1 host(s) with an unsynchronized clock (kernel maximum error "
                                   "up to 0.001 s): their placement against the other hosts is unknown"),
      std::string::npos);
}

TEST(AnalyzeClock, AStepBetweenTracesOfOneHostIsReported)
{
  temp_dir d;
  write_members(d.file("b1.pfw.gz"), {trace_text(node_b, t0)});
  write_members(d.file("b2.pfw.gz"), {trace_text(node_b, t0 + 5000, 1'700'000'000'003'000'000)});
  auto j = read_all({d.path}).all.report(0);
  EXPECT_EQ(clock_host(j, "node-b")["traces"], 2);
  EXPECT_EQ(clock_host(j, "node-b")["realtime_step_us"], 3000);
  EXPECT_NE(
      analyze::text_report(j).find("clock: node-b: its traces' realtime-monotonic offsets differ by 3000 us"),
      std::string::npos);
}

// Clock values no clock gives (found by the trace_text fuzz target: the realtime-monotonic
// difference of INT64_MIN and INT64_MAX overflowed) are reported exactly, and an offset beyond
// ~11.6 days leaves its host unsynchronized instead of moving its records by it.
TEST(AnalyzeClock, ExtremeClockValuesAreReportedWithoutOverflow)
{
  temp_dir d;
  host_trace wild{"node-w", 55, true, INT64_MAX};
  write_members(d.file("w1.pfw.gz"), {trace_text(wild, t0, INT64_MIN)});
  write_members(d.file("w2.pfw.gz"), {trace_text(wild, t0, INT64_MAX)});
  write_members(d.file("b.pfw.gz"), {trace_text(node_b, t0)});
  auto j = read_all({d.path}).all.report(0);
  EXPECT_EQ(clock_host(j, "node-w")["realtime_step_us"], UINT64_MAX / 1000);
  EXPECT_EQ(clock_host(j, "node-w")["synchronized"], false);
  EXPECT_EQ(clock_host(j, "node-w")["records_shifted"], 0);
  EXPECT_EQ(process(j, "node-w")["start_us"], t0);
}

TEST(AnalyzeClock, PartialsOfEachHostMergeToTheReportOfBoth)
{
  temp_dir d;
  write_members(d.file("a.pfw.gz"), {trace_text(node_a, t0)});
  write_members(d.file("b.pfw.gz"), {trace_text(node_b, t0 + 100)});
  auto whole = read_all({d.file("a.pfw.gz"), d.file("b.pfw.gz")}).all.report(0);
  auto a = read_all({d.file("a.pfw.gz")}).all.partial();
  auto b = read_all({d.file("b.pfw.gz")}).all.partial();
  auto merged = analyze::analysis::from_partial(a);
  ASSERT_TRUE(merged.has_value());
  auto other = analyze::analysis::from_partial(b);
  ASSERT_TRUE(other.has_value());
  merged->merge(*other);
  auto j = merged->report(0);
  EXPECT_EQ(j["clock"], whole["clock"]);
  EXPECT_EQ(j["run"], whole["run"]);
  EXPECT_EQ(j["timeseries"], whole["timeseries"]);
  // A partial made with another threshold: the merged report says the threshold is mixed.
  auto c = analyze::analysis::from_partial(b);
  c->clock.threshold_us = 5;
  merged->merge(*c);
  EXPECT_EQ(merged->report(0)["clock"]["threshold_us"], nullptr);
}

}  // namespace
}  // namespace dc::test
