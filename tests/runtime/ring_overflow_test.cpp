// The event ring overflows on purpose: the smallest ring (--ring-mb 1) and a producer of a known
// number of system calls, faster than one collector drains (threads of one-byte preads of
// /dev/zero, ring_flood.c). Every event the program made either reached the trace or is counted
// lost, exactly: in the summary, in the trace's end record and in what analyze reports; records
// that are no event (a thread's start, a file's name) lost with it are counted apart, not as
// events. The trace of such a run stays whole. Figures: docs/reliability.md.
#include <thread>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr const char* syscall_only = "--layers syscall ";

// The trace's events by name.
std::map<std::string, uint64_t> events_by_name(const parsed_trace& t)
{
  std::map<std::string, uint64_t> n;
  for (const auto& e : complete_events(t)) ++n[e["name"].get<std::string>()];
  return n;
}

const nlohmann::json* end_record(const parsed_trace& t)
{
  for (const auto& line : t.lines)
    if (line.value("ph", "") == "M" && line.value("name", "") == "end")
      return &line;
  return nullptr;
}

TEST_F(runtime_test, RingOverflowLostCountEqualsTheMissingEvents)
{
  // At least 4 threads (one per CPU where there are more, so a big machine outruns its one
  // collector too) of 150,000 preads each, and 2,000 threads started one by one meanwhile.
  unsigned threads = std::max(4u, std::min(16u, std::thread::hardware_concurrency()));
  uint64_t per_thread = 150000, spawned = 2000, calibration = 1000;
  auto workload = [&](uint64_t n) {
    return std::string(RING_FLOOD_BIN) + " " + std::to_string(threads) + " " + std::to_string(n) + " " +
           std::to_string(spawned);
  };
  // Calibration: the same program with 1,000 preads a thread, in a ring too large to lose any,
  // gives every other call it makes (the loader's, the threads' stacks, its open of /dev/zero).
  traced_run small = trace_command(dir, workload(calibration), syscall_only);
  ASSERT_EQ(small.exit_code, 0) << small.err;
  ASSERT_EQ(small.summary["events"]["lost"], 0) << small.summary["events"];
  std::map<std::string, uint64_t> names = events_by_name(small.trace);
  uint64_t small_total = 0;
  for (const auto& [name, n] : names) small_total += n;
  uint64_t made = small_total + threads * (per_thread - calibration);

  traced_run run = trace_command(dir, workload(per_thread), std::string(syscall_only) + "--ring-mb 1 ");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(run.trace.opened && run.trace.closed) << "the trace is not whole";

  const nlohmann::json& ev = run.summary["events"];
  uint64_t lost = ev["lost"].get<uint64_t>();
  ASSERT_GT(lost, 0u) << "the 1 MiB ring did not overflow: the test proved nothing";
  EXPECT_EQ(ev["lost_ring_full"], lost) << ev;  // every lost event was a full ring
  for (const char* kind :
       {"lost_no_state", "lost_too_deep", "lost_profile_full", "lost_not_held", "lost_skipped"})
    EXPECT_EQ(ev[kind], 0) << kind;
  EXPECT_EQ(ev["unwritten"], 0);

  // Arrived + lost is exactly what the program made; nothing arrived that it did not make.
  std::map<std::string, uint64_t> arrived = events_by_name(run.trace);
  uint64_t arrived_total = 0;
  for (const auto& [name, n] : arrived) {
    arrived_total += n;
    EXPECT_TRUE(names.contains(name)) << name;
  }
  EXPECT_EQ(ev["written"].get<uint64_t>(), arrived_total);
  EXPECT_EQ(arrived_total + lost, made)
      << "arrived " << arrived_total << " lost " << lost << " made " << made;

  // The trace's end record says the same, kind by kind.
  const nlohmann::json* end = end_record(run.trace);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ((*end)["args"]["events_lost"], lost);
  EXPECT_EQ((*end)["args"]["lost_ring_full"], lost);
  EXPECT_EQ((*end)["args"]["events_written"], arrived_total);
  EXPECT_EQ((*end)["args"]["lost_record_ring_full"], ev["lost_record_ring_full"]);

  // analyze reads the trace and reports the loss, with the events that arrived.
  std::string report_path = dir / "report.json";
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") +
                      " --json " + shell_quote(report_path) + " --no-progress > /dev/null"),
            0);
  nlohmann::json report = nlohmann::json::parse(read_file(report_path));
  EXPECT_EQ(report["run"]["events"], arrived_total);
  EXPECT_EQ(report["run"]["lost"]["events_lost"], lost);
  EXPECT_EQ(report["inputs"]["problems_total"], 0);
  bool flagged = false;
  for (const auto& f : report["diagnostics"])
    if (f["rule"] == "lost_events") {
      flagged = true;
      EXPECT_EQ(f["evidence"]["lost"], lost);
    }
  EXPECT_TRUE(flagged) << report["diagnostics"];

  std::printf(
      "figure: ring overflow: 1 MiB ring, %u threads x %ju preads + %ju short threads: %ju events made, "
      "%ju arrived, %ju counted lost (exactly the missing), %ju non-event records lost apart\n",
      threads, static_cast<uintmax_t>(per_thread), static_cast<uintmax_t>(spawned),
      static_cast<uintmax_t>(made), static_cast<uintmax_t>(arrived_total), static_cast<uintmax_t>(lost),
      static_cast<uintmax_t>(ev["lost_record_ring_full"].get<uint64_t>()));
}

}  // namespace
}  // namespace dc::test
