// MPI under the tracer: each rank's process_name line and summary entry carry its rank and the
// job size (from mpirun's environment), and holding the new processes for their user-space
// probes does not disturb mpirun (before, the SIGCONT that released a forked child ran mpirun's
// inherited handler in it, and mpirun printed "Forwarding signal 18 to job" once per rank).
#include <fstream>
#include <map>

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
  int unlabelled_ranks = 0;  // mpirun itself is no rank
  for (const auto& [pid, p] : run.summary["processes"].items())
    unlabelled_ranks += !p.contains("rank") && p["command"].get<std::string>().starts_with(HDF5_MPI_APP_BIN);
  EXPECT_EQ(unlabelled_ranks, 0);
}

}  // namespace
}  // namespace dc::test
