// analyze --csv on a real trace: files (one named with a comma and a quote), direct I/O that
// reaches the disk, a TCP exchange, sockets polled with poll and epoll, an mmap'd file. Every
// per-event table has exactly the rows the trace's own lines say it should, the block bytes equal
// the run summary's, the report tables equal the report JSON, and Python's csv module reads the
// odd path back exactly.
#include <fstream>
#include <map>
#include <set>

#include "runtime/runtime_helpers.h"
#include "unit/csv_reader.h"

namespace dc::test {
namespace {

using records = std::vector<std::map<std::string, std::string>>;

// The table an event line belongs to by docs/analyze.md ("CSV"), restated from the trace's side.
std::multiset<std::string> tables_of_line(const nlohmann::json& e)
{
  static const std::set<std::string> conn = {"socket", "socketpair", "connect", "bind",
                                             "listen", "accept",     "accept4", "shutdown"};
  static const std::set<std::string> poll = {"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
                                             "epoll_pwait",  "epoll_pwait2",  "poll",      "ppoll",
                                             "select",       "pselect6"};
  std::string ph = e.value("ph", ""), cat = e.value("cat", ""), name = e.value("name", "");
  if (cat == "PAGECACHE" && name == "page_cache")
    return {"cache"};  // the page cache's run totals (a metadata line)
  if (cat == "dftracer" || (ph != "X" && ph != "C"))
    return {};
  if (ph == "C")
    return {cat == "PAGECACHE" ? "cache" : "profile"};
  if (cat == "POSIX") {
    std::multiset<std::string> t = {"syscall"};
    if (conn.count(name))
      t.insert("nw_conn");
    if (poll.count(name))
      t.insert("nw_epoll");
    if (name == "setsockopt" || name == "getsockopt")
      t.insert("nw_sockopt");
    if (e["args"].contains("fs"))
      t.insert("fs");  // the FS operation the call carries: a row of the fs table
    return t;
  }
  if (cat == "FS")
    return {"fs"};
  if (cat == "BLOCK")
    return {"ds"};
  if (cat == "FAULT")
    return {"pagefault"};
  if (cat == "NET")
    return {name == "state" ? "nw_conn" : name == "retransmit" || name == "drop" ? "nw_drop" : "nw"};
  return {"user"};
}

struct analyze_csv_test : runtime_test {};

TEST_F(analyze_csv_test, per_event_and_report_tables_match_the_trace)
{
  const std::string odd = dir / "we,ird \"name\".dat";
  std::string script = dir / "workload.sh";
  {
    std::ofstream s(script);
    s << "set -e\n"
      << "f=" << shell_quote(odd) << "\n"
      << "dd if=/dev/urandom of=\"$f\" bs=64k count=8 oflag=direct status=none\n"
      << "dd if=\"$f\" of=/dev/null bs=64k iflag=direct status=none\n"
      << "cat \"$f\" > /dev/null\n"
      << TCP_PAIR_BIN << " 100000 > /dev/null\n"
      << MMAP_READER_BIN << " \"$f\" " << shell_quote(dir / "mmap.out") << "\n"
      << "/usr/bin/python3 -c 'import select, socket\n"
      << "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      << "s.bind((\"127.0.0.1\", 0)); s.listen(1)\n"
      << "p = select.poll(); p.register(s, select.POLLIN); p.poll(1)\n"
      << "e = select.epoll(); e.register(s.fileno()); e.poll(0.001)'\n";
  }
  traced_run run = trace_command(dir, "bash " + shell_quote(script));
  ASSERT_EQ(run.exit_code, 0) << run.err;

  std::string csv = dir / "csv", report_path = dir / "report.json";
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") +
                      " --csv " + shell_quote(csv) + " --json " + shell_quote(report_path) + " > " +
                      shell_quote(dir / "analyze.out") + " 2>&1"),
            0)
      << read_file(dir / "analyze.out");
  nlohmann::json report = nlohmann::json::parse(read_file(report_path));

  std::map<std::string, size_t> expected;
  std::vector<std::string> posix_names;
  uint64_t odd_posix = 0;
  std::map<uint64_t, std::string> names = file_names(run.trace);
  for (const auto& e : run.trace.lines) {
    for (const std::string& t : tables_of_line(e)) ++expected[t];
    if (e.value("ph", "") == "X" && e["cat"] == "POSIX") {
      posix_names.push_back(e["name"]);
      if (e["args"].contains("fhash") && names[e["args"]["fhash"].get<uint64_t>()] == odd)
        ++odd_posix;
    }
  }
  // The workload reaches every kernel layer: a table missing here is a routing bug, not chance.
  for (const char* t :
       {"syscall", "fs", "ds", "cache", "nw", "nw_conn", "nw_epoll", "nw_sockopt", "pagefault"})
    EXPECT_GT(expected[t], 0u) << t << ": the workload made no such event";
  for (const auto& [table, rows] : expected) {
    records got = csv_records(read_csv(csv + "/" + table + "/" + table + "_trace.csv"));
    EXPECT_EQ(got.size(), rows) << table;
  }

  // syscall/: one row per POSIX event, in the trace's order.
  records sys = csv_records(read_csv(csv + "/syscall/syscall_trace.csv"));
  ASSERT_EQ(sys.size(), posix_names.size());
  for (size_t i = 0; i < sys.size(); ++i) ASSERT_EQ(sys[i]["name"], posix_names[i]) << "row " << i;
  EXPECT_GT(odd_posix, 0u);

  // ds/: the block bytes are the run summary's.
  uint64_t summary_block = layer_total(run.summary, "BLOCK", "bytes"), csv_block = 0;
  for (auto& row : csv_records(read_csv(csv + "/ds/ds_trace.csv"))) csv_block += std::stoull(row["bytes"]);
  EXPECT_GT(summary_block, 0u);
  EXPECT_EQ(csv_block, summary_block);

  // Python's csv module reads the odd path back exactly, as many times as the trace names it.
  std::string py = dir / "count.py";
  std::ofstream(py) << "import csv, sys\n"
                       "rows = list(csv.DictReader(open(sys.argv[1], newline='')))\n"
                       "print(sum(1 for r in rows if r['file'] == sys.argv[2]))\n";
  std::string out = dir / "py.out";
  ASSERT_EQ(run_shell("/usr/bin/python3 " + shell_quote(py) + " " +
                      shell_quote(csv + "/syscall/syscall_trace.csv") + " " + shell_quote(odd) + " > " +
                      shell_quote(out)),
            0);
  EXPECT_EQ(std::stoull(read_file(out)), odd_posix);

  // Report tables: the rows and numbers of the report JSON.
  records layers = csv_records(read_csv(csv + "/layers.csv"));
  ASSERT_EQ(layers.size(), report["layers"].size());
  for (size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(layers[i]["layer"], report["layers"][i]["layer"]);
    EXPECT_EQ(layers[i]["op"], report["layers"][i]["op"]);
    EXPECT_EQ(layers[i]["count"], report["layers"][i]["count"].dump());
    EXPECT_EQ(layers[i]["bytes"], report["layers"][i]["bytes"].dump());
  }
  records series = csv_records(read_csv(csv + "/timeseries.csv"));
  size_t bins = 0;
  uint64_t json_bytes = 0, csv_bytes = 0;
  for (const auto& [layer, s] : report["timeseries"]["layers"].items()) {
    bins += s["bytes"].size();
    for (const auto& b : s["bytes"]) json_bytes += b.get<uint64_t>();
  }
  for (auto& row : series) csv_bytes += std::stoull(row["bytes"]);
  EXPECT_EQ(series.size(), bins);
  EXPECT_EQ(csv_bytes, json_bytes);
  EXPECT_EQ(csv_records(read_csv(csv + "/files.csv")).size(), report["files"].size());
  // Amplification (no --system label): the run's row, and every process named host:pid.
  records amp = csv_records(read_csv(csv + "/amplification.csv"));
  ASSERT_EQ(amp.size(), 1u + report["amplification"]["systems"].size());
  EXPECT_EQ(amp[0]["system"], "(run)");
  EXPECT_EQ(amp[0]["sys_write_bytes"], report["amplification"]["total"]["sys_write_bytes"].dump());
  EXPECT_EQ(amp[0]["BLK_W"], report["amplification"]["total"]["BLK_W"].dump());
  records amp_procs = csv_records(read_csv(csv + "/amplification_processes.csv"));
  ASSERT_EQ(amp_procs.size(), report["amplification"]["processes"].size());
  for (size_t i = 0; i < amp_procs.size(); ++i)
    EXPECT_EQ(amp_procs[i]["process"], report["amplification"]["processes"][i]["host"].get<std::string>() +
                                           ":" + report["amplification"]["processes"][i]["pid"].dump());
  for (const char* t :
       {"amplification.csv", "page_cache.csv", "heatmap.csv", "diagnostics.csv", "snapshots/system.csv"})
    EXPECT_NO_THROW(read_csv(csv + "/" + t)) << t;
}

TEST_F(analyze_csv_test, an_unwritable_csv_directory_is_one_line_and_a_failure)
{
  traced_run run = trace_command(dir, "true");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ofstream(dir / "blocker") << "x";
  std::string err = dir / "err";
  int rc = run_shell(std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") +
                     " --csv " + shell_quote(dir / "blocker") + " > /dev/null 2> " + shell_quote(err));
  EXPECT_NE(rc, 0);
  std::string text = read_file(err);
  EXPECT_NE(text.find(dir / "blocker"), std::string::npos) << text;
}

}  // namespace
}  // namespace dc::test
