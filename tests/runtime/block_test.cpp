// The block layer against ground truth on a loop device of the test's own: bytes per file and
// process (including writeback issued by kernel workers), bounded by /proc/diskstats.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "core/hash.h"
#include "runtime/block_coverage.h"
#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr uint64_t mib = 1 << 20;

struct block_bytes {
  uint64_t read = 0, write = 0, writeback_write = 0, all = 0;
  std::set<uint32_t> pids;
  std::set<std::pair<int, int>> devices;  // (major, minor) of the file's requests
};

// BLOCK bytes charged to `path` (every file when path is empty).
block_bytes block_bytes_for(const traced_run& run, const std::string& path)
{
  block_bytes b;
  uint64_t want = path.empty() ? 0 : string_hash(path);
  for (const auto& e : complete_events(run.trace)) {
    if (e["cat"] != "BLOCK")
      continue;
    uint64_t bytes = e["args"]["bytes"];
    b.all += bytes;
    if (want && e["args"].value("fhash", 0ull) != want)
      continue;
    b.pids.insert(e["pid"].get<uint32_t>());
    b.devices.insert({e["args"]["major"].get<int>(), e["args"]["minor"].get<int>()});
    if (e["name"] == "read")
      b.read += bytes;
    if (e["name"] == "write") {
      b.write += bytes;
      if (e["args"]["writeback"] == 1)
        b.writeback_write += bytes;
    }
  }
  return b;
}

void expect_within_1_percent(uint64_t got, uint64_t want)
{
  EXPECT_GE(got * 100, want * 99) << got << " vs " << want;
  EXPECT_LE(got * 100, want * 101) << got << " vs " << want;
}

// BLOCK bytes the trace charged on the test's device: requests named `op`, or all of them.
// The trace's BLOCK events on `fs`'s device (of operation `op`, when given): their bytes, and
// how many.
struct block_total {
  uint64_t bytes = 0;
  uint64_t requests = 0;
};

block_total block_total_on(const traced_run& run, const loop_fs& fs, const std::string& op = "")
{
  block_total t;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "BLOCK" && (op.empty() || e["name"] == op) && e["args"]["major"] == fs.device_major() &&
        e["args"]["minor"] == fs.device_minor()) {
      t.bytes += e["args"]["bytes"].get<uint64_t>();
      ++t.requests;
    }
  return t;
}

uint64_t block_bytes_on(const traced_run& run, const loop_fs& fs, const std::string& op = "")
{
  return block_total_on(run, fs, op).bytes;
}

// What the trace charged to the test's device is bounded by what /proc/diskstats saw there.
void expect_within_device_counters(const traced_run& run, const loop_fs& fs, const disk_counters& before,
                                   const disk_counters& after)
{
  uint64_t device_bytes =
      (after.sectors_written - before.sectors_written + after.sectors_read - before.sectors_read) * 512;
  uint64_t traced = block_bytes_on(run, fs);
  EXPECT_GT(traced, 0u);
  EXPECT_LE(traced, device_bytes);
}

// Bytes of `path` in the page cache (mincore over a mapping of it).
uint64_t resident_bytes(const std::string& path)
{
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  off_t size = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);
  void* map = size > 0 ? mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (fd >= 0)
    close(fd);
  if (map == MAP_FAILED)
    return ~0ull;
  long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> in((size + page - 1) / page);
  uint64_t resident = 0;
  if (mincore(map, size, in.data()) == 0)
    for (unsigned char c : in) resident += (c & 1) ? page : 0;
  munmap(map, size);
  return resident;
}

struct block_test : runtime_test, ::testing::WithParamInterface<const char*> {
  std::unique_ptr<loop_fs> fs;
  void SetUp() override
  {
    runtime_test::SetUp();
    fs = std::make_unique<loop_fs>(dir.path, GetParam());
  }
  void TearDown() override { fs.reset(); }
  std::string file(const std::string& name) { return fs->mount_point() + "/" + name; }
};

