// The signing secret (issue 15, security): every process that holds it is non-dumpable; a key file
// that is not root's alone is refused at start by each tool that reads it, with one line naming
// the file; and the key's bytes appear in no output: stderr and stdout of the service, the
// configurator and the daemon, their refusals, the signed files and a daemon's trace.
// Figures: docs/reliability.md.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "deploy/signing_service.h"
#include "runtime/sign_service_fixture.h"
#include "unit/trace_reader.h"

namespace dc::test {
namespace {

// The same fixture: the real service, a real second user.
struct secrets_test : sign_service_test {
  // Runs `command` (exec'd by a shell, core dumps unlimited) in DIR/NAME until `started`, then
  // SIGABRTs it: whether it left a core file there (core_pattern "core": the process's cwd).
  bool leaves_core(const std::string& name, const std::string& command, const std::function<bool()>& started)
  {
    std::string cwd = dir / name;
    std::filesystem::create_directories(cwd);
    EXPECT_EQ(run_shell("cd " + shell_quote(cwd) + " && (ulimit -c unlimited; exec " + command +
                        ") >/dev/null 2>err & echo $! > " + shell_quote(cwd + "/pid")),
              0);
    pid_t pid = std::atoi(read_file(cwd + "/pid").c_str());
    EXPECT_TRUE(wait_for(started)) << name << " did not start: " << read_file(cwd + "/err");
    EXPECT_EQ(kill(pid, SIGABRT), 0);
    EXPECT_TRUE(wait_for([&] { return !std::filesystem::exists("/proc/" + std::to_string(pid)); }));
    for (const auto& f : std::filesystem::directory_iterator(cwd))
      if (f.path().filename().string().starts_with("core"))
        return true;
    return false;
  }
};

// Killed by a signal that dumps core, with core dumps on: a process holding the key leaves none.
TEST_F(secrets_test, ProcessesHoldingTheSecretLeaveNoCoreDump)
{
  ASSERT_EQ(read_file("/proc/sys/kernel/core_pattern"), "core\n") << "the test reads cores from the cwd";
  // The check can fail: a dumpable process started the same way leaves its core.
  std::string marker = dir / "sleeping";
  ASSERT_TRUE(leaves_core("control", "sh -c 'touch " + marker + "; exec sleep 30'", [&] {
    return std::filesystem::exists(marker);
  })) << "no core from a dumpable process: the checks below prove nothing";
  EXPECT_FALSE(leaves_core("service",
                           "env DATACRUMBS_SIGN_SOCKET=" + socket + " " + bin_dir + "/datacrumbs_sign_probes",
                           [&] { return std::filesystem::exists(socket); }))
      << "the signing service dumped core with the key in it";
  std::filesystem::remove(socket);
  // The daemon (it reads the key to verify its probe file, then overwrites it).
  EXPECT_FALSE(leaves_core("daemon", std::string(DATACRUMBS_BIN) + " " + shell_quote(probes) + " dump1", [&] {
    return std::filesystem::exists(dir / "run/datacrumbs-dump1.ready");
  })) << "the daemon dumped core";
  if (!HasFailure())
    std::printf(
        "figure: secrets: SIGABRT with core dumps on: the signing service and the daemon left no core "
        "(a dumpable control process did)\n");
}

// Each tool that reads the secret, with a key file that is not root's alone.
TEST_F(secrets_test, AKeyFileThatIsNotRootsAloneIsRefusedAtStart)
{
  std::string bad = dir / "bad", key = bad + "/key", good_key = read_file(secret);
  struct setup {
    std::string name, says;
    std::function<void()> make;
  };
  auto write_key = [&](const std::string& bytes, mode_t mode, uid_t owner) {
    std::ofstream(key, std::ios::binary) << bytes;
    ASSERT_EQ(chown(key.c_str(), owner, 0), 0);
    ASSERT_EQ(chmod(key.c_str(), mode), 0);
  };
  std::vector<setup> setups = {
      {"group readable", "its mode 0440 lets group or others at it (chmod 0400)",
       [&] { write_key(good_key, 0440, 0); }},
      {"world readable", "its mode 0404 lets group or others at it (chmod 0400)",
       [&] { write_key(good_key, 0404, 0); }},
      {"group writable", "its mode 0420 lets group or others at it (chmod 0400)",
       [&] { write_key(good_key, 0420, 0); }},
      {"not root's", "it is owned by uid " + std::to_string(uid) + ", not root",
       [&] { write_key(good_key, 0400, uid); }},
      {"a symlink", "Too many levels of symbolic links",
       [&] { std::filesystem::create_symlink(secret, key); }},
      {"a directory", "it is not a regular file", [&] { std::filesystem::create_directory(key); }},
      {"a FIFO", "it is not a regular file", [&] { ASSERT_EQ(mkfifo(key.c_str(), 0400), 0); }},
      {"too short", "is too short (under 16 bytes)", [&] { write_key("12345678", 0400, 0); }},
  };
  int refusals = 0;
  for (const auto& s : setups) {
    std::filesystem::remove_all(bad);
    std::filesystem::create_directories(bad);
    s.make();
    std::string env =
        "DATACRUMBS_SECRET_FILE=" + shell_quote(key) + " DATACRUMBS_SIGN_SOCKET=" + socket + " ";
    std::string out = dir / "tool.out", err = dir / "tool.err", signed_out = dir / "refused.json.gz";
    for (const std::string& tool : {bin_dir + "/datacrumbs_sign_probes",
                                    std::string(DATACRUMBS_BIN) + " " + shell_quote(probes) + " k1",
                                    bin_dir + "/datacrumbs_probe_configurator " + shell_quote(config) + " " +
                                        shell_quote(signed_out)}) {
      int status =
          run_shell("timeout 10 env " + env + tool + " >" + shell_quote(out) + " 2>" + shell_quote(err));
      std::string said = read_file(err);
      EXPECT_EQ(status, 1) << s.name << ": " << tool << ": " << said;
      EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << s.name << ": " << said;
      EXPECT_NE(said.find("the signing secret " + key), std::string::npos) << s.name << ": " << said;
      EXPECT_NE(said.find(s.says), std::string::npos) << s.name << ": " << said;
      EXPECT_EQ(read_file(out), "") << s.name;
      refusals += status == 1;
    }
    EXPECT_FALSE(std::filesystem::exists(socket)) << s.name << ": the service listened";
    EXPECT_FALSE(std::filesystem::exists(signed_out)) << s.name << ": the configurator signed";
    EXPECT_FALSE(std::filesystem::exists(dir / "run"))
        << s.name << ": the daemon got as far as its run directory";
  }
  if (!HasFailure())
    std::printf(
        "figure: secrets: %zu bad key files x 3 tools (service, daemon, configurator): %d refused at start "
        "with one line naming the file\n",
        setups.size(), refusals);
}

// Every window of 8 key bytes (and of its hex, either case) looked for in `text`.
int key_pieces_in(const std::string& text, const std::string& key)
{
  static const char* digits[] = {"0123456789abcdef", "0123456789ABCDEF"};
  std::vector<std::string> forms = {key};
  for (const char* d : digits) {
    std::string hex;
    for (unsigned char c : key) {
      hex.push_back(d[c >> 4]);
      hex.push_back(d[c & 15]);
    }
    forms.push_back(hex);
  }
  int found = 0;
  for (const auto& form : forms)
    for (size_t at = 0; at + 8 <= form.size(); ++at)
      found += text.find(form.substr(at, 8)) != std::string::npos;
  return found;
}

TEST_F(secrets_test, TheKeyAppearsInNoOutputErrorOrTrace)
{
  std::string key = read_file(secret);
  ASSERT_EQ(key.size(), 32u);
  std::vector<std::pair<std::string, std::string>> outputs;
  start_service();
  // Signed, refused (unreadable binary, malformed request, a claim of root's uid) as the user.
  for (const std::string& content :
       {request_content(0), request_content(uid, secret), std::string("{\"uid\":0"), std::string(1, '\0')})
    outputs.emplace_back("a client's answer", ask_as(uid, gid, socket, content));
  // The configurator as root (signs with the key itself), then with a foreign key.
  std::string signed_path = dir / "root.json.gz";
  run_shell(bin_dir + "/datacrumbs_probe_configurator " + shell_quote(config) + " " +
            shell_quote(signed_path) + " >" + shell_quote(dir / "conf.out") + " 2>" +
            shell_quote(dir / "conf.err"));
  outputs.emplace_back("configurator stdout", read_file(dir / "conf.out"));
  outputs.emplace_back("configurator stderr", read_file(dir / "conf.err"));
  outputs.emplace_back("signed file", read_gzip_members(signed_path).text);
  // The daemon: a run with a traced program (which reads the key file's directory), and a refusal.
  auto info = start_daemon(probes, "keys1");
  ASSERT_FALSE(info.is_null());
  outputs.emplace_back("ready file", info.dump());
  run_shell(bin_dir + "/datacrumbs_wrap ls -l " + shell_quote(std::filesystem::path(secret).parent_path()) +
            " >/dev/null");
  stop_daemon("keys1");
  outputs.emplace_back("daemon stderr", read_file(dir / "d.err"));
  outputs.emplace_back("daemon trace", read_gzip_members(expected_trace_path("keys1")).text);
  std::string tampered = dir / "tampered.json.gz", bytes = read_file(probes);
  bytes[bytes.size() / 2] ^= 1;
  std::ofstream(tampered, std::ios::binary) << bytes;
  outputs.emplace_back("daemon refusal", daemon_refuses(shell_quote(tampered) + " keys2").second);
  EXPECT_TRUE(stop_service());
  outputs.emplace_back("service stdout", read_file(dir / "sign.out"));
  outputs.emplace_back("service stderr", read_file(dir / "sign.err"));

  size_t bytes_searched = 0;
  for (const auto& [what, text] : outputs) {
    EXPECT_FALSE(text.empty() && what == "daemon trace") << "no trace to search";
    EXPECT_EQ(key_pieces_in(text, key), 0) << "a piece of the key in the " << what;
    bytes_searched += text.size();
  }
  // The search can fail: the key written into a text is found.
  EXPECT_GT(key_pieces_in(std::string("x").append(key.substr(10, 8)).append("y"), key), 0);
  if (!HasFailure())
    std::printf(
        "figure: secrets: %zu outputs (%zu bytes) searched for every 8-byte piece of the key, raw and hex: "
        "none found\n",
        outputs.size(), bytes_searched);
}

}  // namespace
}  // namespace dc::test
