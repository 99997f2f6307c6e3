// Traces of one workload from two "hosts" on one timeline. Each run is a real `datacrumbs run`
// in its own UTS namespace (`unshare --uts`, host names node-a and node-b), so the traces carry
// two host names exactly as two nodes' traces do. This machine has one kernel clock, so the
// clock records of both say what this kernel says (here: unsynchronized); to check the
// correction, the test then rewrites each trace's clock record as two NTP-synchronized nodes
// would have written it (node-a 300 µs fast: within the threshold; node-b 4 ms slow) and checks
// that analyze moved exactly node-b's events by exactly 4000 µs, in one run and through
// --partial/--merge. The unedited traces are checked too: whatever this kernel recorded
// decides their shift. A second test does the same with nothing edited: a real chronyd reports
// a different offset for each "host", and the traces carry exactly what it reported.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <regex>
#include <thread>

#include "core/host_clock.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

struct span_range {
  int64_t start = INT64_MAX, end = INT64_MIN;
  uint64_t pid = 0;
};

// What analyze's run section counts per process: spans (not DFTracer's bookkeeping) and instants.
span_range event_range(const parsed_trace& t)
{
  span_range r;
  for (const auto& j : t.lines) {
    bool span = j["ph"] == "X" && j["cat"] != "dftracer";
    if (!span && j["ph"] != "i" && j["ph"] != "I")
      continue;
    EXPECT_TRUE(r.pid == 0 || r.pid == j["pid"]) << "one traced process per run: " << j;
    r.pid = j["pid"];
    int64_t ts = j["ts"], dur = j.value("dur", 0);
    r.start = std::min(r.start, ts);
    r.end = std::max(r.end, ts + dur);
  }
  return r;
}

nlohmann::json clock_record(const parsed_trace& t)
{
  for (const auto& j : t.lines)
    if (j["name"] == "clock" && j["ph"] == "M")
      return j;
  return nullptr;
}

// The shift analyze must apply to a trace with this clock record at the default threshold.
int64_t expected_shift_us(const nlohmann::json& clock)
{
  const auto& a = clock["args"];
  int64_t shift = std::llround(a["ntp_offset_ns"].get<int64_t>() / 1000.0);
  return a["ntp_synchronized"] == 1 && std::llabs(shift) > 1000 ? shift : 0;
}

