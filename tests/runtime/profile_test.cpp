// Profile mode (--mode profile): the kernel counts calls per process, layer, operation, file and
// interval; the trace holds "ph":"C" samples with count, time_us and bytes. Counters must add up
// to exactly the calls made, over intervals ended during the run and the one cut by its end.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

struct counter_sum {
  uint64_t count = 0, bytes = 0, samples = 0;
  std::set<uint64_t> intervals;  // distinct sample times
};

// Sums the samples of one layer and operation on the file at `path` (any file when empty).
counter_sum sum_counters(const traced_run& run, const std::string& cat, const std::string& name,
                         const std::string& path = "")
{
  auto files = file_names(run.trace);
  counter_sum s;
  for (const auto& e : run.trace.lines) {
    if (e["ph"] != "C" || e["cat"] != cat || e["name"] != name)
      continue;
    if (!path.empty() && files[e.value("fhash", 0ull)] != path)  // beside args, not in them
      continue;
    s.count += e["args"]["count"].get<uint64_t>();
    s.bytes += e["args"]["bytes"].get<uint64_t>();
    ++s.samples;
    s.intervals.insert(e["ts"].get<uint64_t>());
    EXPECT_GE(e["ts"].get<uint64_t>() + 20000, run.start_us) << "a sample's interval began before the run";
    EXPECT_LE(e["ts"].get<uint64_t>(), run.end_us);
  }
  return s;
}

TEST_F(runtime_test, ProfileCountersAddUpToEveryWriteAcrossIntervals)
{
  // Five bursts of 100 writes, 60 ms apart, counted in 20 ms intervals: several intervals are
  // read while the command runs, the last one after it ends.
  std::string out = dir / "out.bin";
  std::string burst =
      "dd if=/dev/zero of=" + shell_quote(out) + " bs=4096 count=100 oflag=append conv=notrunc status=none";
  auto run =
      trace_command(dir, "sh -c " + shell_quote("for i in 1 2 3 4 5; do " + burst + "; sleep 0.06; done"),
                    "--mode profile --interval-ms 20");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["mode"], "profile");
  EXPECT_EQ(run.summary["interval_ms"], 20);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  EXPECT_TRUE(complete_events(run.trace).empty()) << "profile mode writes no per-call events";

  counter_sum writes = sum_counters(run, "POSIX", "write", out);
  EXPECT_EQ(writes.count, 500u);
  EXPECT_EQ(writes.bytes, 500u * 4096);
  EXPECT_GE(writes.intervals.size(), 5u) << "each burst falls in its own interval";
  // One sample per (process, interval): each dd is its own process.
  std::set<uint64_t> pids;
  for (const auto& e : run.trace.lines)
    if (e["ph"] == "C" && e["name"] == "write" && e["cat"] == "POSIX")
      pids.insert(e["pid"].get<uint64_t>());
  EXPECT_GE(pids.size(), 5u);
  counter_sum opens = sum_counters(run, "POSIX", "openat", out);
  EXPECT_EQ(opens.count, 5u);
  EXPECT_EQ(run.summary["layers"]["POSIX"]["write"]["bytes"].get<uint64_t>() >= 500u * 4096, true);
}

