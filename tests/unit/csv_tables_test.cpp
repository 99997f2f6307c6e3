// The report's tables as CSV, rendered from a report JSON fixture (data/analyze_report.json):
// every table's rows and the values in them, read back with an independent CSV reader.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "analyze/csv_tables.h"
#include "unit/csv_reader.h"

namespace dc::analyze {
namespace {

using records = std::vector<std::map<std::string, std::string>>;

struct csv_tables_test : ::testing::Test {
  std::string dir;
  nlohmann::json report;
  void SetUp() override
  {
    char tmpl[] = "/tmp/dc_csv_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    std::ifstream in(std::string(DATACRUMBS_TEST_DATA) + "/analyze_report.json");
    report = nlohmann::json::parse(in);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  records table(const std::string& name) { return test::csv_records(test::read_csv(dir + "/" + name)); }
  std::vector<std::string> header(const std::string& name) { return test::read_csv(dir + "/" + name).at(0); }
};

TEST_F(csv_tables_test, files_have_one_column_per_darshan_counter)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  std::vector<std::string> h = header("files.csv");
  ASSERT_GE(h.size(), 2u);
  EXPECT_EQ(h[0], "file");
  EXPECT_EQ(h[1], "module");
  records rows = table("files.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["file"], "/data/a,b\"c.dat");
  EXPECT_EQ(rows[0]["module"], "POSIX");
  EXPECT_EQ(rows[0]["POSIX_READS"], "10");
  EXPECT_EQ(rows[0]["POSIX_BYTES_READ"], "40960");
  EXPECT_EQ(rows[0]["POSIX_SIZE_READ_1K_10K"], "10");
  EXPECT_EQ(std::stod(rows[0]["POSIX_F_READ_TIME"]), 0.00005);
  EXPECT_EQ(rows[0]["STDIO_OPENS"], "");  // another module's counter: empty, not 0
  EXPECT_EQ(rows[1]["file"], "/data/line\nbreak.txt");
  EXPECT_EQ(rows[1]["STDIO_OPENS"], "2");
  EXPECT_EQ(rows[1]["POSIX_READS"], "");
  EXPECT_EQ(std::stod(rows[1]["STDIO_F_READ_TIME"]), 0.25);
}

TEST_F(csv_tables_test, layers_flatten_latency_quantiles)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  std::vector<std::string> h = header("layers.csv");
  EXPECT_EQ(
      h, (std::vector<std::string>{"layer", "op", "count", "bytes", "time_us", "ops_per_s", "mb_per_s",
                                   "latency_us_p50", "latency_us_p90", "latency_us_p99", "latency_us_max"}));
  records rows = table("layers.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["layer"], "POSIX");
  EXPECT_EQ(rows[0]["count"], "10");
  EXPECT_EQ(rows[0]["latency_us_p99"], "9");
  EXPECT_EQ(rows[1]["latency_us_max"], "160");
  EXPECT_EQ(std::stod(rows[1]["mb_per_s"]), 27.3);
  records time = table("layer_time.csv");
  ASSERT_EQ(time.size(), 1u);
  EXPECT_EQ(time[0]["unoverlapped_us"], "20");
}

TEST_F(csv_tables_test, amplification_has_the_seed_columns_first)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  std::vector<std::string> h = header("amplification.csv");
  std::vector<std::string> first(h.begin(), h.begin() + 9);
  EXPECT_EQ(first, (std::vector<std::string>{"system", "R_AMP", "W_AMP", "SYS_R", "SYS_W", "VFS_R", "VFS_W",
                                             "BLK_R", "BLK_W"}));
  records rows = table("amplification.csv");
  ASSERT_EQ(rows.size(), 2u);  // the run's totals, then each system
  EXPECT_EQ(rows[0]["system"], "(run)");
  EXPECT_EQ(rows[0]["SYS_W"], "3");
  EXPECT_EQ(rows[0]["sys_write_bytes"], "300");
  EXPECT_EQ(rows[0]["avg_latency_us_blk_r"], "150.0");
  EXPECT_EQ(rows[1]["system"], "app");
  EXPECT_EQ(rows[1]["BLK_R"], "2");
  EXPECT_EQ(rows[1]["W_AMP"], "");  // null: no writes to amplify
  EXPECT_EQ(rows[1]["sys_read_bytes"], "40960");
  EXPECT_EQ(rows[1]["avg_latency_us_blk"], "150.0");
  EXPECT_EQ(rows[1]["total_ops"], "22");
  EXPECT_EQ(table("amplification_files.csv").at(0)["device_read_bytes"], "8192");
  records procs = table("amplification_processes.csv");
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0]["process"], "node1:42");  // named from the JSON's host and pid
  EXPECT_EQ(procs[0]["command"], "app");
  // No labelled system: the run's row alone (it was a header only).
  nlohmann::json unlabelled = report;
  unlabelled["amplification"]["systems"] = nlohmann::json::array();
  ASSERT_TRUE(write_report_tables(unlabelled, dir));
  records run_only = table("amplification.csv");
  ASSERT_EQ(run_only.size(), 1u);
  EXPECT_EQ(run_only[0]["system"], "(run)");
  EXPECT_EQ(run_only[0]["SYS_R"], "10");
}

