// Deployment end to end: configurator -> signed probe file -> daemon in the background -> ready
// file -> a wrapped and an unwrapped program -> stop. Only the wrapped program of the signed
// user is traced, exactly. Unsigned, tampered and foreign files, bad run ids and non-root
// callers are refused with one line, attaching nothing.
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "core/hash.h"
#include "deploy/probe_file.h"
#include "deploy/signing_service.h"
#include "runtime/deploy_fixture.h"

namespace dc::test {
namespace {

TEST_F(deploy_test, OnlyTheWrappedProgramOfTheSignedUserIsTraced)
{
  auto info = start_daemon(probes, "job7");
  ASSERT_FALSE(info.is_null());

  // A copy of dd with the client library added as a dependency: traced without the wrapper.
  std::string tracked_dd = dir / "tracked_dd", tracked = dir / "tracked.bin";
  ASSERT_EQ(run_shell("cp \"$(command -v dd)\" " + shell_quote(tracked_dd)), 0);
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_track --executable " + shell_quote(tracked_dd)), 0);
  ASSERT_EQ(run_shell(shell_quote(tracked_dd) + " if=/dev/zero of=" + shell_quote(tracked) +
                      " bs=4k count=5 status=none"),
            0);

  std::string wrapped = dir / "wrapped.bin", plain = dir / "plain.bin";
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap dd if=/dev/zero of=" + shell_quote(wrapped) +
                      " bs=4k count=10 status=none"),
            0);
  ASSERT_EQ(run_shell("dd if=/dev/zero of=" + shell_quote(plain) + " bs=4k count=7 status=none"), 0);
  // Another user's wrapped program is left out by the uid filter:
  // daemon_uid_test.OnlyTheSignedUsersProcessesAreTraced proves it with an installed copy of the
  // library that the daemon watches and two real users (a private copy here would prove nothing).

  stop_daemon("job7");
  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  EXPECT_TRUE(trace.closed) << "the trace was not finished";
  int writes = 0;
  std::set<uint32_t> pids;
  for (const auto& e : complete_events(trace)) {
    uint64_t fh = e["args"].value("fhash", 0ull);
    EXPECT_NE(fh, string_hash(plain)) << "the unwrapped program was traced: " << e;
    if (e["name"] == "write" && fh == string_hash(wrapped)) {
      ++writes;
      EXPECT_EQ(e["args"]["ret"], 4096);
      pids.insert(e["pid"].get<uint32_t>());
    }
  }
  EXPECT_EQ(writes, 10);
  EXPECT_EQ(pids.size(), 1u);
  int tracked_writes = 0;
  for (const auto& e : complete_events(trace))
    tracked_writes += e["name"] == "write" && e["args"].value("fhash", 0ull) == string_hash(tracked);
  EXPECT_EQ(tracked_writes, 5);

  // Untracked again: the dependency is gone.
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_untrack --executable " + shell_quote(tracked_dd)), 0);
  std::string needed = dir / "needed.txt";
  ASSERT_EQ(run_shell("patchelf --print-needed " + shell_quote(tracked_dd) + " > " + shell_quote(needed)), 0);
  EXPECT_EQ(read_file(needed).find("datacrumbs_client"), std::string::npos) << read_file(needed);
}