TEST_F(runtime_test, ProfileCountsUserSpaceCallsInTheKernel)
{
  constexpr int fwrites = 400;
  std::string config = dir / "probes.yaml", out = dir / "out.txt";
  std::ofstream(config) << "mode: profile\ninterval_ms: 50\ncapture_probes:\n"
                           "  - name: POSIX\n    probe: syscalls\n"
                           "  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/stdio.yaml\n";
  auto run =
      trace_command(dir, std::string(STDIO_APP_BIN) + " " + shell_quote(out) + " " + std::to_string(fwrites),
                    "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["mode"], "profile") << "the config's mode applies";
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  // stdio_app: N fwrites of 3000 bytes, one more after its longjmp, then fclose.
  counter_sum fw = sum_counters(run, "STDIO", "fwrite");
  EXPECT_EQ(fw.count, fwrites + 1u);
  EXPECT_EQ(fw.bytes, (fwrites + 1u) * 3000);
  EXPECT_EQ(sum_counters(run, "STDIO", "fopen").count, 1u);
  EXPECT_EQ(sum_counters(run, "STDIO", "fclose").count, 1u);
  // What stdio wrote reached the file through write(2), all of it.
  EXPECT_EQ(sum_counters(run, "POSIX", "write", out).bytes, (fwrites + 1u) * 3000);
}

// Run by the test below, traced: preads a file, goes idle, and while idle reads the trace being
// written (its complete gzip members) for the preads' samples. argv: file, trace, result.
constexpr const char* idle_reader = R"(import json, os, sys, time, zlib
path, trace, result = sys.argv[1:]
fd = os.open(path, os.O_RDONLY)
for i in range(50):
    os.pread(fd, 100, i * 100)
time.sleep(2)
data, text = open(trace, 'rb').read(), b''
while data:
    d = zlib.decompressobj(31)
    try:
        out = d.decompress(data)
    except zlib.error:
        break
    if not d.eof:
        break
    text, data = text + out, d.unused_data
lines = [json.loads(l.rstrip(',')) for l in text.decode().splitlines() if l.startswith('{')]
fh = [l['args']['value'] for l in lines if l.get('name') == 'FH' and l['args'].get('name') == path]
n = sum(l['args']['count'] for l in lines if l.get('ph') == 'C' and l.get('name') == 'pread64'
        and fh and l.get('fhash') == fh[0])  # a sample's fhash is beside its args
open(result, 'w').write(str(n))
)";

TEST_F(runtime_test, ProfileCountsOfAThreadIdleAtAnIntervalsEndAreReadWithThatInterval)
{
  // The thread that made the 50 preads is idle (asleep: no traced call) when their 20 ms interval
  // ends; their counts are held in its per-thread slots (bpf/profile.bpf.h) until the interval-end
  // flush. Two seconds later, still running, the program finds the samples in the trace
  // already: the interval was read with every count in it, not at the program's exit.
  std::string a = dir / "a.bin", script = dir / "idle_reader.py", result = dir / "result.txt";
  ASSERT_EQ(run_shell("head -c 65536 /dev/zero > " + shell_quote(a)), 0);
  std::ofstream(script) << idle_reader;
  auto run = trace_command(dir,
                           "/usr/bin/python3 " + shell_quote(script) + " " + shell_quote(a) + " " +
                               shell_quote(dir / "trace.pfw.gz") + " " + shell_quote(result),
                           "--mode profile --interval-ms 20");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_file(result), "50") << "the preads' samples in the trace while their thread was idle";
  EXPECT_EQ(sum_counters(run, "POSIX", "pread64", a).count, 50u);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
}

// Profile mode's counters are read intervals after their files were named, with no descriptor to
// ask /proc by: a run that names more files meanwhile than the file table keeps in two generations
// (2 x 16,384) must still name every counter by its path (core/names.h, hold_for_counters), as
// trace mode does. Before, every one of a 100,000-file storm's counters was "anon:[dev:ino]".
TEST_F(runtime_test, ProfileCountersOfManyFilesAreNamedByTheirPaths)
{
  constexpr int files = 40000;
  std::filesystem::path many = dir / "many";
  std::filesystem::create_directory(many);
  // Appended, not "f" + to_string(i): GCC 12 at -O3 warns falsely (-Wrestrict) on that form.
  auto file = [&](int i) { return many / std::string("f").append(std::to_string(i)); };
  for (int i = 0; i < files; ++i) std::ofstream{file(i)};
  std::string opener = "import os, sys\nfor i in range(";
  opener.append(std::to_string(files))
      .append("):\n    os.close(os.open(f'{sys.argv[1]}/f{i}', os.O_RDONLY))\n");
  auto run = trace_command(dir, "/usr/bin/python3 -c " + shell_quote(opener) + " " + shell_quote(many),
                           "--mode profile --interval-ms 200");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  auto names = file_names(run.trace);
  std::map<std::string, uint64_t> opens;  // by the path its counters are named by
  for (const auto& e : run.trace.lines)
    if (e["ph"] == "C" && e["cat"] == "POSIX" && e["name"] == "openat")
      opens[names[e.value("fhash", 0ull)]] += e["args"]["count"].get<uint64_t>();
  int named = 0;
  for (int i = 0; i < files; ++i) named += opens[file(i)] == 1;
  EXPECT_EQ(named, files) << "files whose one open is counted under their path";
}

}  // namespace
}  // namespace dc::test
