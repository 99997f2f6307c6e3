// Parsing the /proc and /sys texts snapshots are made of, on recorded contents.
#include <gtest/gtest.h>

#include <string>

#include "sink/snapshot_parse.h"

namespace dc {
namespace {

using namespace std::string_literals;

TEST(SnapshotParse, CpuinfoCountsProcessorsAndNamesTheFirstModel)
{
  std::string text =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
      "flags\t\t: fpu vme\n\nprocessor\t: 1\nmodel name\t: Other\n\nprocessor\t: 2\n";
  cpu_info info = parse_cpuinfo(text);
  EXPECT_EQ(info.count, 3u);
  EXPECT_EQ(info.model, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
  // arm64 names no model: the count still holds.
  EXPECT_EQ(parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n").model, "");
  EXPECT_EQ(parse_cpuinfo("").count, 0u);
}

TEST(SnapshotParse, MeminfoInBytes)
{
  std::string text = "MemTotal:       16318532 kB\nMemFree:         1234 kB\nHugePages_Total:       0\n";
  EXPECT_EQ(parse_meminfo_bytes(text, "MemTotal"), 16318532ull * 1024);
  EXPECT_EQ(parse_meminfo_bytes(text, "MemFree"), 1234ull * 1024);
  EXPECT_EQ(parse_meminfo_bytes(text, "HugePages_Total"), 0u);
  EXPECT_FALSE(parse_meminfo_bytes(text, "Mem").has_value());
  EXPECT_FALSE(parse_meminfo_bytes("MemTotal: lots kB\n", "MemTotal").has_value());
}

TEST(SnapshotParse, OsReleaseUnquotes)
{
  std::string text =
      "NAME=\"Debian GNU/Linux\"\nVERSION_ID='12'\nID=debian\nPRETTY_NAME=\"Debian GNU/Linux 12 "
      "(bookworm)\"\n";
  EXPECT_EQ(parse_os_release(text, "PRETTY_NAME"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(parse_os_release(text, "VERSION_ID"), "12");
  EXPECT_EQ(parse_os_release(text, "ID"), "debian");
  EXPECT_FALSE(parse_os_release(text, "VERSION").has_value());
}

TEST(SnapshotParse, ActiveScheduler)
{
  EXPECT_EQ(parse_scheduler("mq-deadline kyber [bfq] none\n"), "bfq");
  EXPECT_EQ(parse_scheduler("[none] mq-deadline\n"), "none");
  EXPECT_EQ(parse_scheduler("none\n"), "none");
  EXPECT_EQ(parse_scheduler(""), "");
}

TEST(SnapshotParse, MountsUndoOctalEscapes)
{
  std::string text =
      "/dev/nvme0n1p2 / ext4 rw,relatime,errors=remount-ro 0 0\n"
      "tmpfs /mnt/with\\040space tmpfs rw,nosuid,size=1024k 0 0\n"
      "server:/export /mnt/back\\134slash nfs4 rw,vers=4.2 0 0\n"
      "short line\n";
  auto mounts = parse_mounts(text);
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[0].device, "/dev/nvme0n1p2");
  EXPECT_EQ(mounts[0].mount_point, "/");
  EXPECT_EQ(mounts[0].fs_type, "ext4");
  EXPECT_EQ(mounts[0].options, "rw,relatime,errors=remount-ro");
  EXPECT_EQ(mounts[1].mount_point, "/mnt/with space");
  EXPECT_EQ(mounts[2].mount_point, "/mnt/back\\slash");
  EXPECT_EQ(mounts[2].fs_type, "nfs4");
}

TEST(SnapshotParse, NulSeparatedFields)
{
  EXPECT_EQ(split_nul("sh\0-c\0echo a b\0"s), (std::vector<std::string>{"sh", "-c", "echo a b"}));
  EXPECT_EQ(split_nul("no-terminator"), (std::vector<std::string>{"no-terminator"}));
  EXPECT_TRUE(split_nul("").empty());
}

TEST(SnapshotParse, EnvironmentKeepsJobAndRankVariablesOnly)
{
  std::vector<std::string> env = {"PATH=/usr/bin",        "SLURM_JOB_ID=4242", "PMIX_RANK=3",
                                  "SECRET_TOKEN=hunter2", "OMP_NUM_THREADS=8", "NOEQUALS",
                                  "FLUX_TASK_RANK=x"};
  nlohmann::json kept = kept_environment(env);
  EXPECT_EQ(
      kept,
      (nlohmann::json{
          {"SLURM_JOB_ID", "4242"}, {"PMIX_RANK", "3"}, {"OMP_NUM_THREADS", "8"}, {"FLUX_TASK_RANK", "x"}}));
  EXPECT_EQ(rank_of(kept), 3);
  // Open MPI's own variable wins over the scheduler's; a rank that is not a number is none.
  EXPECT_EQ(rank_of({{"SLURM_PROCID", "7"}, {"OMPI_COMM_WORLD_RANK", "1"}}), 1);
  EXPECT_EQ(rank_of({{"FLUX_TASK_RANK", "x"}}), std::nullopt);
  EXPECT_EQ(rank_of(nlohmann::json::object()), std::nullopt);
}

TEST(SnapshotParse, StatusIdsAreTheRealOnes)
{
  std::string text = "Name:\tsh\nPPid:\t812\nUid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t100\n";
  process_ids ids = parse_status(text);
  EXPECT_EQ(ids.uid, 1000);
  EXPECT_EQ(ids.gid, 100);
  EXPECT_EQ(ids.ppid, 812);
  EXPECT_EQ(parse_status("").uid, -1);
}

TEST(SnapshotParse, CgroupPrefersTheUnifiedHierarchy)
{
  EXPECT_EQ(parse_cgroup("0::/system.slice/slurmstepd.scope/job_42\n"),
            "/system.slice/slurmstepd.scope/job_42");
  EXPECT_EQ(parse_cgroup("12:memory:/user/a\n0::/unified/b\n"), "/unified/b");
  EXPECT_EQ(parse_cgroup("4:cpu,cpuacct:/slurm/uid_0/job_1\n2:memory:/x\n"), "/slurm/uid_0/job_1");
  EXPECT_EQ(parse_cgroup(""), "");
}

}  // namespace
}  // namespace dc
