// The filesystem layer against what the workload asked of the filesystem: direct I/O bytes,
// fsync and the journal commits it waited for, fallocate/truncate/unlink, on a loop device.
#include <map>

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
  int requests = 0;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "BLOCK" && e["name"] == "write" && e["args"].value("fhash", 0ull) == string_hash(file)) {
      ++requests;
      expect_under_a_write(e);
    }
  EXPECT_GE(requests, 16);
}

INSTANTIATE_TEST_SUITE_P(fs, fs_dio_test, ::testing::Values("ext4", "xfs"));

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

TEST_F(runtime_test, Ext4FallocateTruncateAndUnlinkAreSeenWithTheirFile)
{
  loop_fs fs(dir.path, "ext4");
  std::string file = fs.mount_point() + "/shaped.bin";
  auto run = trace_command(
      dir, "sh -c " + shell_quote("fallocate -l 1MiB " + shell_quote(file) + " && truncate -s 4096 " +
                                  shell_quote(file) + " && rm " + shell_quote(file)));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Each filesystem operation belongs to the process whose system call asked for it.
  std::map<std::string, uint32_t> caller;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX" && e["args"].value("fhash", 0ull) == string_hash(file))
      caller.emplace(e["name"], e["pid"]);
  ASSERT_TRUE(caller.count("fallocate") && caller.count("ftruncate") && caller.count("unlinkat")) << run.err;

  auto falloc = fs_events(run, "fallocate");
  ASSERT_EQ(falloc.size(), 1u);
  EXPECT_EQ(falloc[0]["pid"], caller["fallocate"]);
  EXPECT_EQ(falloc[0]["args"]["offset"], 0);
  EXPECT_EQ(falloc[0]["args"]["len"], 1 << 20);
  // truncate -s 4096 cuts the file once; the unlink frees what is left (a truncate to 0).
  std::map<uint32_t, std::vector<int64_t>> truncated_to;
  for (const auto& e : fs_events(run, "truncate")) truncated_to[e["pid"]].push_back(e["args"]["size"]);
  EXPECT_EQ(truncated_to[caller["ftruncate"]], std::vector<int64_t>{4096});
  EXPECT_EQ(truncated_to[caller["unlinkat"]], std::vector<int64_t>{0});
  auto unlinks = fs_events(run, "unlink");
  ASSERT_EQ(unlinks.size(), 1u);
  EXPECT_EQ(unlinks[0]["pid"], caller["unlinkat"]);
  for (const auto& e : falloc) EXPECT_EQ(e["args"]["fhash"], string_hash(file));
  for (const auto& e : unlinks) {
    EXPECT_EQ(e["args"]["fhash"], string_hash(file));
    EXPECT_EQ(e["args"]["ret"], 0);
  }
}

}  // namespace
}  // namespace dc::test
