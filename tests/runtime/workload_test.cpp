// Ground truth #2: a workload that knows what it did (threads, a forked child) and what the
// kernel counted for it (/proc/self/io). Counts, bytes, pids, tids and files must all match.
#include <algorithm>
#include <map>
#include <set>

#include "core/hash.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr int threads = 4, ops = 500, size = 4096, child_writes = 300;

struct io_counts {
  uint64_t syscr = 0, syscw = 0, rchar = 0, wchar = 0;
};

bool is_read_family(const std::string& n)
{
  return n == "read" || n == "pread64" || n == "readv" || n == "preadv" || n == "preadv2";
}
bool is_write_family(const std::string& n)
{
  return n == "write" || n == "pwrite64" || n == "writev" || n == "pwritev" || n == "pwritev2";
}

void count_io(io_counts& c, const nlohmann::json& e)
{
  if (e["cat"] != "POSIX")
    return;  // /proc/PID/io counts system calls; BLOCK also has "read" and "write"
  std::string name = e["name"];
  int64_t ret = e["args"]["ret"];
  if (is_read_family(name)) {
    ++c.syscr;
    c.rchar += ret > 0 ? ret : 0;
  } else if (is_write_family(name)) {
    ++c.syscw;
    c.wchar += ret > 0 ? ret : 0;
  }
}

// What /proc/PID/io should show between two reads of it by `pid`: the first read counts, the
// second does not (the kernel shows counts from before the read that asks). A child reaped in
// between is added whole (the kernel folds a reaped child's counts into its parent's).
// The trace keeps each thread's calls in order but not calls of different threads (records
// reach it in per-thread batches), so events are put in time order first.
io_counts counts_between_proc_io_reads(std::vector<nlohmann::json> events, uint32_t pid, uint64_t io_hash,
                                       uint32_t reaped_child = 0)
{
  std::ranges::stable_sort(events, {}, [](const nlohmann::json& e) { return e["ts"].get<uint64_t>(); });
  io_counts c;
  int seen = 0;
  for (const auto& e : events) {
    if (reaped_child && e["pid"] == reaped_child)
      count_io(c, e);
    if (e["pid"] != pid)
      continue;
    bool proc_io_read = e["name"] == "read" && e["args"].value("fhash", 0ull) == io_hash;
    if (proc_io_read && ++seen == 2)
      break;
    if (seen > 0)
      count_io(c, e);
  }
  EXPECT_EQ(seen, 2) << "both reads of /proc/" << pid << "/io must be in the trace";
  return c;
}

void expect_proc_io(const io_counts& got, const nlohmann::json& truth)
{
  EXPECT_EQ(got.syscr, truth["syscr"].get<uint64_t>());
  EXPECT_EQ(got.syscw, truth["syscw"].get<uint64_t>());
  EXPECT_EQ(got.rchar, truth["rchar"].get<uint64_t>());
  EXPECT_EQ(got.wchar, truth["wchar"].get<uint64_t>());
}

TEST_F(runtime_test, ThreadsAndAForkedChildMatchWhatTheyDidAndProcIo)
{
  std::string result = dir / "result.json";
  auto run = trace_command(dir, std::string(IO_WORKLOAD_BIN) + " " + shell_quote(dir.path) + " " +
                                    std::to_string(threads) + " " + std::to_string(ops) + " " +
                                    std::to_string(size) + " " + std::to_string(child_writes) + " " +
                                    shell_quote(result));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto truth = nlohmann::json::parse(read_file(result));
  auto child_truth = nlohmann::json::parse(read_file(result + ".child"));
  uint32_t pid = truth["pid"], child = truth["child_pid"];
  std::set<uint32_t> worker_tids;
  for (const auto& t : truth["tids"]) worker_tids.insert(t.get<uint32_t>());
  ASSERT_EQ(worker_tids.size(), static_cast<size_t>(threads));

  auto events = complete_events(run.trace);
  auto names = file_names(run.trace);
  uint64_t data = string_hash(dir / "data.bin"), child_file = string_hash(dir / "child.bin");
  EXPECT_EQ(names[data], dir / "data.bin");
  EXPECT_EQ(names[child_file], dir / "child.bin");

  std::map<uint32_t, int> pwrites, preads;
  int child_file_writes = 0;
  for (const auto& e : events) {
    EXPECT_GE(e["ts"].get<uint64_t>(), run.start_us);
    EXPECT_LE(e["ts"].get<uint64_t>() + e["dur"].get<uint64_t>(), run.end_us);
    uint64_t fh = e["args"].value("fhash", 0ull);
    if (fh == data && (e["name"] == "pwrite64" || e["name"] == "pread64")) {
      EXPECT_EQ(e["pid"], pid);
      EXPECT_TRUE(worker_tids.count(e["tid"].get<uint32_t>())) << e;
      EXPECT_EQ(e["args"]["ret"], size);
      EXPECT_EQ(e["args"]["count"], size);
      ++(e["name"] == "pwrite64" ? pwrites : preads)[e["tid"].get<uint32_t>()];
    }
    if (fh == child_file && e["name"] == "write") {
      EXPECT_EQ(e["pid"], child);
      EXPECT_EQ(e["tid"], child);
      EXPECT_EQ(e["args"]["ret"], size);
      ++child_file_writes;
    }
  }
  for (uint32_t tid : worker_tids) {
    EXPECT_EQ(pwrites[tid], ops) << "tid " << tid;
    EXPECT_EQ(preads[tid], ops) << "tid " << tid;
  }
  EXPECT_EQ(child_file_writes, child_writes);

  uint64_t io_hash_main = string_hash("/proc/" + std::to_string(pid) + "/io");
  uint64_t io_hash_child = string_hash("/proc/" + std::to_string(child) + "/io");
  expect_proc_io(counts_between_proc_io_reads(events, pid, io_hash_main, child), truth["io"]);
  expect_proc_io(counts_between_proc_io_reads(events, child, io_hash_child), child_truth);

  // The summary agrees with the trace, per process and operation.
  const auto& procs = run.summary["processes"];
  std::map<std::string, std::map<std::string, std::pair<uint64_t, uint64_t>>> from_trace;
  for (const auto& e : events) {
    if (e["cat"] != "POSIX")
      continue;
    auto& [count, bytes] = from_trace[std::to_string(e["pid"].get<uint32_t>())][e["name"]];
    ++count;
    int64_t ret = e["args"]["ret"];
    if (is_read_family(e["name"]) || is_write_family(e["name"]))
      bytes += ret > 0 ? ret : 0;
  }
  for (const auto& [p, ops_of] : from_trace)
    for (const auto& [op, cb] : ops_of) {
      EXPECT_EQ(procs[p]["layers"]["POSIX"][op]["count"], cb.first) << p << " " << op;
      if (is_read_family(op) || is_write_family(op)) {
        EXPECT_EQ(procs[p]["layers"]["POSIX"][op]["bytes"], cb.second) << p << " " << op;
      }
    }
  EXPECT_EQ(procs[std::to_string(child)]["parent"], pid);
  EXPECT_EQ(procs[std::to_string(pid)]["threads"], threads + 1);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  EXPECT_EQ(run.summary["events"]["written"].get<size_t>(), events.size());
}

}  // namespace
}  // namespace dc::test