void write_gzip(const std::string& path, const std::string& text)
{
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

struct analyze_hosts : runtime_test {
  std::string trace(const std::string& host) { return dir / (host + ".pfw.gz"); }

  void run_on(const std::string& host)
  {
    std::string cmd =
        "unshare --uts sh -c " +
        shell_quote("hostname " + host + " && " + DATACRUMBS_BIN + " run -o " + trace(host) +
                    " -- dd if=/dev/zero of=" + dir / ("out-" + host) + " bs=4k count=20 status=none") +
        " 2>" + dir / "run.err";
    ASSERT_EQ(run_shell(cmd), 0) << read_file(dir / "run.err");
  }

  // Rewrites the trace's clock record as a synchronized host with this NTP offset writes it.
  void set_clock(const std::string& path, int64_t offset_ns)
  {
    std::string text = read_gzip_members(path).text;
    std::regex sync("\"ntp_synchronized\":[01],\"ntp_offset_ns\":-?[0-9]+");
    std::string edited = std::regex_replace(
        text, sync, "\"ntp_synchronized\":1,\"ntp_offset_ns\":" + std::to_string(offset_ns),
        std::regex_constants::format_first_only);
    ASSERT_NE(edited, text) << "no clock record in " << path;
    write_gzip(path, edited);
  }

  nlohmann::json analyze(const std::vector<std::string>& traces, const std::string& name)
  {
    std::string paths;
    for (const auto& t : traces) paths.append(" ").append(shell_quote(t));
    std::string cmd = std::string(DATACRUMBS_BIN) + " analyze" + paths + " --no-progress --json " +
                      dir / (name + ".json") + " >" + dir / (name + ".txt");
    EXPECT_EQ(run_shell(cmd), 0) << cmd;
    return nlohmann::json::parse(read_file(dir / (name + ".json")));
  }

  static nlohmann::json process_of(const nlohmann::json& report, const std::string& host)
  {
    for (const auto& p : report["run"]["processes"])
      if (p["host"] == host && p["events"] > 0)
        return p;
    return nullptr;
  }

  // Each host's process spans exactly its trace's events, moved by the expected shift.
  void expect_placed(const nlohmann::json& report, const std::map<std::string, int64_t>& shift_us)
  {
    int64_t start = INT64_MAX, end = INT64_MIN;
    for (const auto& [host, shift] : shift_us) {
      span_range r = event_range(parse_trace_text(read_gzip_members(trace(host)).text));
      auto p = process_of(report, host);
      ASSERT_FALSE(p.is_null()) << host << ": " << report["run"]["processes"];
      EXPECT_EQ(p["pid"], r.pid) << host;
      EXPECT_EQ(p["start_us"], r.start + shift) << host;
      EXPECT_EQ(p["end_us"], r.end + shift) << host;
      start = std::min(start, r.start + shift);
      end = std::max(end, r.end + shift);
    }
    EXPECT_EQ(report["run"]["start_us"], start);
    EXPECT_EQ(report["run"]["end_us"], end);
  }
};

TEST_F(analyze_hosts, TwoHostsTracesLandOnOneTimelineWithTheirRecordedOffsetsApplied)
{
  run_on("node-a");
  run_on("node-b");
  std::map<std::string, int64_t> recorded;
  for (const std::string host : {"node-a", "node-b"}) {
    auto t = parse_trace_text(read_gzip_members(trace(host)).text);
    auto clock = clock_record(t);
    ASSERT_FALSE(clock.is_null()) << host;
    EXPECT_EQ(clock["args"]["host"], host) << "the host label is the kernel's host name";
    recorded[host] = expected_shift_us(clock);
  }
  // As recorded by this kernel (both hosts share it).
  auto as_recorded = analyze({trace("node-a"), trace("node-b")}, "recorded");
  EXPECT_EQ(as_recorded["run"]["hosts"], nlohmann::json::array({"node-a", "node-b"}));
  expect_placed(as_recorded, recorded);

  // As two synchronized nodes: node-a 300 µs fast (-300000 ns), node-b 4 ms slow.
  set_clock(trace("node-a"), -300'000);
  set_clock(trace("node-b"), 4'000'000);
  auto report = analyze({trace("node-a"), trace("node-b")}, "nodes");
  expect_placed(report, {{"node-a", 0}, {"node-b", 4000}});
  const auto& clock = report["clock"];
  EXPECT_EQ(clock["corrected"], true);
  EXPECT_EQ(clock["skew_us"], 4300.0);
  EXPECT_EQ(clock["residual_skew_us"], 300.0);
  for (const auto& h : clock["hosts"]) EXPECT_EQ(h["shift_us"]["max"], h["host"] == "node-b" ? 4000 : 0) << h;
  EXPECT_NE(read_file(dir / "nodes.txt")
                .find("clock: node-b: clock off NTP time by more than 1000 us: "
                      "its timestamps moved +4000 us"),
            std::string::npos)
      << read_file(dir / "nodes.txt");

  // One partial per host, merged: the same timeline.
  for (const std::string host : {"node-a", "node-b"})
    ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze " + trace(host) +
                        " --no-progress --partial " + dir / (host + ".partial.json") + " >/dev/null"),
              0);
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze --merge " + dir / "node-a.partial.json " +
                      dir / "node-b.partial.json --json " + dir / "merged.json >/dev/null"),
            0);
  auto merged = nlohmann::json::parse(read_file(dir / "merged.json"));
  EXPECT_EQ(merged["run"], report["run"]);
  EXPECT_EQ(merged["clock"], report["clock"]);
  EXPECT_EQ(merged["timeseries"], report["timeseries"]);

  // --clock-skew-us 0: node-a's 300 µs are corrected too.
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze " + trace("node-a") + " " + trace("node-b") +
                      " --no-progress --clock-skew-us 0 --json " + dir / "all.json >/dev/null"),
            0);
  expect_placed(nlohmann::json::parse(read_file(dir / "all.json")), {{"node-a", -300}, {"node-b", 4000}});
}

// A real chronyd of the test's own, answering chronyc on the standard socket that datacrumbs
// reads. It does not control the clock (-x), so the offset set with `chronyc settime` (manual
// mode) stays as set: chronyd reports a clock that it cannot slew as off by that much.
// chronyd and chronyc come unpacked from Debian's package (scripts/install-deps.sh), on PATH
// for the test and the datacrumbs it runs.
struct test_chronyd {
  static constexpr const char* root = "/opt/datacrumbs/chrony";
  std::string conf, pidfile, path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
  bool started = false;

