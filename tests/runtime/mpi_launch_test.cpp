// MPI under the tracer: each rank's process_name line and summary entry carry its rank and the
// job size (from mpirun's environment), and holding the new processes for their user-space
// probes does not disturb mpirun (before, the SIGCONT that released a forked child ran mpirun's
// inherited handler in it, and mpirun printed "Forwarding signal 18 to job" once per rank).
#include <time.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "runtime/deploy_fixture.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

TEST_F(runtime_test, MpiRanksAreLabelledAndMpirunSeesNoForwardedSignal)
{
  std::string config = dir / "probes.yaml";
  // User-space functions are probed, so new processes are held.
  std::ofstream(config) << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n"
                           "  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/mpi.yaml\n";
  auto run = trace_command(
      dir,
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --oversubscribe "
      "--mca btl self,vader " HDF5_MPI_APP_BIN " " +
          shell_quote(dir / "data.h5") + " 1024 >" + shell_quote(dir / "ranks.txt"),
      "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("Forwarding signal"), std::string::npos) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);

  std::map<int, uint32_t> pid_of_rank;
  for (const auto& j : run.trace.lines) {
    if (j["ph"] != "M" || j["name"] != "process_name" || !j["args"].contains("rank"))
      continue;
    EXPECT_EQ(j["args"]["size"], 2) << j;
    EXPECT_EQ(j["args"]["name"], "hdf5_mpi_app") << j;
    pid_of_rank[j["args"]["rank"].get<int>()] = j["pid"].get<uint32_t>();
  }
  ASSERT_EQ(pid_of_rank.size(), 2u);
  EXPECT_TRUE(pid_of_rank.contains(0) && pid_of_rank.contains(1));
  EXPECT_NE(pid_of_rank[0], pid_of_rank[1]);
  // Each rank says its pid (hdf5_mpi_app prints "rank R pid P").
  std::string ranks = read_file(dir / "ranks.txt");
  for (auto [rank, pid] : pid_of_rank) {
    EXPECT_NE(ranks.find("rank " + std::to_string(rank) + " pid " + std::to_string(pid)), std::string::npos)
        << ranks;
    EXPECT_EQ(run.summary["processes"][std::to_string(pid)]["rank"], rank);
    EXPECT_EQ(run.summary["processes"][std::to_string(pid)]["size"], 2);
  }
  // The host clock line: the offset the timestamps were converted with, as this host has it now.
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  int64_t offset_now = (real.tv_sec - mono.tv_sec) * 1'000'000'000ll + (real.tv_nsec - mono.tv_nsec);
  int clocks = 0;
  for (const auto& j : run.trace.lines)
    if (j["ph"] == "M" && j["name"] == "clock") {
      ++clocks;
      EXPECT_LT(std::llabs(j["args"]["realtime_minus_monotonic_ns"].get<int64_t>() - offset_now),
                1'000'000'000ll)
          << j;
    }
  EXPECT_EQ(clocks, 1);
  int unlabelled_ranks = 0;  // mpirun itself is no rank
  for (const auto& [pid, p] : run.summary["processes"].items())
    unlabelled_ranks += !p.contains("rank") && p["command"].get<std::string>().starts_with(HDF5_MPI_APP_BIN);
  EXPECT_EQ(unlabelled_ranks, 0);
}

// Ranks that are gone before the collector reads their exec record keep their label: the kernel
// copies the launcher variables at the exec itself (/proc/PID/environ is empty by then). Four
// ranks that exit at once, and five processes that exec with PMI variables among many others and
// exit; each twice, so a label that depends on luck shows.
TEST_F(runtime_test, RanksThatExitAtOnceAreStillLabelled)
{
  std::string padding;  // the variables come after 100 others in the environment
  for (int i = 0; i < 100; ++i) padding += "DC_PAD_" + std::to_string(i) + "=" + std::string(20, 'x') + " ";
  for (int round = 0; round < 2; ++round) {
    std::string script =
        "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 4 "
        "--oversubscribe --mca btl self,vader /bin/true && for i in 1 2 3 4 5; do env " +
        padding + "PMI_RANK=3 PMI_SIZE=8 /bin/true; done";
    auto run = trace_command(dir, "sh -c " + shell_quote(script), "--layers syscall");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.summary["events"]["lost"], 0);
    std::map<int, int> mpirun_ranks;  // rank -> processes (size 4)
    int pmi_ranks = 0, unlabelled = 0;
    for (const auto& [pid, p] : run.summary["processes"].items()) {
      if (p["command"] != "/bin/true")
        continue;
      if (!p.contains("rank")) {
        ++unlabelled;
      } else if (p["size"] == 4) {
        ++mpirun_ranks[p["rank"].get<int>()];
      } else {
        EXPECT_EQ(p["rank"], 3) << p;
        EXPECT_EQ(p["size"], 8) << p;
        ++pmi_ranks;
      }
    }
    EXPECT_EQ(mpirun_ranks, (std::map<int, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}})) << "round " << round;
    EXPECT_EQ(pmi_ranks, 5) << "round " << round;
    EXPECT_EQ(unlabelled, 0) << "round " << round;
  }
}

// The documented way with a daemon: `mpirun -np 2 datacrumbs_wrap ./app`. Both ranks register
// and are labelled; mpirun itself (not wrapped) is not traced.
TEST_F(deploy_test, MpirunOfTheWrapperTracesEachRankLabelled)
{
  auto info = start_daemon(probes, "mpi1");
  ASSERT_FALSE(info.is_null());
  std::string data = dir / "wrapped.h5";
  ASSERT_EQ(
      run_shell("env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --oversubscribe "
                "--mca btl self,vader " +
                bin_dir + "/datacrumbs_wrap " HDF5_MPI_APP_BIN " " + shell_quote(data) + " 1024 >" +
                shell_quote(dir / "ranks.txt") + " 2>" + shell_quote(dir / "mpirun.err")),
      0)
      << read_file(dir / "mpirun.err");
  EXPECT_EQ(read_file(dir / "mpirun.err").find("Forwarding signal"), std::string::npos);
  stop_daemon("mpi1");
  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  EXPECT_TRUE(trace.closed);
  std::map<int, uint32_t> pid_of_rank;
  for (const auto& j : trace.lines) {
    if (j["ph"] == "M" && j["name"] == "process_name") {
      EXPECT_NE(j["args"]["name"], "mpirun") << "mpirun was not wrapped: " << j;
      if (j["args"].contains("rank")) {
        EXPECT_EQ(j["args"]["size"], 2) << j;
        pid_of_rank[j["args"]["rank"].get<int>()] = j["pid"].get<uint32_t>();
      }
    }
  }
  ASSERT_EQ(pid_of_rank.size(), 2u);
  std::string ranks = read_file(dir / "ranks.txt");
  for (auto [rank, pid] : pid_of_rank)
    EXPECT_NE(ranks.find("rank " + std::to_string(rank) + " pid " + std::to_string(pid)), std::string::npos)
        << ranks;
}

}  // namespace
}  // namespace dc::test
