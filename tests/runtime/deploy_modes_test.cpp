// The daemon beyond plain tracing: a probe file in profile mode, and user-space probes, for
// which registering processes are held until their probes are attached; stopping the daemon
// must never leave one of them stopped.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/hash.h"
#include "runtime/deploy_fixture.h"

namespace dc::test {
namespace {

const std::string stdio_config =
    "capture_probes:\n  - include: " DATACRUMBS_SOURCE_DIR "/etc/datacrumbs/configs/stdio.yaml\n";

// A config with `mode: profile` makes a probe file on which the daemon counts in the kernel:
// the trace holds per-interval samples that add up to the wrapped program's writes exactly.
TEST_F(deploy_test, AProfileProbeFileMakesTheDaemonCountPerInterval)
{
  std::string profile_probes = signed_probe_file(
      "profile", "mode: profile\ninterval_ms: 100\ncapture_probes:\n  - name: POSIX\n    probe: syscalls\n");
  auto info = start_daemon(profile_probes, "prof1");
  ASSERT_FALSE(info.is_null());
  std::string wrapped = dir / "wrapped.bin", plain = dir / "plain.bin";
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap dd if=/dev/zero of=" + shell_quote(wrapped) +
                      " bs=4k count=10 status=none"),
            0);
  ASSERT_EQ(run_shell("dd if=/dev/zero of=" + shell_quote(plain) + " bs=4k count=7 status=none"), 0);
  stop_daemon("prof1");

  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  EXPECT_TRUE(trace.closed);
  EXPECT_TRUE(complete_events(trace).empty()) << "profile mode writes no per-call events";
  uint64_t writes = 0, bytes = 0;
  for (const auto& e : trace.lines) {
    if (e["ph"] != "C")
      continue;
    uint64_t fh = e.value("fhash", 0ull);  // a counter's file sits beside its args
    EXPECT_NE(fh, string_hash(plain)) << "the unwrapped program was counted: " << e;
    if (e["cat"] == "POSIX" && e["name"] == "write" && fh == string_hash(wrapped)) {
      writes += e["args"]["count"].get<uint64_t>();
      bytes += e["args"]["bytes"].get<uint64_t>();
    }
  }
  EXPECT_EQ(writes, 10u);
  EXPECT_EQ(bytes, 10u * 4096);
}

// A thread still alive when the daemon stops, idle since its writes, holds their counts in its
// own state (bpf/profile.bpf.h): no interval ended in a minute-long interval, so only the flush
// when the daemon detaches sends them, before the ring's last read.
TEST_F(deploy_test, ProfileCountsOfAThreadAliveWhenTheDaemonStopsAreInItsTrace)
{
  std::string profile_probes = signed_probe_file(
      "profile",
      "mode: profile\ninterval_ms: 60000\ncapture_probes:\n  - name: POSIX\n    probe: syscalls\n");
  auto info = start_daemon(profile_probes, "prof2");
  ASSERT_FALSE(info.is_null());
  // Nothing after the writes but a sleep: another call's key would evict their slot.
  std::string out = dir / "alive.bin";
  std::string writer =
      "import os, sys, time\nfd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)\n"
      "for i in range(10):\n    os.write(fd, b'x' * 4096)\ntime.sleep(60)\n";
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap /usr/bin/python3 -c " + shell_quote(writer) + " " +
                      shell_quote(out) + " >/dev/null 2>&1 & echo $! > " + shell_quote(dir / "writer.pid")),
            0);
  auto written = [&] {
    std::error_code ec;
    return std::filesystem::file_size(out, ec) == 10 * 4096;
  };
  for (int i = 0; i < 200 && !written(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(written()) << "the writer did not write";
  stop_daemon("prof2");
  run_shell("kill $(cat " + shell_quote(dir / "writer.pid") + ")");

  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  uint64_t writes = 0;
  for (const auto& e : trace.lines)
    if (e["ph"] == "C" && e["cat"] == "POSIX" && e["name"] == "write" &&
        e.value("fhash", 0ull) == string_hash(out))
      writes += e["args"]["count"].get<uint64_t>();
  EXPECT_EQ(writes, 10u);
}

// With user-space probes, a registering process is held at registration until the daemon has
// attached its probes: every stdio call after its constructor is traced, and an unwrapped run
// of the same program gets neither events nor breakpoints.
TEST_F(deploy_test, AWrappedProgramsStdioCallsAreAllTraced)
{
  std::string stdio_probes = signed_probe_file("stdio", stdio_config);
  auto info = start_daemon(stdio_probes, "stdio1");
  ASSERT_FALSE(info.is_null());
  std::string wrapped = dir / "wrapped.txt", plain = dir / "plain.txt";
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap " STDIO_APP_BIN " " + shell_quote(wrapped) + " 30"), 0);
  ASSERT_EQ(run_shell(std::string(STDIO_APP_BIN) + " " + shell_quote(plain) + " 20"), 0);
  stop_daemon("stdio1");

  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  int fwrites = 0, fopens = 0;
  for (const auto& e : complete_events(trace)) {
    fwrites += e["cat"] == "STDIO" && e["name"] == "fwrite";
    if (e["cat"] == "STDIO" && e["name"] == "fopen") {
      ++fopens;
      EXPECT_EQ(e["args"]["fhash"], string_hash(wrapped));
    }
  }
  EXPECT_EQ(fwrites, 31);  // 30, and one after the longjmp
  EXPECT_EQ(fopens, 1);
}

// A registered process that keeps forking while the daemon stops: the daemon stops holding new
// processes before it stops continuing them, so nothing is left stopped and the loop goes on.
TEST_F(deploy_test, StoppingTheDaemonNeverLeavesAProcessStopped)
{
  std::string stdio_probes = signed_probe_file("stdio", stdio_config);
  auto info = start_daemon(stdio_probes, "forks1");
  ASSERT_FALSE(info.is_null());
  std::string counter = dir / "counter", pid_file = dir / "loop.pid";
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap sh -c " +
                      shell_quote("i=0; while [ $i -lt 1000000 ]; do /bin/true; i=$((i+1)); echo $i > " +
                                  shell_quote(counter) + "; done") +
                      " >/dev/null 2>&1 & echo $! > " + shell_quote(pid_file)),
            0);
  pid_t loop = std::atoi(read_file(pid_file).c_str());
  ASSERT_TRUE(wait_for([&] { return std::atoi(read_file(counter).c_str()) > 20; })) << "the loop never ran";
  stop_daemon("forks1");
  auto progress = [&] { return std::atoi(read_file(counter).c_str()); };
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int before = progress();
  bool goes_on = wait_for([&] { return progress() > before + 10; });
  kill(loop, SIGKILL);
  run_shell("pkill -KILL -P " + std::to_string(loop) + " 2>/dev/null; true");
  EXPECT_TRUE(goes_on) << "the forking loop stopped after the daemon did (a child left stopped?)";
}

// The installed layout and the scripts datacrumbs@.service calls: start returns once the daemon
// is ready, stop once it has finished its trace and exited.

}  // namespace
}  // namespace dc::test