  explicit test_chronyd(const scratch_dir& dir) : conf(dir / "chrony.conf"), pidfile(dir / "chronyd.pid")
  {
    std::ofstream(conf) << "local stratum 10\nmanual\ncmdport 0\npidfile " << pidfile << "\n";
    setenv("PATH", (std::string(root) + "/usr/bin:" + path).c_str(), 1);
  }
  ~test_chronyd()
  {
    setenv("PATH", path.c_str(), 1);
    std::ifstream in(pidfile);
    pid_t pid = 0;
    if (started && in >> pid && pid > 0)
      kill(pid, SIGTERM);
    for (int i = 0; i < 100 && access(socket, F_OK) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  static constexpr const char* socket = "/run/chrony/chronyd.sock";

  // Empty, or why it could not start.
  std::string start()
  {
    if (access(socket, F_OK) == 0)
      return "a chronyd of this machine already answers on " + std::string(socket);
    mkdir("/run/chrony", 0750);
    chmod("/run/chrony", 0750);  // chronyd refuses a socket directory others can read
    if (run_shell(std::string(root) + "/usr/sbin/chronyd -x -u root -f " + shell_quote(conf)) != 0)
      return "chronyd did not start (scripts/install-deps.sh unpacks it into " + std::string(root) + ")";
    started = true;
    for (int i = 0; i < 250; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(20)))
      if (tracking())
        return "";
    return "chronyd does not answer chronyc";
  }

  // Moves chronyd's idea of NTP time `seconds` away from the local clock. settime takes whole
  // seconds, and `date` truncates the fraction of the current one: started just after a second
  // begins, the offset chronyd then reports is within a few tens of ms of `seconds` (started at a
  // random moment it could be a whole second off, which CI once saw: 1.002 s).
  void set_offset(int seconds)
  {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    auto into_second = now - std::chrono::floor<std::chrono::seconds>(now);
    std::this_thread::sleep_for(std::chrono::seconds(1) - into_second + std::chrono::milliseconds(5));
    ASSERT_EQ(run_shell("chronyc manual on >/dev/null && chronyc manual reset >/dev/null && chronyc settime "
                        "\"$(date -u -d '" +
                        std::to_string(seconds) + " seconds' '+%Y-%m-%d %H:%M:%S')\" >/dev/null"),
              0);
  }

  static std::optional<chrony_tracking> tracking()
  {
    FILE* p = popen("chronyc -c -n tracking 2>/dev/null", "r");
    if (!p)
      return std::nullopt;
    char line[512] = {};
    bool read = fgets(line, sizeof(line), p) != nullptr;
    pclose(p);
    return read ? parse_chronyc_tracking(line) : std::nullopt;
  }
};

TEST_F(analyze_hosts, TwoHostsOffsetsAsARealChronydReportedThem)
{
  test_chronyd chronyd(dir);
  if (std::string why = chronyd.start(); !why.empty()) {
    if (why.starts_with("a chronyd of this machine"))
      GTEST_SKIP() << why;
    FAIL() << why;
  }
  std::map<std::string, int64_t> offset_ns;
  for (auto [host, seconds] : {std::pair<std::string, int>{"node-a", 3}, {"node-b", -2}}) {
    chronyd.set_offset(seconds);
    auto before = test_chronyd::tracking();
    ASSERT_TRUE(before);
    run_on(host);
    auto after = test_chronyd::tracking();
    ASSERT_TRUE(after);
    ASSERT_EQ(before->system_time_s, after->system_time_s) << "chronyd's offset moved during the run";
    ASSERT_GT(std::abs(before->system_time_s - seconds), 0.0);
    ASSERT_LT(std::abs(before->system_time_s - seconds), 0.5);
    auto clock = clock_record(parse_trace_text(read_gzip_members(trace(host)).text));
    ASSERT_FALSE(clock.is_null()) << host;
    const auto& a = clock["args"];
    EXPECT_EQ(a["ntp_source"], "chrony") << clock;
    EXPECT_EQ(a["ntp_synchronized"], 1) << clock;  // chronyd's leap status: Normal
    EXPECT_EQ(a["ntp_offset_ns"], std::llround(before->system_time_s * 1e9)) << clock;
    EXPECT_EQ(a["ntp_est_error_us"],
              std::llround((before->root_dispersion_s + before->root_delay_s / 2) * 1e6));
    offset_ns[host] = a["ntp_offset_ns"];
  }
  auto report = analyze({trace("node-a"), trace("node-b")}, "chrony");
  expect_placed(report, {{"node-a", std::llround(offset_ns["node-a"] / 1000.0)},
                         {"node-b", std::llround(offset_ns["node-b"] / 1000.0)}});
  const auto& clock = report["clock"];
  EXPECT_EQ(clock["corrected"], true);
  EXPECT_NEAR(clock["skew_us"].get<double>(), (offset_ns["node-a"] - offset_ns["node-b"]) / 1000.0, 1.0);
  EXPECT_LE(clock["residual_skew_us"].get<double>(), 1.0);
}

}  // namespace
}  // namespace dc::test
