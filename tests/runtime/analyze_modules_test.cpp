// Darshan's STDIO, MPIIO, H5F and H5D counters from real traces: a stdio workload whose every
// call is known (tests/runtime/stdio_workload.c) and parallel HDF5 over MPI-IO under a real
// mpirun (tests/runtime/hdf5_mpi_app.c), traced by `datacrumbs run` with the stdio, MPI and
// HDF5 probes, analyzed by `datacrumbs analyze`.
#include <fstream>
#include <map>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

nlohmann::json entry(const nlohmann::json& files, const std::string& module, const std::string& path)
{
  for (const auto& f : files)
    if (f["module"] == module && f["file"] == path)
      return f;
  return nullptr;
}

nlohmann::json analyze_report(const scratch_dir& dir)
{
  std::string json = dir / "report.json";
  EXPECT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " analyze --no-progress " +
                      shell_quote(dir / "trace.pfw.gz") + " --json " + shell_quote(json) + " > /dev/null"),
            0);
  return nlohmann::json::parse(read_file(json));
}

TEST_F(runtime_test, StdioCountersOfAKnownWorkload)
{
  std::string config = dir / "probes.yaml";
  std::ofstream(config) << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n"
                           "  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/stdio.yaml\n";
  auto run = trace_command(dir, std::string(STDIO_WORKLOAD_BIN) + " " + shell_quote(dir.path),
                           "--config " + shell_quote(config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.summary["events"]["lost"], 0);
  nlohmann::json report = analyze_report(dir);
  const std::string path = dir / "stdio.dat", path2 = dir / "fdopen.dat";

  nlohmann::json f = entry(report["files"], "STDIO", path);
  ASSERT_FALSE(f.is_null()) << report["files"].dump(1);
  const nlohmann::json want = {{"STDIO_OPENS", 1},
                               {"STDIO_FDOPENS", 0},
                               {"STDIO_READS", 4},    // 4000, 4000, 1000, 5 x 10
                               {"STDIO_WRITES", 12},  // 10 x 1000, the fprintf, 500 at the end
                               {"STDIO_SEEKS", 4},    // SEEK_SET, SEEK_CUR, rewind, SEEK_END
                               {"STDIO_FLUSHES", 1},
                               {"STDIO_BYTES_WRITTEN", 10504},
                               {"STDIO_BYTES_READ", 9050},
                               {"STDIO_MAX_BYTE_READ", 9099},
                               {"STDIO_MAX_BYTE_WRITTEN", 10503}};  // ftell after SEEK_END: 10004
  EXPECT_EQ(f["counters"], want);
  EXPECT_EQ(f["unknown_offset_ops"], 0);
  EXPECT_EQ(f["processes"], 1);
  // The system calls beneath the stdio calls are the file's whole POSIX traffic.
  nlohmann::json posix = entry(report["files"], "POSIX", path);
  ASSERT_FALSE(posix.is_null());
  EXPECT_EQ(f["posix_bytes_written"], posix["counters"]["POSIX_BYTES_WRITTEN"]);
  EXPECT_EQ(f["posix_bytes_read"], posix["counters"]["POSIX_BYTES_READ"]);
  EXPECT_EQ(f["posix_bytes_written"], 10504);
  for (const char* t : {"STDIO_F_OPEN_START_TIMESTAMP", "STDIO_F_CLOSE_END_TIMESTAMP", "STDIO_F_READ_TIME",
                        "STDIO_F_WRITE_TIME", "STDIO_F_META_TIME"})
    EXPECT_GT(f["fcounters"][t].get<double>(), 0.0) << t;
  EXPECT_LE(f["fcounters"]["STDIO_F_OPEN_START_TIMESTAMP"].get<double>(),
            f["fcounters"]["STDIO_F_WRITE_START_TIMESTAMP"].get<double>());
  EXPECT_LE(f["fcounters"]["STDIO_F_WRITE_END_TIMESTAMP"].get<double>(),
            f["fcounters"]["STDIO_F_CLOSE_END_TIMESTAMP"].get<double>());

  // fdopen: charged through the fcntl glibc makes inside it; the descriptor's position is not
  // the stream's to know, so the write is at an unknown offset.
  nlohmann::json g = entry(report["files"], "STDIO", path2);
  ASSERT_FALSE(g.is_null()) << report["files"].dump(1);
  EXPECT_EQ(g["counters"]["STDIO_OPENS"], 1);
  EXPECT_EQ(g["counters"]["STDIO_FDOPENS"], 1);
  EXPECT_EQ(g["counters"]["STDIO_WRITES"], 1);
  EXPECT_EQ(g["counters"]["STDIO_BYTES_WRITTEN"], 100);
  EXPECT_EQ(g["counters"]["STDIO_MAX_BYTE_WRITTEN"], 0);
  EXPECT_EQ(g["unknown_offset_ops"], 1);
  EXPECT_EQ(g["posix_bytes_written"], 100);
  EXPECT_EQ(report["files_unattributed"]["STDIO"], 0);

  // The text report and files.csv carry them too.
  std::string csv = dir / "csv";
  ASSERT_EQ(
      run_shell(std::string(DATACRUMBS_BIN) + " analyze --no-progress " + shell_quote(dir / "trace.pfw.gz") +
                " --csv " + shell_quote(csv) + " > " + shell_quote(dir / "report.txt")),
      0);
  std::string text = read_file(dir / "report.txt");
  EXPECT_NE(text.find("file (STDIO, MPI-IO, HDF5)"), std::string::npos) << text;
  std::string files_csv = read_file(csv + "/files.csv");
  EXPECT_NE(files_csv.find("STDIO_BYTES_WRITTEN"), std::string::npos);
  EXPECT_NE(files_csv.find(path + ",STDIO,"), std::string::npos);
}

TEST_F(runtime_test, MpiioH5fAndH5dCountersOfParallelHdf5)
{
  constexpr uint64_t per_rank = 1 << 20;  // doubles per rank: 8 MiB each
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
  ASSERT_EQ(run.summary["events"]["lost"], 0);
  // The trace's own MPI-IO calls on the file (HDF5's metadata writes vary in number): truth for
  // the counts HDF5 decides.
  std::map<std::string, int> calls;
  uint64_t elements_written = 0;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "MPI") {
      ++calls[e["name"]];
      if (e["name"].get<std::string>().starts_with("MPI_File_write"))
        elements_written += e["args"]["count"].get<uint64_t>();
    }
  nlohmann::json report = analyze_report(dir);
  std::map<int64_t, int64_t> ranks;
  for (const auto& p : report["run"]["processes"])
    if (p["name"] == "hdf5_mpi_app")
      ranks[p["rank"].get<int64_t>()] = p["size"].get<int64_t>();
  EXPECT_EQ(ranks, (std::map<int64_t, int64_t>{{0, 2}, {1, 2}}));

  nlohmann::json m = entry(report["files"], "MPIIO", data);
  ASSERT_FALSE(m.is_null()) << report["files"].dump(1);
  EXPECT_EQ(m["processes"], 2);
  EXPECT_EQ(m["counters"]["MPIIO_COLL_OPENS"], 2);  // one per rank, a communicator of 2
  EXPECT_EQ(m["counters"]["MPIIO_INDEP_OPENS"], 0);
  EXPECT_EQ(m["counters"]["MPIIO_COLL_WRITES"], 2);  // the H5Dwrite of each rank
  EXPECT_EQ(m["counters"]["MPIIO_INDEP_WRITES"], calls["MPI_File_write_at"]);
  EXPECT_GT(calls["MPI_File_write_at"], 0);  // HDF5's metadata
  EXPECT_EQ(m["counters"]["MPIIO_VIEWS"], calls["MPI_File_set_view"]);
  EXPECT_EQ(m["counters"]["MPIIO_MODE"], 9);  // MPI_MODE_CREATE | MPI_MODE_RDWR
  EXPECT_EQ(m["counters"]["MPIIO_INDEP_READS"], 0);
  EXPECT_EQ(m["counters"]["MPIIO_COLL_READS"], 0);
  EXPECT_EQ(m["counters"]["MPIIO_RW_SWITCHES"], 0);
  EXPECT_EQ(m["elements_written"], elements_written);
  nlohmann::json posix = entry(report["files"], "POSIX", data);
  ASSERT_FALSE(posix.is_null());
  EXPECT_EQ(m["posix_bytes_written"], posix["counters"]["POSIX_BYTES_WRITTEN"]);  // all of it via MPI-IO

  nlohmann::json f = entry(report["files"], "H5F", data);
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["processes"], 2);
  EXPECT_EQ(f["counters"], (nlohmann::json{{"H5F_OPENS", 2}, {"H5F_FLUSHES", 0}, {"H5F_USE_MPIIO", 1}}));
  nlohmann::json d = entry(report["files"], "H5D", data);
  ASSERT_FALSE(d.is_null());
  EXPECT_EQ(d["dataset"], "/values");
  EXPECT_EQ(d["processes"], 2);
  EXPECT_EQ(d["counters"], (nlohmann::json{{"H5D_OPENS", 2},
                                           {"H5D_READS", 0},
                                           {"H5D_WRITES", 2},
                                           {"H5D_FLUSHES", 0},
                                           {"H5D_RW_SWITCHES", 0},
                                           {"H5D_USE_MPIIO_COLLECTIVE", 1},
                                           {"H5D_USE_DEPRECATED", 0}}));
  // The dataset's bytes at the POSIX layer: exactly the ranks' data, written inside H5Dwrite.
  EXPECT_EQ(d["posix_bytes_written"], 2 * per_rank * sizeof(double));
  EXPECT_EQ(d["posix_bytes_written"].get<uint64_t>() + f["posix_bytes_written"].get<uint64_t>(),
            posix["counters"]["POSIX_BYTES_WRITTEN"].get<uint64_t>());  // the rest is HDF5's metadata
  EXPECT_EQ(report["files_unattributed"],
            (nlohmann::json{{"STDIO", 0}, {"MPIIO", 0}, {"H5F", 0}, {"H5D", 0}}));
}

}  // namespace
}  // namespace dc::test
