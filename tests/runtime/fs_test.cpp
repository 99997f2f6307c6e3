// The filesystem layer against what the workload asked of the filesystem: direct and buffered
// I/O, fsync and the journal commits it waited for, fallocate/truncate/unlink, on ext4 and xfs
// loop devices.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/hash.h"
#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

std::vector<nlohmann::json> fs_events(const traced_run& run, const std::string& name)
{
  std::vector<nlohmann::json> out;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "FS" && e["name"] == name)
      out.push_back(e);
  return out;
}

// The pid of the traced command itself (the process that exec'd it).
uint32_t command_pid(const traced_run& run, const std::string& comm)
{
  for (const auto& j : run.trace.lines)
    if (j["ph"] == "M" && j["name"] == "process_name" &&
        j["args"]["name"].get<std::string>().starts_with(comm))
      return j["pid"];
  return 0;
}

struct fs_dio_test : runtime_test, ::testing::WithParamInterface<const char*> {};

TEST_P(fs_dio_test, DirectWritesAreEveryByteTheFilesystemWasAskedFor)
{
  loop_fs fs(dir.path, GetParam());
  std::string file = fs.mount_point() + "/direct.bin";
  auto run = trace_command(
      dir, "dd if=/dev/zero of=" + shell_quote(file) + " bs=1M count=16 oflag=direct status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  uint32_t dd = command_pid(run, "dd");
  ASSERT_NE(dd, 0u);
  uint64_t bytes = 0, offset = 0;
  auto writes = fs_events(run, "direct_write");
  ASSERT_EQ(writes.size(), 16u);
  for (const auto& e : writes) {
    EXPECT_EQ(e["pid"], dd);
    EXPECT_EQ(e["args"]["fhash"], string_hash(file));
    EXPECT_EQ(e["args"]["count"], 1 << 20);
    EXPECT_EQ(e["args"]["ret"], 1 << 20);
    EXPECT_EQ(e["args"]["offset"], offset);
    offset += 1 << 20;
    bytes += e["args"]["ret"].get<uint64_t>();
  }
  EXPECT_EQ(bytes, 16u << 20);
  EXPECT_EQ(run.summary["events"]["lost"], 0);

  // Nesting: each direct write, and each block request it submitted, sits under the write(2)
  // that asked for it.
  std::map<uint64_t, nlohmann::json> syscalls;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX")
      syscalls[e["id"]] = e;
  auto expect_under_a_write = [&](const nlohmann::json& e) {
    ASSERT_TRUE(e["args"].contains("p_idx")) << e;
    auto parent = syscalls.find(e["args"]["p_idx"].get<uint64_t>());
    ASSERT_NE(parent, syscalls.end()) << e;
    EXPECT_EQ(parent->second["name"], "write") << e;
    EXPECT_EQ(parent->second["args"]["fhash"], string_hash(file)) << e;
    EXPECT_EQ(e["args"]["level"], parent->second["args"]["level"].get<int>() + 1) << e;
    EXPECT_EQ(e["tid"], parent->second["tid"]);
  };
  for (const auto& e : writes) expect_under_a_write(e);
  // Block requests are drawn on the device's lanes; they name the write that submitted them.
  int requests = 0;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "BLOCK" && e["name"] == "write" && e["args"].value("fhash", 0ull) == string_hash(file)) {
      ++requests;
      ASSERT_TRUE(e["args"].contains("submit_id")) << e;
      auto parent = syscalls.find(e["args"]["submit_id"].get<uint64_t>());
      ASSERT_NE(parent, syscalls.end()) << e;
      EXPECT_EQ(parent->second["name"], "write") << e;
      EXPECT_EQ(e["args"]["submit_tid"], parent->second["tid"]) << e;
      EXPECT_GE(e["tid"].get<uint64_t>(), 1u << 30) << "on a lane: " << e;
    }
  EXPECT_GE(requests, 16);
}

