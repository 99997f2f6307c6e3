// The trace's filesystem turns read-only mid-run, and trace paths on filesystems where the writer
// cannot create a file. A remount read-only is refused while the trace is open for writing (the
// kernel answers EBUSY to `mount -o remount,ro` with a writer), so the real case is the kernel's
// own: ext4 mounted errors=remount-ro hits an error (trigger_fs_error, the traced command itself
// writes it mid-run) and goes read-only under the open trace. Figures: docs/reliability.md.
#include <algorithm>
#include <filesystem>
#include <vector>

#include "runtime/loop_fs.h"
#include "runtime/trace_fault.h"

namespace dc::test {
namespace {

TEST_F(runtime_test, TraceFilesystemTurnedReadOnlyMidRunKeepsTheCommandAndAPrefixOfWholeMembers)
{
  loop_fs fs(dir.path, "ext4", 64);
  ASSERT_EQ(run_shell("mount -o remount,errors=remount-ro " + shell_quote(fs.mount_point())), 0);
  std::string trigger =
      "/sys/fs/ext4/" + std::filesystem::path(fs.device()).filename().string() + "/trigger_fs_error";
  ASSERT_TRUE(std::filesystem::exists(trigger));
  std::string trace = fs.mount_point() + "/trace.pfw.gz";
  // 200,000 one-byte copies, the filesystem made read-only, 200,000 more, a marker, exit 7.
  auto copy = [&](const std::string& to) {
    return "dd if=/dev/zero of=" + shell_quote(dir / to) + " bs=1 count=200000 2>/dev/null; ";
  };
  full_run r = run_tool(dir, trace,
                        "sh -c " + shell_quote(copy("copy1") + "echo 1 > " + trigger + "; " + copy("copy2") +
                                               "echo done > " + shell_quote(dir / "marker") + "; exit 7"),
                        "--layers syscall ");
  // ext4 marks it emergency_ro (its mount flags still say rw): every write now fails EROFS.
  EXPECT_EQ(lines_with(read_file("/proc/mounts"), fs.mount_point() + " ext4 "), 1);
  ASSERT_EQ(lines_with(read_file("/proc/mounts"),
                       fs.mount_point() + " ext4 rw,relatime,errors=remount-ro,emergency_ro"),
            1)
      << "the filesystem did not turn read-only: " << read_file("/proc/mounts");

  // The command ran to its end, unharmed, and its status is the tool's.
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(std::filesystem::file_size(dir / "copy1"), 200000u);
  EXPECT_EQ(std::filesystem::file_size(dir / "copy2"), 200000u);
  EXPECT_EQ(read_file(dir / "marker"), "done\n");
  // One line names the file and the reason; nothing was half written, so nothing to cut.
  EXPECT_EQ(lines_with(r.err, "cannot write '" + trace + "': Read-only file system"), 1) << r.err;
  EXPECT_EQ(lines_with(r.err, "could not be cut off"), 0) << r.err;

  // A prefix of whole members, no end record; written: exactly what is in the file, the rest
  // counted unwritten; every call decoded.
  ASSERT_TRUE(r.summary.is_object()) << r.err;
  EXPECT_EQ(r.summary["exit_code"], 7);
  auto [members, in_file, unwritten] = expect_whole_prefix(trace, r.summary);
  EXPECT_EQ(r.summary["events"]["lost"], 0);
  EXPECT_GE(in_file + unwritten, 800000u);
  std::printf(
      "figure: read-only mid-run: ext4 errors=remount-ro, %zu whole members (%ju events) kept, %ju not "
      "written, command exit 7 kept\n",
      members, static_cast<uintmax_t>(in_file), static_cast<uintmax_t>(unwritten));
}

TEST_F(runtime_test, ATracePathWhereNoFileCanBeCreatedIsRefusedBeforeTheCommandRuns)
{
  // procfs creates no file (ENOENT), sysfs none either (EACCES, even for root), a read-only
  // filesystem none (EROFS): one line each, non-zero, the command never started.
  loop_fs fs(dir.path, "ext4", 64);
  ASSERT_EQ(run_shell("mount -o remount,ro " + shell_quote(fs.mount_point())), 0);
  int refused = 0;
  std::vector<std::string> traces = {"/proc/dc-trace.pfw.gz", "/sys/kernel/dc-trace.pfw.gz",
                                     fs.mount_point() + "/dc-trace.pfw.gz"};
  for (const std::string& trace : traces) {
    full_run r = run_tool(dir, trace, "sh -c " + shell_quote("echo ran > " + shell_quote(dir / "marker")));
    EXPECT_NE(r.exit_code, 0) << trace;
    EXPECT_EQ(lines_with(r.err, "cannot create '" + trace + "'"), 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "marker")) << trace << ": the command ran";
    EXPECT_FALSE(std::filesystem::exists(trace));
    refused += r.exit_code != 0 && !std::filesystem::exists(dir / "marker");
  }
  std::printf("figure: trace on procfs, sysfs, a read-only ext4: %d of 3 refused before the command ran\n",
              refused);
}

}  // namespace
}  // namespace dc::test
