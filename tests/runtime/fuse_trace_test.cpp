// A trace on a FUSE filesystem: vfat served by fusefat (this kernel has no vfat of its own), a
// filesystem without owners or modes (every file root's and 0700, chmod and chown not
// implemented), and the FUSE server killed mid-run (every later write fails ENOTCONN).
// Figures: docs/reliability.md.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/hash.h"
#include "runtime/process_tree.h"
#include "runtime/trace_fault.h"

namespace dc::test {
namespace {

// A 64 MiB vfat image in the scratch directory, mounted read-write by fusefat; unmounted (lazily:
// its server may be dead) when the test ends.
struct fuse_vfat : runtime_test {
  std::string image, mount_point;
  void SetUp() override
  {
    runtime_test::SetUp();
    image = dir / "vfat.img";
    mount_point = dir / "vfat";
    std::filesystem::create_directory(mount_point);
    ASSERT_EQ(run_shell("truncate -s 64M " + shell_quote(image) + " && mkfs.vfat " + shell_quote(image) +
                        " >/dev/null && fusefat -o rw+ " + shell_quote(image) + " " +
                        shell_quote(mount_point) + " >/dev/null"),
              0);
    ASSERT_EQ(lines_with(read_file("/proc/mounts"), " " + mount_point + " fuse.fusefat "), 1);
  }
  void TearDown() override
  {
    run_shell("umount -l " + shell_quote(mount_point) + " 2>/dev/null");
    runtime_test::TearDown();
  }
  // The fusefat process serving this test's image (its arguments name the image), or -1.
  pid_t server() const
  {
    auto pids = processes_where([&](const std::string& cmdline) {
      return cmdline.starts_with(std::string("fusefat\0", 8)) &&
             cmdline.find('\0' + image + '\0') != std::string::npos;
    });
    return pids.empty() ? -1 : pids.front();
  }
};

TEST_F(fuse_vfat, ATraceOnAFilesystemWithoutOwnersOrModesIsWholeWithItsIndex)
{
  std::string trace = mount_point + "/trace.pfw.gz", copy = dir / "copy";
  full_run r = run_tool(dir, trace,
                        "sh -c " + shell_quote("dd if=/dev/zero of=" + shell_quote(copy) +
                                               " bs=1 count=20000 2>/dev/null; exit 3"),
                        "--layers syscall ");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // Not a word of trouble: the index got the trace's owner and mode without chmod or chown.
  EXPECT_EQ(lines_with(r.err, "datacrumbs: "), 1) << r.err;  // "'sh -c ...' exited with 3"
  EXPECT_EQ(lines_with(r.err, "exited with 3"), 1) << r.err;

  gzip_contents gz = read_gzip_members(trace);
  EXPECT_FALSE(gz.truncated_tail);
  parsed_trace t = parse_trace_text(gz.text);
  EXPECT_TRUE(t.opened);
  EXPECT_TRUE(t.closed);
  int writes = 0;
  for (const auto& e : complete_events(t))
    writes += e["name"] == "write" && e["args"]["fhash"] == string_hash(copy) && e["args"]["ret"] == 1;
  EXPECT_EQ(writes, 20000);
  ASSERT_TRUE(r.summary.is_object()) << r.err;
  EXPECT_EQ(r.summary["events"]["lost"], 0);
  EXPECT_EQ(r.summary["events"]["unwritten"], 0);

  struct stat trace_st {
  }, index_st{};
  ASSERT_EQ(::stat(trace.c_str(), &trace_st), 0);
  ASSERT_EQ(::stat((trace + ".zindex").c_str(), &index_st), 0) << "no index beside the trace";
  EXPECT_EQ(index_st.st_uid, trace_st.st_uid);
  EXPECT_EQ(index_st.st_mode & 0777 & ~trace_st.st_mode, 0u);
  EXPECT_GT(index_st.st_size, 0);
  // Nothing else was left in the directory (no temporary index).
  size_t files = 0;
  for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator(mount_point)) ++files;
  EXPECT_EQ(files, 2u);
  std::printf("figure: trace on vfat through FUSE: %zu whole members, %d of 20000 writes, index beside it\n",
              gz.complete_members, writes);
}

TEST_F(fuse_vfat, TheFuseServerKilledMidRunKeepsTheCommandAndSaysWhy)
{
  std::string trace = mount_point + "/trace.pfw.gz", copy = dir / "copy", marker = dir / "marker";
  pid_t fuse = server();
  ASSERT_GT(fuse, 0) << "no fusefat process serving " << image;
  // The server dies once the trace has its first bytes; 200,000 one-byte copies follow.
  std::thread killer([&] {
    for (int i = 0; i < 3000; ++i) {
      struct stat st {};
      if (::stat(trace.c_str(), &st) == 0 && st.st_size > 0)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(fuse, SIGKILL);
  });
  full_run r = run_tool(dir, trace,
                        "sh -c " + shell_quote("sleep 0.5; dd if=/dev/zero of=" + shell_quote(copy) +
                                               " bs=1 count=200000 2>/dev/null; echo done > " +
                                               shell_quote(marker) + "; exit 5"),
                        "--layers syscall ");
  killer.join();
  // The command ran to its end, unharmed, and its status is the tool's.
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(std::filesystem::file_size(copy), 200000u);
  EXPECT_EQ(read_file(marker), "done\n");
  // One line names the file and the reason.
  EXPECT_EQ(lines_with(r.err, "cannot write '" + trace + "': Transport endpoint is not connected"), 1)
      << r.err;
  ASSERT_TRUE(r.summary.is_object()) << r.err;
  EXPECT_EQ(r.summary["exit_code"], 5);
  EXPECT_EQ(r.summary["events"]["lost"], 0);
  uint64_t unwritten = r.summary["events"]["unwritten"];
  EXPECT_GE(unwritten, 200000u);
  std::printf("figure: FUSE server killed mid-run: command exit 5 kept, %ju events counted not written\n",
              static_cast<uintmax_t>(unwritten));
}

}  // namespace
}  // namespace dc::test