TEST_F(csv_tables_test, page_cache_and_network_totals_are_one_row)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  records pc = table("page_cache.csv");
  ASSERT_EQ(pc.size(), 1u);
  EXPECT_EQ(pc[0]["hits"], "8");
  EXPECT_EQ(pc[0]["hit_ratio"], "0.8");
  EXPECT_EQ(pc[0].count("processes"), 0u);
  EXPECT_EQ(table("page_cache_processes.csv").at(0)["misses"], "2");
  records net = table("network.csv");
  ASSERT_EQ(net.size(), 1u);
  EXPECT_EQ(net[0]["bytes_received"], "200");
  EXPECT_EQ(table("network_processes.csv").at(0)["bytes_sent"], "100");
}

TEST_F(csv_tables_test, timeseries_and_heatmap_are_long_one_row_per_bin)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  records ts = table("timeseries.csv");
  ASSERT_EQ(ts.size(), 6u);  // two layers, three bins
  EXPECT_EQ(ts[0]["layer"], "BLOCK");
  EXPECT_EQ(ts[1]["bin"], "1");
  EXPECT_EQ(ts[1]["start_us"], "1100000");
  EXPECT_EQ(ts[1]["end_us"], "1200000");
  EXPECT_EQ(ts[1]["bytes"], "8192");
  EXPECT_EQ(ts[4]["layer"], "POSIX");
  EXPECT_EQ(ts[4]["ops"], "9");
  records hm = table("heatmap.csv");
  ASSERT_EQ(hm.size(), 3u);
  EXPECT_EQ(hm[1]["process"], "node1:42 (rank 0)");
  EXPECT_EQ(hm[1]["bytes"], "36864");
  EXPECT_EQ(hm[1]["pid"], "42");
  EXPECT_EQ(hm[1]["rank"], "0");
  EXPECT_EQ(hm[1]["layer"], "POSIX");
  EXPECT_EQ(hm[2]["end_us"], "1300000");
}

TEST_F(csv_tables_test, diagnostics_keep_their_evidence)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  records d = table("diagnostics.csv");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["message"], "most ops < 4 KiB, \"small\"");
  EXPECT_EQ(d[0]["evidence_small"], "9");
}

TEST_F(csv_tables_test, snapshots_split_into_system_devices_mounts_processes_and_files)
{
  ASSERT_TRUE(write_report_tables(report, dir));
  records sys = table("snapshots/system.csv");
  ASSERT_EQ(sys.size(), 1u);
  EXPECT_EQ(sys[0]["host"], "node1");
  EXPECT_EQ(sys[0]["cpu_model"], "Xeon, 2 GHz");
  EXPECT_EQ(sys[0]["cpu_count"], "8");
  EXPECT_EQ(sys[0].count("mounts"), 0u);
  records dev = table("snapshots/block_devices.csv");
  ASSERT_EQ(dev.size(), 2u);
  EXPECT_EQ(dev[1]["host"], "node1");
  EXPECT_EQ(dev[1]["name"], "vdb");
  EXPECT_EQ(dev[1]["rotational"], "true");
  EXPECT_EQ(dev[1].count("cpu_model"), 0u);
  records mounts = table("snapshots/mounts.csv");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0]["options"], "rw,relatime");
  records procs = table("snapshots/processes.csv");
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0]["argv"], "[\"app\",\"-x\"]");
  EXPECT_EQ(procs[0]["env_OMPI_COMM_WORLD_RANK"], "0");
  records snaps = table("snapshots/filesystem_snapshots.csv");
  ASSERT_EQ(snaps.size(), 1u);
  EXPECT_EQ(snaps[0]["file_bytes"], "300");
  EXPECT_EQ(snaps[0].count("entries"), 0u);
  records entries = table("snapshots/filesystem.csv");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["path"], "/data/a,b\"c.dat");
  EXPECT_EQ(entries[0]["dir"], "/data");
  EXPECT_EQ(entries[0]["when"], "start");
  EXPECT_EQ(entries[1]["type"], "dir");
  EXPECT_EQ(entries[1].count("total"), 0u);
}

TEST_F(csv_tables_test, empty_sections_give_header_only_tables)
{
  nlohmann::json empty = {
      {"version", 1}, {"files", nlohmann::json::array()}, {"layers", nlohmann::json::array()}};
  ASSERT_TRUE(write_report_tables(empty, dir));
  for (const char* name : {"files.csv", "layers.csv", "amplification.csv", "timeseries.csv",
                           "snapshots/system.csv", "snapshots/filesystem.csv"}) {
    test::csv_rows rows = test::read_csv(dir + "/" + name);
    ASSERT_EQ(rows.size(), 1u) << name;
    EXPECT_FALSE(rows[0].empty()) << name;
  }
  EXPECT_EQ(header("files.csv"), (std::vector<std::string>{"file", "module"}));
}

TEST_F(csv_tables_test, an_unwritable_directory_is_an_error)
{
  std::string blocker = dir + "/file";
  std::ofstream(blocker) << "x";
  auto written = write_report_tables(report, blocker);
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find(blocker), std::string::npos) << written.error().message;
}

}  // namespace
}  // namespace dc::analyze