// Synchronous direct reads (dd iflag=direct) begin and end in the reading thread: the FS layer
// keeps each in the thread's state, times it with its own clocks and ends it where the
// filesystem completes it, inside the read(2) that asked for it. Profile mode counts the same.
TEST_P(fs_dio_test, DirectReadsAreTimedInsideTheReadThatAskedForThem)
{
  loop_fs fs(dir.path, GetParam());
  std::string file = fs.mount_point() + "/direct.bin";
  std::string workload = "sh -c " + shell_quote("dd if=/dev/zero of=" + shell_quote(file) +
                                                " bs=1M count=8 status=none && dd if=" + shell_quote(file) +
                                                " of=/dev/null bs=256k iflag=direct status=none");
  auto run = trace_command(dir, workload);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::map<uint64_t, nlohmann::json> reads;  // read(2) calls by id
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX" && e["name"] == "read")
      reads[e["id"]] = e;
  uint64_t offset = 0;
  for (const auto& e : fs_events(run, "direct_read")) {
    if (e["args"]["ret"].get<int64_t>() <= 0)
      continue;  // at end of file
    EXPECT_EQ(e["args"]["fhash"], string_hash(file)) << e;
    EXPECT_EQ(e["args"]["offset"], offset) << e;
    EXPECT_EQ(e["args"]["count"], 256 << 10) << e;
    EXPECT_EQ(e["args"]["ret"], 256 << 10) << e;
    offset += 256 << 10;
    auto parent = reads.find(e["args"]["p_idx"].get<uint64_t>());
    ASSERT_NE(parent, reads.end()) << e;
    const auto& call = parent->second;
    EXPECT_EQ(e["tid"], call["tid"]);
    EXPECT_EQ(call["args"]["ret"], 256 << 10);
    // Both rounded down to microseconds: the FS operation's end may round up past its call's.
    uint64_t ts = e["ts"], end = ts + e["dur"].get<uint64_t>();
    uint64_t call_ts = call["ts"], call_end = call_ts + call["dur"].get<uint64_t>();
    EXPECT_GE(ts, call_ts) << e << call;
    EXPECT_LE(end, call_end + 1) << e << call;
  }
  EXPECT_EQ(offset, 8u << 20) << "every byte read directly, in order";

  std::filesystem::remove(dir / "trace.pfw.gz");
  std::filesystem::remove(dir / "summary.json");
  auto profiled = trace_command(dir, workload, "--mode profile --interval-ms 20");
  ASSERT_EQ(profiled.exit_code, 0) << profiled.err;
  EXPECT_EQ(profiled.summary["events"]["lost"], 0);
  const auto& traced_fs = run.summary["layers"]["FS"]["direct_read"];
  const auto& profiled_fs = profiled.summary["layers"]["FS"]["direct_read"];
  EXPECT_EQ(profiled_fs["bytes"], 8 << 20) << profiled_fs;
  EXPECT_EQ(profiled_fs["count"], traced_fs["count"]) << profiled_fs << traced_fs;
}

// Direct writes submitted asynchronously (libaio, 8 in flight) end where the kernel completes
// them, not in the submitting thread: each is an FS event with its bytes, all of them.
TEST_P(fs_dio_test, AsynchronousDirectWritesAreEachCountedWithTheirBytes)
{
  loop_fs fs(dir.path, GetParam());
  std::string file = fs.mount_point() + "/aio.bin";
  std::string job = dir.path + "/aio.fio";
  std::ofstream(job) << "[aio]\nfilename=" << file
                     << "\ndirect=1\nioengine=libaio\niodepth=8\nbs=64k\nsize=4m\nrw=write\n";
  auto run = trace_command(dir, "fio --output=/dev/null " + shell_quote(job));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::set<uint64_t> offsets;
  for (const auto& e : fs_events(run, "direct_write")) {
    if (e["args"].value("fhash", 0ull) != string_hash(file))
      continue;
    EXPECT_EQ(e["args"]["count"], 64 << 10) << e;
    EXPECT_EQ(e["args"]["ret"], 64 << 10) << e;
    EXPECT_TRUE(offsets.insert(e["args"]["offset"].get<uint64_t>()).second) << "twice: " << e;
  }
  ASSERT_EQ(offsets.size(), 64u);
  EXPECT_EQ(*offsets.rbegin(), 63u * (64 << 10));
}