TEST_P(block_test, DirectWriteIsChargedToTheWriterAndItsFile)
{
  disk_counters before = fs->counters();
  auto run = trace_command(dir, "dd if=/dev/zero of=" + shell_quote(file("direct.bin")) +
                                    " bs=1M count=16 oflag=direct status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  disk_counters after = fs->counters();
  auto b = block_bytes_for(run, file("direct.bin"));
  expect_within_1_percent(b.write, 16 * mib);
  EXPECT_EQ(b.pids, std::set<uint32_t>{pid_of_command(run, "dd ")});
  expect_within_device_counters(run, *fs, before, after);
  EXPECT_EQ(run.summary["amplification"]["bytes"]["BLOCK"]["write"].get<uint64_t>(), b.write);
  // Bytes per file: the application's 16 MiB and the device's, side by side.
  const auto& per_file = run.summary["files"][file("direct.bin")];
  EXPECT_EQ(per_file["POSIX"]["write_bytes"], 16 * mib);
  EXPECT_EQ(per_file["BLOCK"]["write_bytes"], b.write);
  // Latency percentiles agree with the trace's own durations.
  std::vector<uint64_t> durations;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "BLOCK" && e["name"] == "write")
      durations.push_back(e["dur"].get<uint64_t>());
  ASSERT_FALSE(durations.empty());
  std::ranges::sort(durations);
  // Nearest rank: the smallest duration at least p % of the requests do not exceed.
  auto nearest_rank = [&](uint64_t p) {
    return durations[std::max<size_t>((p * durations.size() + 99) / 100, 1) - 1];
  };
  // The summary's sketch (core/latency_sketch.h) is exact below 1024 us, within 1 % above.
  auto near = [](double got, uint64_t truth) {
    return truth < 1024 ? got == truth
                        : std::abs(got - truth) <= truth * 0.01 + 0.01;  // the report rounds to 0.01
  };
  const auto& latency = run.summary["layers"]["BLOCK"]["write"]["latency_us"];
  EXPECT_EQ(latency["max"], durations.back());
  EXPECT_TRUE(near(latency["p50"], nearest_rank(50))) << latency << " p50 " << nearest_rank(50);
  EXPECT_TRUE(near(latency["p99"], nearest_rank(99))) << latency << " p99 " << nearest_rank(99);
}

TEST_P(block_test, StorageSystemsGetTheirOwnAmplificationRow)
{
  // A program whose name is a built-in system's (etcd), and one labelled by a user rule.
  ASSERT_EQ(run_shell("cp \"$(command -v dd)\" " + shell_quote(dir / "etcd")), 0);
  auto run =
      trace_command(dir,
                    "sh -c " + shell_quote((dir / "etcd") + " if=/dev/zero of=" + file("kv.bin") +
                                           " bs=1M count=8 oflag=direct status=none && dd if=/dev/zero of=" +
                                           file("mine.bin") + " bs=1M count=4 oflag=direct status=none"),
                    "--system Mine=dd");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto& etcd = run.summary["systems"]["etcd"];
  EXPECT_EQ(etcd["processes"], 1);
  EXPECT_EQ(etcd["device_write_bytes"], 8 * mib);
  EXPECT_DOUBLE_EQ(etcd["W_AMP"].get<double>(), 1.0 * (8 * mib) / etcd["app_write_bytes"].get<uint64_t>());
  EXPECT_GE(etcd["BLK_W"].get<uint64_t>(), 1u);
  EXPECT_EQ(run.summary["systems"]["Mine"]["device_write_bytes"], 4 * mib);
  EXPECT_FALSE(run.summary["systems"].contains("sh"));
  EXPECT_NE(run.err.find("SYSTEM"), std::string::npos) << run.err;
  bool tagged = false;
  for (const auto& j : run.trace.lines)
    tagged |= j["name"] == "process_name" && j["args"].value("system", "") == "etcd";
  EXPECT_TRUE(tagged);
}

