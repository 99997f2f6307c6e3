// MPI-IO and parallel HDF5, the real libraries from Debian under a real mpirun: per rank one
// collective H5Dwrite containing MPI_File_write_at_all containing the pwrite64 calls that
// write the data, and the data bytes equal to what the ranks wrote; the same whether h5pcc
// linked HDF5 as a shared library or into the program itself.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/hash.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr uint64_t per_rank = 1 << 20;  // doubles per rank: 8 MiB each

const std::string shipped_hdf5 = "  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/hdf5.yaml\n";

// The HDF5 and MPI calls of one run, by name, after checking their nesting; `app` built by h5pcc,
// `hdf5_entry` the config's HDF5 entry.
std::map<std::string, int> check_hdf5_mpi_run(const scratch_dir& dir, const std::string& app, traced_run& run,
                                              const std::string& hdf5_entry = shipped_hdf5)
{
  std::string config = dir / "probes.yaml", data = dir / "data.h5";
  std::ofstream(config) << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n"
                           "  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/mpi.yaml\n"
                        << hdf5_entry;
  run = trace_command(
      dir,
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --oversubscribe "
      "--mca btl self,vader " +
          app + " " + shell_quote(data) + " " + std::to_string(per_rank) + " >/dev/null",
      "--config " + shell_quote(config));
  std::map<std::string, int> calls;
  EXPECT_EQ(run.exit_code, 0) << run.err;
  if (run.exit_code != 0)
    return calls;
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
    if (e["cat"] == "HDF5" || e["cat"] == "MPI")
      ++calls[e["name"]];
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
  EXPECT_EQ(dwrite_of.size(), 2u);
  EXPECT_EQ(creates, 2);

  int collective = 0;
  uint64_t data_bytes = 0;
  for (const auto& e : events) {
    if (e["cat"] == "MPI" && e["name"] == "MPI_File_write_at_all") {
      ++collective;
      auto parent = parent_of(e);
      EXPECT_FALSE(parent.is_null()) << e;
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
  return calls;
}

// The summary's word on where the HDF5 entry was found: the object that defines H5Dwrite in
// the two ranks, and mpirun as the one process in which it found nothing.
void expect_hdf5_found(const traced_run& run, const std::string& in_ranks)
{
  nlohmann::json hdf5;
  for (const auto& e : run.summary["uprobes"]["entries"])
    if (e["name"] == "HDF5")
      hdf5 = e;
  ASSERT_FALSE(hdf5.is_null()) << run.summary["uprobes"];
  bool found = false;
  for (const auto& w : hdf5["found_in"])
    if (w["object"] == in_ranks)
      found = !w.contains("pids") || w["pids"].size() == 2;
  EXPECT_TRUE(found) << in_ranks << " " << hdf5;
  ASSERT_EQ(hdf5["nothing_in"].size(), 1u) << hdf5;
  EXPECT_EQ(hdf5["nothing_in"][0]["comm"], "mpirun") << hdf5;
  EXPECT_NE(run.err.find("uprobe entry 'HDF5': found in"), std::string::npos) << run.err;
}

TEST_F(runtime_test, Hdf5DwriteContainsMpiWriteAtAllContainsThePwritesLinkedEitherWay)
{
  traced_run shared, linked_in;
  scratch_dir other;
  auto shared_calls = check_hdf5_mpi_run(dir, H5PCC_SHARED_APP, shared);
  auto static_calls = check_hdf5_mpi_run(other, H5PCC_STATIC_APP, linked_in);
  EXPECT_GE(shared_calls["H5Dwrite"], 2);
  EXPECT_EQ(shared_calls, static_calls);
  // `h5pcc -shlib` maps HDF5's library (the config's path resolves to libhdf5_openmpi.so.*).
  std::string library = std::filesystem::canonical("/usr/lib/x86_64-linux-gnu/hdf5/openmpi/libhdf5.so");
  expect_hdf5_found(shared, library);
  expect_hdf5_found(linked_in, H5PCC_STATIC_APP);
}

// An HDF5 entry naming a library this machine does not have: the program that linked HDF5 in
// still gets its calls traced (new probe indices the decoder learns as events name them).
TEST_F(runtime_test, AnEntryWhoseLibraryIsMissingIsFoundInTheProgramThatLinkedItIn)
{
  traced_run shared, linked_in;
  scratch_dir other;
  auto shared_calls = check_hdf5_mpi_run(dir, H5PCC_SHARED_APP, shared);
  auto static_calls =
      check_hdf5_mpi_run(other, H5PCC_STATIC_APP, linked_in,
                         "  - name: HDF5\n    probe: uprobe\n    file: /nonexistent/libhdf5.so\n"
                         "    regex: \"H5(F|D|A|G|O)[a-z].*\"\n");
  EXPECT_EQ(shared_calls, static_calls);
  EXPECT_NE(linked_in.err.find("/nonexistent/libhdf5.so"), std::string::npos) << linked_in.err;
  expect_hdf5_found(linked_in, H5PCC_STATIC_APP);
}

}  // namespace
}  // namespace dc::test