INSTANTIATE_TEST_SUITE_P(fs, fs_dio_test, ::testing::Values("ext4", "xfs"));

struct fs_ops_test : runtime_test, ::testing::WithParamInterface<const char*> {};

// 16 buffered writes of 64 KiB to `file`, then dd reads it back `read_block` bytes at a time.
std::string write_then_read(const std::string& file, const std::string& read_block)
{
  return "sh -c " + shell_quote("dd if=/dev/zero of=" + shell_quote(file) +
                                " bs=64k count=16 status=none && dd if=" + shell_quote(file) +
                                " of=/dev/null bs=" + read_block + " status=none");
}

// Buffered reads and writes: each system call that went through the page cache carries its FS
// operation in its own event (one event per call): the offset (writes) or page range (reads) it
// asked for; the summary counts them in the FS layer with their bytes.
TEST_P(fs_ops_test, BufferedReadsAndWritesAreEachSystemCallsPageCacheWork)
{
  loop_fs fs(dir.path, GetParam());
  std::string file = fs.mount_point() + "/buffered.bin";
  auto run = trace_command(dir, write_then_read(file, "64k"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  std::vector<nlohmann::json> writes, reads;
  for (const auto& e : complete_events(run.trace)) {
    if (e["args"].value("fhash", 0ull) != string_hash(file))
      continue;
    EXPECT_FALSE(e["cat"] == "FS" && e["name"].get<std::string>().starts_with("buffered_"))
        << "a buffered call's FS part is in the call's event: " << e;
    if (e["cat"] == "POSIX" && e["name"] == "write")
      writes.push_back(e);
    if (e["cat"] == "POSIX" && e["name"] == "read")
      reads.push_back(e);
  }
  ASSERT_EQ(writes.size(), 16u);
  for (size_t i = 0; i < writes.size(); ++i) {
    EXPECT_EQ(writes[i]["args"]["fs"], "buffered_write") << writes[i];
    EXPECT_EQ(writes[i]["args"]["fs_offset"], i * 65536);
    EXPECT_EQ(writes[i]["args"]["ret"], 65536);
  }
  uint64_t read_bytes = 0, data_reads = 0;
  for (const auto& e : reads) {
    int64_t ret = e["args"]["ret"];
    if (ret <= 0)
      continue;  // the read at end of file
    EXPECT_EQ(e["args"]["fs"], "buffered_read") << e;
    EXPECT_EQ(e["args"]["first_page"], data_reads * 16);
    EXPECT_EQ(e["args"]["last_page"], data_reads * 16 + 15);
    read_bytes += ret;
    ++data_reads;
  }
  EXPECT_EQ(data_reads, 16u);
  EXPECT_EQ(read_bytes, 1u << 20);
  const auto& per_file = run.summary["files"][file]["FS"];
  EXPECT_EQ(per_file["read_bytes"], 1u << 20) << per_file;
  EXPECT_EQ(per_file["write_bytes"], 1u << 20) << per_file;
  EXPECT_EQ(run.summary["layers"]["FS"]["buffered_write"]["count"], 16) << run.summary["layers"]["FS"];
}

// fsync, fallocate, truncate and unlink, each charged to the process whose system call asked
// for it and named by its file (ext4 marks their start and end; xfs their start only, so they
// end with the system call).
TEST_P(fs_ops_test, FsyncFallocateTruncateAndUnlinkAreSeenWithTheirFile)
{
  loop_fs fs(dir.path, GetParam());
  std::string file = fs.mount_point() + "/shaped.bin";
  auto run = trace_command(
      dir,
      "sh -c " + shell_quote("fallocate -l 1MiB " + shell_quote(file) + " && truncate -s 4096 " +
                             shell_quote(file) + " && dd if=/dev/zero of=" + shell_quote(file) +
                             " bs=4k count=1 conv=fsync,notrunc status=none && rm " + shell_quote(file)));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, uint32_t> caller;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX" && e["args"].value("fhash", 0ull) == string_hash(file))
      caller.emplace(e["name"], e["pid"]);
  ASSERT_TRUE(caller.count("fallocate") && caller.count("ftruncate") && caller.count("fsync") &&
              caller.count("unlinkat"))
      << run.err;

  auto falloc = fs_events(run, "fallocate");
  ASSERT_EQ(falloc.size(), 1u);
  EXPECT_EQ(falloc[0]["pid"], caller["fallocate"]);
  EXPECT_EQ(falloc[0]["args"]["offset"], 0);
  EXPECT_EQ(falloc[0]["args"]["len"], 1 << 20);
  EXPECT_EQ(falloc[0]["args"]["fhash"], string_hash(file));
  std::vector<int64_t> cut;
  for (const auto& e : fs_events(run, "truncate"))
    if (e["pid"] == caller["ftruncate"])
      cut.push_back(e["args"]["size"]);
  EXPECT_EQ(cut, std::vector<int64_t>{4096});
  // Every fsync(2) of the file (dd's, and one by a tool before it) has its FS fsync beneath it.
  std::map<uint64_t, nlohmann::json> fs_syncs;
  for (const auto& e : fs_events(run, "fsync")) fs_syncs[e["args"]["p_idx"]] = e;
  int synced = 0;
  for (const auto& e : complete_events(run.trace)) {
    if (e["cat"] != "POSIX" || e["name"] != "fsync" || e["args"].value("fhash", 0ull) != string_hash(file))
      continue;
    ++synced;
    ASSERT_TRUE(fs_syncs.count(e["id"])) << "no FS fsync under " << e;
    const auto& s = fs_syncs[e["id"]];
    EXPECT_EQ(s["pid"], e["pid"]);
    EXPECT_EQ(s["args"]["fhash"], string_hash(file));
    EXPECT_EQ(s["args"]["ret"], 0);
  }
  EXPECT_GE(synced, 1);
  EXPECT_EQ(fs_syncs.size(), static_cast<size_t>(synced));
  auto unlinks = fs_events(run, "unlink");
  ASSERT_EQ(unlinks.size(), 1u);
  EXPECT_EQ(unlinks[0]["pid"], caller["unlinkat"]);
  EXPECT_EQ(unlinks[0]["args"]["fhash"], string_hash(file));
  EXPECT_EQ(unlinks[0]["args"]["ret"], 0);
}

// Profile mode counts a buffered call's FS part in the call's own slot (bpf/counters.h
// folded_fs) and splits it into the FS layer's counter in user space: the FS layer's counts and
// bytes, in all and per file, must be trace mode's on the same workload, and the system calls'.
TEST_P(fs_ops_test, ProfileModeCountsEachBufferedCallsFsPartAsTraceModeDoes)
{
  loop_fs fs(dir.path, GetParam());
  std::string file = fs.mount_point() + "/buffered.bin";
  std::string workload = write_then_read(file, "16k");
  auto traced = trace_command(dir, workload);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  std::filesystem::remove(dir / "trace.pfw.gz");
  std::filesystem::remove(dir / "summary.json");
  auto profiled = trace_command(dir, workload, "--mode profile --interval-ms 20");
  ASSERT_EQ(profiled.exit_code, 0) << profiled.err;
  for (const auto* run : {&traced, &profiled}) EXPECT_EQ(run->summary["events"]["lost"], 0);
  const auto& fs_traced = traced.summary["layers"]["FS"];
  const auto& fs_profiled = profiled.summary["layers"]["FS"];
  for (const char* op : {"buffered_read", "buffered_write"}) {
    ASSERT_TRUE(fs_traced.contains(op)) << fs_traced;
    ASSERT_TRUE(fs_profiled.contains(op)) << fs_profiled;
    EXPECT_EQ(fs_profiled[op]["count"], fs_traced[op]["count"]) << op;
    EXPECT_EQ(fs_profiled[op]["bytes"], fs_traced[op]["bytes"]) << op;
  }
  EXPECT_EQ(fs_profiled["buffered_write"]["count"], 16);
  EXPECT_EQ(profiled.summary["files"][file]["FS"]["read_bytes"], 1 << 20);
  EXPECT_EQ(profiled.summary["files"][file]["FS"], traced.summary["files"][file]["FS"]);
  for (const char* call : {"read", "write"})
    EXPECT_EQ(profiled.summary["files"][file]["POSIX"][call], traced.summary["files"][file]["POSIX"][call])
        << call;
}

INSTANTIATE_TEST_SUITE_P(fs, fs_ops_test, ::testing::Values("ext4", "xfs"));

TEST_F(runtime_test, Ext4FsyncWaitsForAJournalCommitChargedToTheWriter)
{
  loop_fs fs(dir.path, "ext4");
  std::string file = fs.mount_point() + "/synced.bin";
  auto run =
      trace_command(dir, "dd if=/dev/zero of=" + shell_quote(file) + " bs=1M count=8 conv=fsync status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  uint32_t dd = command_pid(run, "dd");
  auto syncs = fs_events(run, "fsync");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["pid"], dd);
  EXPECT_EQ(syncs[0]["args"]["fhash"], string_hash(file));
  EXPECT_EQ(syncs[0]["args"]["ret"], 0);
  // The commit happened inside the fsync, charged to the process that waited for it.
  auto commits = fs_events(run, "journal_commit");
  ASSERT_GE(commits.size(), 1u);
  uint64_t sync_start = syncs[0]["ts"], sync_end = sync_start + syncs[0]["dur"].get<uint64_t>();
  for (const auto& c : commits) {
    EXPECT_EQ(c["pid"], dd);
    EXPECT_GE(c["ts"].get<uint64_t>(), sync_start);
    EXPECT_LE(c["ts"].get<uint64_t>() + c["dur"].get<uint64_t>(), sync_end);
    EXPECT_GT(c["args"]["blocks"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["args"]["dev"], (fs.device_major() << 20) | fs.device_minor());
  }
}

// A commit no fsync waits for (here sync(1)'s) is charged to the process whose changes it
// writes: the first traced one that started a journal handle in the committed transaction.
TEST_F(runtime_test, Ext4CommitsWithoutAnFsyncAreChargedToTheWriter)
{
  loop_fs fs(dir.path, "ext4");
  std::string file = fs.mount_point() + "/unsynced.bin";
  auto run = trace_command(dir, "sh -c " + shell_quote("dd if=/dev/zero of=" + shell_quote(file) +
                                                       " bs=64k count=16 status=none && sync"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  uint32_t dd = command_pid(run, "dd");
  ASSERT_NE(dd, 0u);
  auto commits = fs_events(run, "journal_commit");
  ASSERT_GE(commits.size(), 1u);
  for (const auto& c : commits) {
    EXPECT_EQ(c["pid"], dd) << c;
    EXPECT_GT(c["args"]["blocks"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["args"]["dev"], (fs.device_major() << 20) | fs.device_minor());
    EXPECT_FALSE(c["args"].contains("level")) << "no call of the writer waited for it";
  }
}

// ext4 frees an unlinked file's blocks in the unlinking call: a truncate to 0 under it.
TEST_F(runtime_test, Ext4UnlinkTruncatesTheFileInTheUnlinkingCall)
{
  loop_fs fs(dir.path, "ext4");
  std::string file = fs.mount_point() + "/doomed.bin";
  auto run = trace_command(
      dir, "sh -c " + shell_quote("fallocate -l 1MiB " + shell_quote(file) + " && rm " + shell_quote(file)));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  uint32_t rm = command_pid(run, "rm");
  ASSERT_NE(rm, 0u);
  std::vector<int64_t> cut;
  for (const auto& e : fs_events(run, "truncate"))
    if (e["pid"] == rm)
      cut.push_back(e["args"]["size"]);
  EXPECT_EQ(cut, std::vector<int64_t>{0});
}

}  // namespace
}  // namespace dc::test
