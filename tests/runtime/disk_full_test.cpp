// The trace's filesystem fills up mid-run (a small tmpfs of the test's own as the output): the
// traced command runs to its end with its own exit status, the tool names the file in one line
// and exits non-zero, and the trace is a prefix of whole gzip members (the member that did not
// fit is cut off again), every line of it valid, its events counted in the summary as written
// and the rest as unwritten. A filesystem already full is refused before the command starts,
// and a trace file removed mid-run is reported as such. Figures: docs/reliability.md.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "runtime/trace_fault.h"

namespace dc::test {
namespace {

// A tmpfs of `size` mounted on a fresh directory under `dir`, unmounted at scope exit.
struct small_tmpfs {
  std::string path;
  small_tmpfs(const scratch_dir& dir, const std::string& size) : path(dir / "small")
  {
    std::filesystem::create_directory(path);
    if (::mount("tmpfs", path.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0)
      throw std::runtime_error("cannot mount a tmpfs on " + path + ": " + std::strerror(errno));
  }
  ~small_tmpfs() { ::umount2(path.c_str(), MNT_DETACH); }
  small_tmpfs(const small_tmpfs&) = delete;
  small_tmpfs& operator=(const small_tmpfs&) = delete;
};

// 400,000 one-byte reads and writes (far more trace than 1 MiB holds), the copy to a file on
// another filesystem, then a marker, then exit 7.
std::string copy_workload(const scratch_dir& dir)
{
  return "sh -c " + shell_quote("dd if=/dev/zero of=" + shell_quote(dir / "copy") +
                                " bs=1 count=400000 2>/dev/null && echo done > " +
                                shell_quote(dir / "marker") + "; exit 7");
}

TEST_F(runtime_test, FullDiskMidTraceKeepsTheCommandAndLeavesAPrefixOfWholeMembers)
{
  small_tmpfs fs(dir, "1m");
  std::string trace = fs.path + "/trace.pfw.gz";
  full_run r = run_tool(dir, trace, copy_workload(dir));

  // The command ran to its end, unharmed, and its status is the tool's.
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(std::filesystem::file_size(dir / "copy"), 400000u);
  EXPECT_EQ(read_file(dir / "marker"), "done\n");
  // One line names the file and the reason.
  EXPECT_EQ(lines_with(r.err, "cannot write '" + trace + "': No space left on device"), 1) << r.err;

  // A prefix of whole members, no end record; the summary counts exactly what is in the file as
  // written, and the rest as unwritten.
  ASSERT_TRUE(r.summary.is_object()) << r.err;
  EXPECT_EQ(r.summary["exit_code"], 7);
  auto [members, in_file, unwritten] = expect_whole_prefix(trace, r.summary);
  EXPECT_EQ(
      lines_with(r.err, "not written (the trace file failed): " + std::to_string(unwritten) + " events"), 1)
      << r.err;
  // Every read and write of the copy was decoded and summarised, in the file or not.
  EXPECT_GE(in_file + unwritten, 800000u);
  std::printf(
      "figure: disk full: 1 MiB tmpfs, %zu whole members (%ju bytes), %ju events written, %ju not "
      "written, command exit 7 kept\n",
      members, static_cast<uintmax_t>(std::filesystem::file_size(trace)), static_cast<uintmax_t>(in_file),
      static_cast<uintmax_t>(unwritten));
}

TEST_F(runtime_test, FullDiskBeforeTheStartIsRefusedBeforeTheCommandRuns)
{
  small_tmpfs fs(dir, "64k");
  ASSERT_NE(run_shell("dd if=/dev/zero of=" + shell_quote(fs.path + "/filler") + " bs=4k 2>/dev/null"), 0);
  std::string trace = fs.path + "/trace.pfw.gz";
  full_run r = run_tool(dir, trace, copy_workload(dir));

  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 7);
  EXPECT_EQ(lines_with(r.err, "cannot write '" + trace + "': No space left on device"), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "marker")) << "the command ran";
  EXPECT_FALSE(std::filesystem::exists(trace)) << "an empty trace was left behind";
}

TEST_F(runtime_test, TraceRemovedMidRunIsReportedAndCountedUnwritten)
{
  std::string out = dir / "out";
  std::filesystem::create_directory(out);
  std::string trace = out + "/trace.pfw.gz";
  full_run r = run_tool(dir, trace,
                        "sh -c " + shell_quote("rm -rf " + shell_quote(out) + "; echo done > " +
                                               shell_quote(dir / "marker") + "; exit 3"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(read_file(dir / "marker"), "done\n");
  EXPECT_EQ(lines_with(r.err, "the trace file '" + trace + "' was removed while it was written"), 1) << r.err;
  ASSERT_TRUE(r.summary.is_object()) << r.err;
  EXPECT_EQ(r.summary["events"]["written"], 0);
  EXPECT_GT(r.summary["events"]["unwritten"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace dc::test