TEST_F(deploy_test, InstalledServiceScriptsStartReadyAndStop)
{
  std::string prefix = dir / "prefix";
  ASSERT_EQ(
      run_shell("cmake --install " DATACRUMBS_BUILD_DIR " --prefix " + shell_quote(prefix) + " >/dev/null"),
      0);
  for (const char* f :
       {"bin/datacrumbs", "bin/datacrumbs_probe_configurator", "bin/datacrumbs_wrap", "bin/datacrumbs_track",
        "bin/datacrumbs_untrack", "lib/libdatacrumbs_client.so", "etc/datacrumbs/configs/default.yaml",
        "etc/datacrumbs/configs/stdio.yaml", "etc/datacrumbs/datacrumbs.yaml",
        "lib/systemd/system/datacrumbs@.service", "lib/systemd/system/datacrumbs_sign_probes.service",
        "bin/datacrumbs_sign_probes", "libexec/datacrumbs/datacrumbs-service-start",
        "libexec/datacrumbs/datacrumbs-service-stop"})
    EXPECT_TRUE(std::filesystem::exists(prefix + "/" + f)) << f;
  if (run_shell("command -v systemd-analyze >/dev/null") == 0) {
    for (const char* unit : {"datacrumbs@.service", "datacrumbs_sign_probes.service"})
      EXPECT_EQ(run_shell("systemd-analyze verify " + shell_quote(prefix + "/lib/systemd/system/" + unit) +
                          " 2>/dev/null"),
                0)
          << unit;
  }
  std::filesystem::create_directories(prefix + "/etc/datacrumbs/probes");
  ASSERT_EQ(run_shell(prefix + "/bin/datacrumbs_probe_configurator " + shell_quote(config) + " " +
                      shell_quote(prefix + "/etc/datacrumbs/probes/job9.json.gz") + " 2>/dev/null"),
            0);
  std::string ready = dir / "run/datacrumbs-job9.ready";
  ASSERT_EQ(run_shell(prefix + "/libexec/datacrumbs/datacrumbs-service-start job9"), 0);
  EXPECT_TRUE(std::filesystem::exists(ready)) << "start returned before the daemon was ready";
  daemon = nlohmann::json::parse(read_file(ready))["pid"];
  std::string out = dir / "service.bin";
  ASSERT_EQ(run_shell(prefix + "/bin/datacrumbs_wrap dd if=/dev/zero of=" + shell_quote(out) +
                      " bs=4k count=4 status=none"),
            0);
  ASSERT_EQ(run_shell(prefix + "/libexec/datacrumbs/datacrumbs-service-stop job9"), 0);
  EXPECT_NE(kill(daemon, 0), 0) << "stop returned before the daemon exited";
  daemon = 0;
  EXPECT_FALSE(std::filesystem::exists(ready));
  auto trace = parse_trace_text(read_gzip_members(expected_trace_path("job9")).text);
  EXPECT_TRUE(trace.closed);
  int writes = 0;
  for (const auto& e : complete_events(trace))
    writes += e["name"] == "write" && e["args"].value("fhash", 0ull) == string_hash(out);
  EXPECT_EQ(writes, 4);
}

// The signing service signs for the uid the kernel reports for the connection (not the uid the
// request claims) and only probes on binaries that uid can read.
TEST_F(deploy_test, SigningServiceSignsForTheAskingUidAndOnlyWhatItCanRead)
{
  std::string shared = "/tmp/dc-sign-" + std::to_string(getpid()), socket = shared + "/sign.sock";
  std::filesystem::create_directories(shared);
  std::filesystem::permissions(shared, std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  ASSERT_EQ(
      run_shell("DATACRUMBS_SIGN_SOCKET=" + socket + " " + bin_dir + "/datacrumbs_sign_probes >/dev/null 2>" +
                shell_quote(dir / "sign.err") + " & echo $! > " + shell_quote(dir / "sign.pid")),
      0);
  daemon = std::atoi(read_file(dir / "sign.pid").c_str());
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(socket); })) << read_file(dir / "sign.err");

  // What nobody (65534) asks for: a libc function (readable by all), or a binary only root can
  // read; both requests claim uid 0.
  auto libc_probe = [](const std::string& binary) {
    probe_file p;
    p.uid = 0;
    p.kernel_layers = {"syscall"};
    p.uprobes = {{"STDIO", "fwrite", binary, 4096}};
    return probe_file_content(p);
  };
  std::string private_copy = dir / "private_lib.so";  // the scratch dir is root's alone
  std::filesystem::copy_file(STATIC_APP_BIN, private_copy);
  std::string readable = libc_probe("/usr/lib/x86_64-linux-gnu/libc.so.6"),
              unreadable = libc_probe(private_copy);
  std::string signed_path = shared + "/signed.json.gz", refusal_path = shared + "/refusal.txt";
  pid_t child = fork();
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
      _exit(10);
    auto ok = request_signature(socket, readable);
    auto refused = request_signature(socket, unreadable);
    std::ofstream(signed_path, std::ios::binary) << (ok ? *ok : std::string());
    std::ofstream(refusal_path) << (refused ? std::string("signed") : refused.error().message);
    _exit(ok && !refused ? 0 : 11);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  std::string refusal = read_file(refusal_path), signed_bytes = read_file(signed_path);
  std::filesystem::remove_all(shared);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << ": " << refusal;
  EXPECT_NE(refusal.find("cannot read " + private_copy), std::string::npos) << refusal;
  auto key = load_secret(secret, false);
  ASSERT_TRUE(key);
  auto verified = verify_probe_file(signed_bytes, *key);
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->uid, 65534u) << "signed for the uid the request claimed, not the caller's";
}

