// MPI-IO and parallel HDF5, the real libraries from Debian under a real mpirun: per rank one
// collective H5Dwrite containing MPI_File_write_at_all containing the pwrite64 calls that
// write the data, and the data bytes equal to what the ranks wrote.
#include <fstream>
#include <map>
#include <set>

#include "core/hash.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr uint64_t per_rank = 1 << 20;  // doubles per rank: 8 MiB each

TEST_F(runtime_test, Hdf5DwriteContainsMpiWriteAtAllContainsThePwrites)
{
  std::string config = dir / "probes.yaml", data = dir / "data.h5";
  std::ofstream(config) << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n"
                           "  - include: " DATACRUMBS_SOURCE_DIR
                           "/etc/datacrumbs/configs/mpi.yaml\n"
                           "  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/hdf5.yaml\n";
  auto run = trace_command(
      dir,
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --oversubscribe "
      "--mca btl self,vader " HDF5_MPI_APP_BIN " " +
          shell_quote(data) + " " + std::to_string(per_rank) + " >/dev/null",
      "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.summary["events"]["lost"], 0);

  auto events = complete_events(run.trace);
  std::map<uint64_t, nlohmann::json> by_id;
  for (const auto& e : events)
    if (e["args"].contains("level"))
      by_id[e["id"]] = e;
  auto parent_of = [&](const nlohmann::json& e) {
    auto it = by_id.find(e["args"]["p_idx"].get<int64_t>() < 0 ? 0 : e["args"]["p_idx"].get<uint64_t>());
    return it == by_id.end() ? nlohmann::json() : it->second;
  };

  std::map<uint32_t, nlohmann::json> dwrite_of;  // rank pid -> its H5Dwrite
  int creates = 0;
  for (const auto& e : events) {
    if (e["cat"] == "HDF5" && e["name"] == "H5Dwrite") {
      EXPECT_EQ(e["args"]["level"], 1) << e;
      EXPECT_EQ(e["args"]["ret"], 0) << e;
      EXPECT_TRUE(dwrite_of.emplace(e["pid"].get<uint32_t>(), e).second) << "two H5Dwrite in one rank";
    }
    if (e["cat"] == "HDF5" && e["name"] == "H5Fcreate") {
      ++creates;
      EXPECT_EQ(e["args"]["fhash"], string_hash(data)) << e;
    }
  }
  ASSERT_EQ(dwrite_of.size(), 2u);
  EXPECT_EQ(creates, 2);

  int collective = 0;
  uint64_t data_bytes = 0;
  for (const auto& e : events) {
    if (e["cat"] == "MPI" && e["name"] == "MPI_File_write_at_all") {
      ++collective;
      auto parent = parent_of(e);
      ASSERT_FALSE(parent.is_null()) << e;
      EXPECT_EQ(parent["id"], dwrite_of[e["pid"]]["id"]) << e;
      EXPECT_EQ(e["args"]["level"], 2);
      EXPECT_EQ(e["args"]["count"], per_rank * sizeof(double));
    }
    if (e["cat"] == "POSIX" && (e["name"] == "pwrite64" || e["name"] == "pwritev" || e["name"] == "write")) {
      auto parent = parent_of(e);
      if (parent.is_null() || parent["name"] != "MPI_File_write_at_all")
        continue;
      EXPECT_EQ(e["args"]["level"], 3) << e;
      EXPECT_EQ(e["args"]["fhash"], string_hash(data)) << e;
      EXPECT_EQ(e["pid"], parent["pid"]);
      data_bytes += e["args"]["ret"].get<uint64_t>();
    }
  }
  EXPECT_EQ(collective, 2);
  // What the aggregators wrote inside the collective call is exactly the dataset's data.
  EXPECT_EQ(data_bytes, 2 * per_rank * sizeof(double));
}

}  // namespace
}  // namespace dc::test
