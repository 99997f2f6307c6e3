// The metadata lines clusters need: the host's clock at start, and MPI rank and size on the
// process_name line of a rank (none on a process that is not one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "sink/pfw_writer.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

TEST(trace_metadata, ClockLineAndRankLabels)
{
  std::string path =
      (std::filesystem::temp_directory_path() / ("m." + std::to_string(getpid()) + ".pfw.gz")).string();
  name_table names;
  process_table processes;
  processes[10] = {10, 1, "app", "app", -1, {{10, {"app"}}}, 3, 4};
  processes[11] = {11, 1, "sh", "sh", -1, {{11, {"sh"}}}};
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    pfw_writer w(std::move(*out), "node7", 10);
    w.write_clock({1'700'000'000'123'456'789, true, -2500, 40, 1500});
    for (uint32_t pid : {10u, 11u}) {
      trace_event ev;
      ev.name = "write";
      ev.category = "POSIX";
      ev.pid = ev.tid = pid;
      w.write_event(ev, {names, processes});
    }
    ASSERT_TRUE(w.finish({}));
  }
  auto t = test::parse_trace_text(test::read_gzip_members(path).text);
  std::filesystem::remove(path);
  int clocks = 0, named = 0;
  for (const auto& j : t.lines) {
    if (j["name"] == "clock") {
      ++clocks;
      EXPECT_EQ(j["ph"], "M");
      EXPECT_EQ(j["args"]["host"], "node7");
      EXPECT_EQ(j["args"]["realtime_minus_monotonic_ns"], 1'700'000'000'123'456'789);
      EXPECT_EQ(j["args"]["ntp_synchronized"], 1);
      EXPECT_EQ(j["args"]["ntp_offset_ns"], -2500);
      EXPECT_EQ(j["args"]["ntp_est_error_us"], 40);
      EXPECT_EQ(j["args"]["ntp_max_error_us"], 1500);
      EXPECT_EQ(j["args"]["ntp_source"], "kernel");
    }
    if (j["name"] == "process_name") {
      ++named;
      if (j["pid"] == 10) {
        EXPECT_EQ(j["args"]["rank"], 3) << j;
        EXPECT_EQ(j["args"]["size"], 4) << j;
      } else {
        EXPECT_FALSE(j["args"].contains("rank")) << j;
      }
    }
  }
  EXPECT_EQ(clocks, 1);
  EXPECT_EQ(named, 2);
  EXPECT_EQ(t.lines.front()["name"], "HH");
}

TEST(trace_metadata, TheHostClockRecordsTheOffsetItWasGiven)
{
  host_clock c = read_host_clock({12345});
  EXPECT_EQ(c.realtime_minus_monotonic_ns, 12345);
  EXPECT_GE(c.ntp_max_error_us, 0);
  // chronyd's report is read only where its socket is.
  EXPECT_EQ(c.ntp_source, access("/run/chrony/chronyd.sock", F_OK) == 0 ? "chrony" : "kernel");
}

// chronyc -c tracking as chrony 4.3 prints it: System time is signed (positive: the local clock
// is slow, so NTP time minus local is positive).
TEST(trace_metadata, ChronycTrackingGivesOffsetAndErrorBound)
{
  auto t = parse_chronyc_tracking(
      "A9FEA97B,169.254.169.123,4,1700000000.123456789,0.000012345,-0.000001234,0.000045678,"
      "-12.345,0.001,0.010,0.000400000,0.000123456,64.2,Normal\n");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->system_time_s, 0.000012345);
  EXPECT_DOUBLE_EQ(t->root_delay_s, 0.0004);
  EXPECT_DOUBLE_EQ(t->root_dispersion_s, 0.000123456);
  EXPECT_TRUE(t->synchronized);
  auto unsynced = parse_chronyc_tracking(
      "00000000,,0,0.000000000,-0.000000002,0.000000000,0.000000000,0.000,0.000,0.000,"
      "1.000000000,1.000000000,0.0,Not synchronised");
  ASSERT_TRUE(unsynced);
  EXPECT_FALSE(unsynced->synchronized);
  EXPECT_FALSE(parse_chronyc_tracking("506 Cannot talk to daemon"));
  EXPECT_FALSE(parse_chronyc_tracking("A,b,4,1,x,0,0,0,0,0,0,0,0,Normal"));
}

}  // namespace
}  // namespace dc