TEST_P(block_test, LayersSelectsWhatIsTraced)
{
  std::string dd =
      "dd if=/dev/zero of=" + shell_quote(file("sel.bin")) + " bs=1M count=4 oflag=direct status=none";
  auto posix_only = trace_command(dir, dd, "--layers syscall");
  ASSERT_EQ(posix_only.exit_code, 0) << posix_only.err;
  EXPECT_EQ(block_bytes_for(posix_only, "").all, 0u);
  EXPECT_TRUE(posix_only.summary["layers"].contains("POSIX"));
  auto block_only = trace_command(dir, dd, "--layers block");
  ASSERT_EQ(block_only.exit_code, 0) << block_only.err;
  // Without the syscall layer no open names the file: the bytes are there, the path is not.
  auto b = block_bytes_for(block_only, "");
  EXPECT_EQ(b.write, 4 * mib);
  EXPECT_EQ(b.pids, std::set<uint32_t>{pid_of_command(block_only, "dd ")});
  EXPECT_FALSE(block_only.summary["layers"].contains("POSIX"));
}

TEST_P(block_test, BufferedWriteWithFsyncIsChargedToTheWriter)
{
  disk_counters before = fs->counters();
  auto run = trace_command(dir, "dd if=/dev/zero of=" + shell_quote(file("buffered.bin")) +
                                    " bs=1M count=8 conv=fsync status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  disk_counters after = fs->counters();
  auto b = block_bytes_for(run, file("buffered.bin"));
  expect_within_1_percent(b.write, 8 * mib);
  EXPECT_EQ(b.pids, std::set<uint32_t>{pid_of_command(run, "dd ")});
  expect_within_device_counters(run, *fs, before, after);
}

TEST_P(block_test, WritebackByKernelWorkersIsChargedToTheProcessThatDirtiedThePages)
{
  // dd leaves 8 MiB dirty and exits; an untraced sync, once dd is done (not after a fixed
  // delay: the tool's start-up time varies), makes kernel workers write it back.
  std::string done = dir / "dd.done";
  std::thread syncer([&] {
    run_shell("for i in $(seq 200); do [ -e " + shell_quote(done) + " ] && break; sleep 0.05; done; sync");
  });
  auto run = trace_command(dir, "sh -c " + shell_quote("dd if=/dev/zero of=" + file("late.bin") +
                                                       " bs=1M count=8 conv=notrunc status=none; touch " +
                                                       shell_quote(done) + "; sleep 2"));
  syncer.join();
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto b = block_bytes_for(run, file("late.bin"));
  expect_within_1_percent(b.writeback_write, 8 * mib);
  // Charged once, on the file system's device, not again on the disk under the loop device.
  std::set<std::pair<int, int>> loop_only{{fs->device_major(), fs->device_minor()}};
  EXPECT_EQ(b.devices, loop_only);
  expect_within_1_percent(b.write, 8 * mib);
  EXPECT_EQ(b.pids, std::set<uint32_t>{pid_of_command(run, "dd ")});
}

TEST_P(block_test, ColdReadIsChargedToTheReader)
{
  ASSERT_EQ(
      run_shell("dd if=/dev/urandom of=" + shell_quote(file("cold.bin")) + " bs=1M count=16 status=none"), 0);
  fs->drop_caches();
  auto run = trace_command(dir, "dd if=" + shell_quote(file("cold.bin")) + " of=/dev/null bs=1M status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto b = block_bytes_for(run, file("cold.bin"));
  expect_within_1_percent(b.read, 16 * mib);
  EXPECT_EQ(b.pids, std::set<uint32_t>{pid_of_command(run, "dd ")});
  // Read amplification: every device read (the file, and libraries dropped from the cache)
  // over every byte the application read.
  uint64_t app = 0, device = 0;
  for (const auto& e : complete_events(run.trace)) {
    std::string name = e["name"];
    if (e["cat"] == "BLOCK" && name == "read")
      device += e["args"]["bytes"].get<uint64_t>();
    if (e["cat"] == "POSIX" && (name == "read" || name == "pread64") && e["args"]["ret"] > 0)
      app += e["args"]["ret"].get<uint64_t>();
  }
  EXPECT_DOUBLE_EQ(run.summary["amplification"]["read"].get<double>(), 1.0 * device / app);
}

TEST_P(block_test, ReadsOfAFileWithHolesInsideItsFoliosAreChargedToTheFile)
{
  // One block of data every other block: a folio that mixes holes and data is read a block at a
  // time (buffer heads on ext4), so requests start inside large folios, on tail pages.
  std::string sparse = file("sparse.bin");
  {
    int fd = open(sparse.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    std::vector<char> block(4096, 'x');
    for (off_t at = 0; at < off_t(16 * mib); at += 2 * block.size())
      ASSERT_EQ(pwrite(fd, block.data(), block.size(), at), ssize_t(block.size()));
    close(fd);
  }
  fs->drop_caches();
  ASSERT_EQ(resident_bytes(sparse), 0u) << "the file's pages were not all dropped";
  disk_counters before = fs->counters();
  auto run = trace_command(dir, "dd if=" + shell_quote(sparse) + " of=/dev/null bs=1M status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  disk_counters after = fs->counters();
  auto b = block_bytes_for(run, sparse);
  // Every read request the device completed was dd's (the file's data, and its inode and extent
  // blocks), and each is in the trace, timed or traced without its end (the kernel did not run
  // the completion's program, docs/reliability.md), or else not seen to end when tracing stopped.
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  uint64_t untimed = run.summary["events"]["lost_block_end_unseen"],
           unended = run.summary["events"]["lost_block_unended"];
  auto traced = block_total_on(run, *fs, "read");
  EXPECT_EQ(traced.requests + unended, after.reads - before.reads) << "unended " << unended;
  uint64_t device_read = (after.sectors_read - before.sectors_read) * 512;
  if (unended == 0) {
    EXPECT_EQ(traced.bytes, device_read);
    expect_within_1_percent(b.read, 8 * mib);
  } else {
    EXPECT_LT(traced.bytes, device_read);
  }
  if (untimed + unended)
    std::fprintf(stderr, "block requests traced without their end: %llu; not seen to end: %llu\n",
                 static_cast<unsigned long long>(untimed), static_cast<unsigned long long>(unended));
  if (HasFailure()) {
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> by_file;  // fhash -> (requests, bytes)
    int shown = 0;
    for (const auto& e : complete_events(run.trace)) {
      if (e["cat"] != "BLOCK")
        continue;
      uint64_t fhash = e["args"].value("fhash", 0ull);
      if (fhash != string_hash(sparse) && ++shown <= 8)
        ADD_FAILURE() << "not the file's: " << e.dump();
      if (e["name"] == "read") {
        auto& [requests, bytes] = by_file[fhash];
        ++requests;
        bytes += e["args"]["bytes"].get<uint64_t>();
      }
    }
    for (const auto& [fhash, counts] : by_file)
      ADD_FAILURE() << "block reads charged to fhash " << fhash
                    << (fhash == string_hash(sparse) ? " (the file)" : "") << ": " << counts.first
                    << " requests, " << counts.second << " bytes; lost "
                    << run.summary["events"]["lost"].dump();
    ADD_FAILURE() << "summary BLOCK: " << run.summary["layers"].value("BLOCK", nlohmann::json()).dump()
                  << "; BPF object " << run.summary.value("bpf_object", nlohmann::json()).dump();
    ADD_FAILURE() << uncovered_blocks(run, *fs, sparse);
  }
  EXPECT_EQ(b.pids, std::set<uint32_t>{pid_of_command(run, "dd ")});
}

INSTANTIATE_TEST_SUITE_P(fs, block_test, ::testing::Values("ext4", "xfs"));

}  // namespace
}  // namespace dc::test
