// Darshan's STDIO, MPIIO, H5F and H5D counters from hand-made uprobe lines: calls charged to
// the file their handle was opened on, whatever order their nested system calls come in, exact
// counts through a partial, and the calls that cannot be charged counted, not dropped.
#include <gtest/gtest.h>

#include "analyze/module_counters.h"
#include "unit/analyze_lines.h"

namespace dc::analyze {
namespace {

using test::trace_line;

constexpr uint64_t F = 100, G = 200, H = 300;  // file hashes

name_map names()
{
  name_map n;
  n.files[F] = "/data/f";
  n.files[G] = "/data/g";
  n.files[H] = "/data/h";
  n.hosts[7] = "node";
  return n;
}

struct lines_builder {
  std::vector<trace_line> lines;
  uint64_t pid = 1;
  int64_t ts = 1'000'000;

  trace_line& call(const std::string& name, const std::string& cat, int64_t id, int64_t ret,
                   std::vector<std::pair<std::string, int64_t>> args = {}, int64_t parent = -1)
  {
    trace_line& l = lines.emplace_back();
    l.name = name;
    l.cat = cat;
    l.pid = l.tid = pid;
    l.id = id;
    l.p_idx = parent;
    l.level = parent < 0 ? 1 : 2;
    l.ts_us = ts;
    l.dur_us = 10;
    ts += 100;
    l.args = std::move(args);
    l.args.emplace_back("ret", ret);
    return l;
  }
};

nlohmann::json entry(const nlohmann::json& files, const std::string& module, const std::string& file)
{
  for (const auto& f : files)
    if (f["module"] == module && f["file"] == file)
      return f;
  return nullptr;
}

nlohmann::json report_through_partial(const module_counters& acc, const run_section& run)
{
  nlohmann::json direct = acc.report(names(), run, 1'000'000);
  auto back = module_counters::from_partial(nlohmann::json::parse(acc.partial().dump()));
  EXPECT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names(), run, 1'000'000), direct);
  return direct;
}