TEST_F(deploy_test, TrackRefusesStaticBinariesAndNonElfFiles)
{
  for (const auto& [file, mentions] :
       {std::pair<std::string, std::string>{STATIC_APP_BIN, "statically linked"},
        std::pair<std::string, std::string>{"/etc/passwd", "not an ELF file"}}) {
    std::string err = dir / "track.err";
    EXPECT_EQ(
        run_shell(bin_dir + "/datacrumbs_track --executable " + shell_quote(file) + " 2>" + shell_quote(err)),
        2);
    EXPECT_NE(read_file(err).find(mentions), std::string::npos) << read_file(err);
  }
}

TEST_F(deploy_test, BadProbeFilesRunIdsAndCallersAreRefused)
{
  auto expect_refused = [&](const std::string& args, int status, const std::string& mentions) {
    auto [got, err] = daemon_refuses(args);
    EXPECT_EQ(got, status) << err;
    EXPECT_NE(err.find(mentions), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(std::filesystem::exists(dir / "run")) << "a refused daemon got as far as its run directory";
  };
  // Tampered: one byte of the compressed file changed.
  std::string bytes = read_file(probes), tampered = dir / "tampered.json.gz";
  bytes[bytes.size() / 2] ^= 0x01;
  std::ofstream(tampered, std::ios::binary) << bytes;
  expect_refused(shell_quote(tampered) + " t1", 1, "refusing");
  // Signed with another secret.
  std::string foreign = dir / "foreign.json.gz";
  ASSERT_EQ(run_shell("DATACRUMBS_SECRET_FILE=" + shell_quote(dir / "other/key") + " " + bin_dir +
                      "/datacrumbs_probe_configurator " + shell_quote(config) + " " + shell_quote(foreign) +
                      " 2>/dev/null"),
            0);
  expect_refused(shell_quote(foreign) + " t2", 1, "signature");
  // Not signed at all.
  std::string unsigned_file = dir / "unsigned.json.gz";
  ASSERT_EQ(run_shell("echo '{\"content\":{}}' | gzip > " + shell_quote(unsigned_file)), 0);
  expect_refused(shell_quote(unsigned_file) + " t3", 1, "refusing");
  // Run ids that could leave the run directory.
  expect_refused(shell_quote(probes) + " ../escape", 2, "run id");
  expect_refused(shell_quote(probes) + " a/b", 2, "run id");
  // Not root.
  std::string e = dir / "nonroot.err";
  int got = run_shell("setpriv --reuid=65534 --regid=65534 --clear-groups " + std::string(DATACRUMBS_BIN) +
                      " " + shell_quote(probes) + " t4 2>" + shell_quote(e));
  EXPECT_EQ(got, 1) << read_file(e);
  EXPECT_NE(read_file(e).find("root"), std::string::npos) << read_file(e);
}

}  // namespace
}  // namespace dc::test
