// A real storage system under load: PostgreSQL (Debian's) initialised, loaded and driven by
// pgbench, all under one traced command. Its processes get the PostgreSQL row with plausible
// numbers, and nothing is lost. docs/storage-systems.md records a run.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

std::string postgres_bin()
{
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql"))
    if (std::filesystem::exists(e.path() / "bin/pgbench"))
      return (e.path() / "bin").string();
  return "";
}

TEST_F(runtime_test, PostgresUnderPgbenchGetsItsAmplificationRow)
{
  std::string bin = postgres_bin();
  ASSERT_FALSE(bin.empty()) << "PostgreSQL is not installed (scripts/install-deps.sh installs it)";
  std::string data = dir / "pg", script = dir / "pg.sh";
  ASSERT_EQ(run_shell("mkdir " + shell_quote(data) + " && chown postgres " + shell_quote(data) +
                      " && chmod 755 " + shell_quote(dir.path)),
            0);
  std::string pg = "-h " + data + " postgres";
  std::ofstream(script) << "set -e\n"
                        << bin << "/initdb -D " << data << "/db >/dev/null\n"
                        << bin << "/pg_ctl -D " << data << "/db -o \"-k " << data
                        << " -c listen_addresses=''\" -l " << data << "/log -w start >/dev/null\n"
                        << bin << "/pgbench -i -s 2 " << pg << " >/dev/null 2>&1\n"
                        << bin << "/pgbench -c 2 -T 5 " << pg << " >" << data << "/bench.txt 2>&1\n"
                        << bin << "/pg_ctl -D " << data << "/db -w stop >/dev/null\n";
  auto run =
      trace_command(dir, "setpriv --reuid=postgres --regid=postgres --init-groups sh " + shell_quote(script));
  ASSERT_EQ(run.exit_code, 0) << run.err << read_file(data + "/log");
  EXPECT_NE(read_file(data + "/bench.txt").find("tps"), std::string::npos);
  // Nothing is lost. On this project's machines the kernel runs no BPF program for a block
  // completion whose softirq lands on the sandbox agent's threads (PID 1), which PostgreSQL's
  // fdatasync storm on the root disk meets in about half the runs (docs/reliability.md): those
  // requests are traced without their end (lost_block_end_unseen, not events lost).
  const auto& events = run.summary["events"];
  EXPECT_EQ(events["lost"], 0) << events;
  if (uint64_t untimed = events["lost_block_end_unseen"])
    std::fprintf(stderr, "block requests traced without their end: %llu of %llu\n",
                 static_cast<unsigned long long>(untimed),
                 static_cast<unsigned long long>(layer_total(run.summary, "BLOCK", "count")));
  ASSERT_TRUE(run.summary["systems"].contains("PostgreSQL")) << run.summary["systems"];
  const auto& row = run.summary["systems"]["PostgreSQL"];
  EXPECT_GE(row["processes"].get<int>(), 3);  // postmaster, checkpointer, backends, ...
  EXPECT_GT(row["SYS_W"].get<uint64_t>(), 1000u);
  EXPECT_GT(row["BLK_W"].get<uint64_t>(), 0u);
  double w_amp = row["W_AMP"].get<double>();
  EXPECT_GT(w_amp, 0.05);  // WAL and data files reach the device...
  EXPECT_LT(w_amp, 20.0);  // ...with a plausible factor
  // The filesystem saw those writes go through the page cache: one FS write per data-moving
  // write call at most (tmpfs and zero-byte writes have none).
  EXPECT_GT(row["VFS_W"].get<uint64_t>(), 0u);
  EXPECT_LE(row["VFS_W"].get<uint64_t>(), row["SYS_W"].get<uint64_t>());
  EXPECT_LE(row["VFS_R"].get<uint64_t>(), row["SYS_R"].get<uint64_t>());
  EXPECT_FALSE(run.summary["systems"].contains("pgbench"));
}

}  // namespace
}  // namespace dc::test