TEST(AnalyzeModules, StdioFollowsEachStreamFromItsOpen)
{
  lines_builder b;
  constexpr int64_t S = 5000;
  b.call("fopen", "STDIO", 10, S).fhash = F;
  b.call("fwrite", "STDIO", 11, 10, {{"size", 100}, {"stream", S}});  // 1000 bytes at 0
  b.call("fprintf", "STDIO", 12, 6, {{"stream", S}});                 // 6 bytes at 1000
  b.call("fflush", "STDIO", 13, 0, {{"stream", S}});
  b.call("write", "POSIX", 14, 1006, {{"fd", 3}}, 13).fhash = F;  // the flush's write, after it
  b.call("fseek", "STDIO", 15, 0, {{"stream", S}, {"offset", 0}, {"whence", 0}});
  b.call("read", "POSIX", 17, 4096, {{"fd", 3}}, 16).fhash = F;     // the fread's read, before it
  b.call("fread", "STDIO", 16, 2, {{"size", 300}, {"stream", S}});  // 600 bytes at 0
  b.call("fseek", "STDIO", 18, 0, {{"stream", S}, {"offset", 100}, {"whence", 1}});  // to 700
  b.call("fread", "STDIO", 19, 1, {{"size", 50}, {"stream", S}});  // 50 bytes at 700: last byte 749
  b.call("rewind", "STDIO", 20, 0, {{"stream", S}});
  b.call("fseek", "STDIO", 21, 0, {{"stream", S}, {"offset", 0}, {"whence", 2}});  // to the end: unknown
  b.call("fwrite", "STDIO", 22, 1, {{"size", 10}, {"stream", S}});                 // at an unknown offset
  b.call("ftell", "STDIO", 23, 1016, {{"stream", S}});                             // known again: 1016
  b.call("fwrite", "STDIO", 24, 1, {{"size", 4}, {"stream", S}});                  // last byte 1019
  b.call("fgets", "STDIO", 25, 123456, {{"count", 80}, {"stream", S}});            // a read of unknown size
  b.call("fwrite", "STDIO", 26, 0, {{"size", 4}, {"stream", S}});  // nothing written: not counted
  b.call("fclose", "STDIO", 27, 0, {{"stream", S}});
  // A stream opened before tracing: charged to the file of the write beneath it, then remembered.
  b.call("fwrite", "STDIO", 30, 1, {{"size", 8}, {"stream", 7777}});
  b.call("write", "POSIX", 31, 8, {{"fd", 5}}, 30).fhash = G;
  b.call("fwrite", "STDIO", 32, 1, {{"size", 8}, {"stream", 7777}});
  // fdopen: its file from the fcntl glibc makes beneath it.
  b.call("fdopen", "STDIO", 40, 8888, {{"fd", 6}});
  b.call("fcntl", "POSIX", 41, 2, {{"fd", 6}}, 40).fhash = H;
  b.call("fputs", "STDIO", 42, 1, {{"stream", 8888}});
  // A stream nothing names a file for.
  b.call("fwrite", "STDIO", 50, 1, {{"size", 8}, {"stream", 9999}});
  module_counters acc;
  test::feed(acc, b.lines);
  acc.end_file();
  nlohmann::json r = report_through_partial(acc, run_section{});

  nlohmann::json f = entry(r["files"], "STDIO", "/data/f");
  ASSERT_FALSE(f.is_null()) << r.dump(1);
  const nlohmann::json want = {{"STDIO_OPENS", 1},
                               {"STDIO_FDOPENS", 0},
                               {"STDIO_READS", 3},
                               {"STDIO_WRITES", 4},
                               {"STDIO_SEEKS", 4},
                               {"STDIO_FLUSHES", 1},
                               {"STDIO_BYTES_WRITTEN", 1020},
                               {"STDIO_BYTES_READ", 650},
                               {"STDIO_MAX_BYTE_READ", 749},
                               {"STDIO_MAX_BYTE_WRITTEN", 1019}};
  EXPECT_EQ(f["counters"], want);
  EXPECT_EQ(f["unknown_offset_ops"], 2);  // the write after SEEK_END, the fgets
  EXPECT_EQ(f["posix_bytes_written"], 1006);
  EXPECT_EQ(f["posix_bytes_read"], 4096);
  EXPECT_EQ(f["processes"], 1);
  // Timestamps: seconds after the inputs' start (1 s); fopen at +0, fclose at +1.7 ms.
  EXPECT_DOUBLE_EQ(f["fcounters"]["STDIO_F_OPEN_START_TIMESTAMP"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(f["fcounters"]["STDIO_F_CLOSE_START_TIMESTAMP"].get<double>(), 0.0017);
  EXPECT_DOUBLE_EQ(f["fcounters"]["STDIO_F_META_TIME"].get<double>(), 6 * 10e-6);  // open, 4 seeks, close
  EXPECT_FALSE(f["fcounters"].contains("STDIO_F_MAX_READ_TIME"));                  // not a STDIO counter

  nlohmann::json g = entry(r["files"], "STDIO", "/data/g");
  ASSERT_FALSE(g.is_null());
  EXPECT_EQ(g["counters"]["STDIO_WRITES"], 2);
  EXPECT_EQ(g["counters"]["STDIO_BYTES_WRITTEN"], 16);
  EXPECT_EQ(g["unknown_offset_ops"], 2);
  nlohmann::json h = entry(r["files"], "STDIO", "/data/h");
  ASSERT_FALSE(h.is_null());
  EXPECT_EQ(h["counters"]["STDIO_OPENS"], 1);
  EXPECT_EQ(h["counters"]["STDIO_FDOPENS"], 1);
  EXPECT_EQ(h["counters"]["STDIO_WRITES"], 1);
  EXPECT_EQ(h["counters"]["STDIO_BYTES_WRITTEN"], 0);  // fputs says no size
  EXPECT_EQ(r["unattributed"]["STDIO"], 1);
  EXPECT_EQ(r["files"].size(), 3u);
}

// Two MPI ranks write one dataset collectively: H5Dwrite holds MPI_File_write_at_all holds the
// pwrite64; the lines come as a real trace has them (a call after the calls it holds, system
// calls late), and the handles tie them to the file.
std::vector<trace_line> rank_lines(uint64_t pid)
{
  lines_builder b;
  b.pid = pid;
  const int64_t fh = 9000 + static_cast<int64_t>(pid), fid = 72, did = 360;
  b.call("MPI_File_open", "MPI", 2, 0, {{"amode", 9}, {"fh", fh}}, 1).fhash = F;
  b.call("H5Fcreate", "HDF5", 1, fid, {{"flags", 2}}).fhash = F;
  b.call("openat", "POSIX", 3, 4, {}, 2).fhash = F;
  b.call("H5Dcreate2", "HDF5", 4, did, {{"loc_id", fid}}).texts = {{"name", "values"}};
  b.call("MPI_File_write_at_all", "MPI", 6, 0, {{"fh", fh}, {"offset", 0}, {"count", 1000}}, 5);
  b.call("H5Dwrite", "HDF5", 5, 0, {{"dset_id", did}});
  b.call("MPI_File_write_at", "MPI", 12, 0, {{"fh", fh}, {"offset", 0}, {"count", 96}}, 9);
  b.call("H5Dclose", "HDF5", 8, 0, {{"dset_id", did}});
  b.call("pwrite64", "POSIX", 7, 1000, {{"offset", 2048}}, 6).fhash = F;  // late, at depth 3
  b.call("pwrite64", "POSIX", 13, 96, {{"offset", 0}}, 12).fhash = F;
  b.call("MPI_File_close", "MPI", 10, 0, {{"fh", fh}}, 9);
  b.call("H5Fclose", "HDF5", 9, 0, {{"file_id", fid}});
  b.lines[8].level = 3;
  return b.lines;
}

TEST(AnalyzeModules, MpiioH5fAndH5dOfTwoRanks)
{
  module_counters acc;
  for (uint64_t pid : {1u, 2u}) {
    test::feed(acc, rank_lines(pid));
    acc.end_file();
  }
  run_section run;
  run.processes[{7, 1}].size = 2;
  run.processes[{7, 2}].size = 2;
  nlohmann::json r = report_through_partial(acc, run);
  nlohmann::json m = entry(r["files"], "MPIIO", "/data/f");
  ASSERT_FALSE(m.is_null()) << r.dump(1);
  EXPECT_EQ(m["processes"], 2);
  const nlohmann::json mpi = {{"MPIIO_COLL_OPENS", 2},   {"MPIIO_INDEP_OPENS", 0}, {"MPIIO_COLL_WRITES", 2},
                              {"MPIIO_INDEP_WRITES", 2}, {"MPIIO_INDEP_READS", 0}, {"MPIIO_MODE", 9},
                              {"MPIIO_RW_SWITCHES", 0}};
  for (const auto& [k, v] : mpi.items()) EXPECT_EQ(m["counters"][k], v) << k;
  EXPECT_EQ(m["elements_written"], 2 * 1096);
  EXPECT_EQ(m["posix_bytes_written"], 2 * 1096);
  nlohmann::json f = entry(r["files"], "H5F", "/data/f");
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["counters"], (nlohmann::json{{"H5F_OPENS", 2}, {"H5F_FLUSHES", 0}, {"H5F_USE_MPIIO", 1}}));
  EXPECT_EQ(f["posix_bytes_written"], 2 * 96);  // the metadata written while closing
  nlohmann::json d = entry(r["files"], "H5D", "/data/f");
  ASSERT_FALSE(d.is_null());
  EXPECT_EQ(d["dataset"], "/values");
  EXPECT_EQ(d["counters"]["H5D_OPENS"], 2);
  EXPECT_EQ(d["counters"]["H5D_WRITES"], 2);
  EXPECT_EQ(d["counters"]["H5D_USE_MPIIO_COLLECTIVE"], 1);
  EXPECT_EQ(d["posix_bytes_written"], 2 * 1000);
  EXPECT_EQ(r["unattributed"], (nlohmann::json{{"STDIO", 0}, {"MPIIO", 0}, {"H5F", 0}, {"H5D", 0}}));
  // Not an MPI job by what the trace says: independent opens (a communicator of one).
  nlohmann::json alone = acc.report(names(), run_section{}, 1'000'000);
  EXPECT_EQ(entry(alone["files"], "MPIIO", "/data/f")["counters"]["MPIIO_INDEP_OPENS"], 2);
  // Each rank in its own accumulator, merged: the same.
  module_counters one, two;
  test::feed(one, rank_lines(1));
  one.end_file();
  test::feed(two, rank_lines(2));
  two.end_file();
  one.merge(two);
  EXPECT_EQ(one.report(names(), run, 1'000'000), r);
}

// A call waits `window` lines for what it holds; a system call later than that still credits
// its bytes while the call is remembered (two windows), and never charges a call twice.
TEST(AnalyzeModules, LateNestedCallsAreCreditedOnce)
{
  lines_builder b;
  constexpr int64_t S = 5000;
  b.call("fopen", "STDIO", 10, S).fhash = F;
  b.call("fwrite", "STDIO", 11, 1, {{"size", 5000}, {"stream", S}});
  for (uint64_t i = 0; i < module_counters::window + 10; ++i) b.call("getpid", "POSIX", 1000 + i, 1);
  b.call("write", "POSIX", 12, 4096, {}, 11).fhash = F;  // after the fwrite was replayed
  b.call("fclose", "STDIO", 13, 0, {{"stream", S}});
  b.call("write", "POSIX", 14, 904, {}, 13).fhash = F;
  module_counters acc;
  test::feed(acc, b.lines);
  acc.end_file();
  nlohmann::json f = entry(acc.report(names(), run_section{}, 0)["files"], "STDIO", "/data/f");
  EXPECT_EQ(f["posix_bytes_written"], 5000);
  EXPECT_EQ(f["counters"]["STDIO_WRITES"], 1);
}

}  // namespace
}  // namespace dc::analyze
