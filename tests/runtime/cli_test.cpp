// How the tool behaves as a command: exit status, signals, and bad input.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

std::string tool()
{
  return DATACRUMBS_BIN;
}

TEST_F(runtime_test, ExitsWithTheCommandsStatus)
{
  auto seven = trace_command(dir, "sh -c 'exit 7'");
  EXPECT_EQ(seven.exit_code, 7);
  // The program the kernel opened for the exec is named in the trace like an opened file.
  std::string sh = std::filesystem::canonical("/bin/sh").string();
  bool named = false;
  for (const auto& [hash, path] : file_names(seven.trace)) named |= path == sh;
  EXPECT_TRUE(named) << sh << " has no FH line";
  // A list option just before "--" leaves the command's own options alone.
  EXPECT_EQ(trace_command(dir, "sh -c 'exit 5'", "--system X=nothing --layers syscall,fs").exit_code, 5);
  auto killed = trace_command(dir, "sh -c 'kill -TERM $$'");
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM);
  EXPECT_TRUE(killed.trace.closed);
  EXPECT_EQ(killed.summary["exit_code"], 128 + SIGTERM);
}

TEST_F(runtime_test, SigtermReachesTheCommandAndTheTraceIsCompleted)
{
  std::string trace = dir / "trace.pfw.gz";
  pid_t t = fork();
  if (t == 0) {
    execl(DATACRUMBS_BIN, DATACRUMBS_BIN, "run", "-o", trace.c_str(), "--", "sleep", "30",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(t, SIGTERM), 0);
  int status = 0;
  waitpid(t, &status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(parse_trace_text(read_gzip_members(trace).text).closed);
}

// One line on stderr, a non-zero status, the command never run, nothing written.
void expect_refused(const scratch_dir& dir, const std::string& args, int status, const std::string& mentions)
{
  std::string err = dir / "err.txt";
  std::string marker = dir / "ran";
  int got = run_shell(tool() + " " + args + " 2>" + shell_quote(err));
  std::string text = read_file(err);
  EXPECT_EQ(got, status) << text;
  EXPECT_NE(text.find(mentions), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
}

TEST_F(runtime_test, BadInputGetsOneClearLine)
{
  std::string touch = "touch " + shell_quote(dir / "ran");
  expect_refused(dir, "run --bogus -- " + touch, 2, "--bogus");
  expect_refused(dir, "run -o /nonexistent-dir/t.pfw.gz -- " + touch, 2, "/nonexistent-dir/t.pfw.gz");
  expect_refused(dir,
                 "run --summary /nonexistent-dir/s.json -o " + shell_quote(dir / "t.pfw.gz") + " -- " + touch,
                 2, "/nonexistent-dir/s.json");
  EXPECT_FALSE(std::filesystem::exists(dir / "t.pfw.gz")) << "a trace was left behind";
  expect_refused(dir, "run -o " + shell_quote(dir / "t.pfw.gz") + " -- no-such-command-xyz", 127,
                 "no-such-command-xyz");
  EXPECT_FALSE(std::filesystem::exists(dir / "t.pfw.gz"));
  expect_refused(dir, "frobnicate", 2, "frobnicate");
  expect_refused(dir, "run --layers syscall,nosuchlayer -- " + touch, 2, "nosuchlayer");
  expect_refused(dir, "run --system 'X=([bad' -- " + touch, 2, "([bad");
  // Probe configs and the explorer.
  expect_refused(dir, "run --config /nonexistent/p.yaml -o " + shell_quote(dir / "t.pfw.gz") + " -- " + touch,
                 2, "/nonexistent/p.yaml");
  EXPECT_FALSE(std::filesystem::exists(dir / "t.pfw.gz"));
  std::string bad_config = dir / "bad.yaml";
  std::ofstream(bad_config)
      << "capture_probes:\n  - name: X\n    probe: uprobe\n    file: libc.so.6\n    regex: '(['\n";
  expect_refused(dir, "run --config " + shell_quote(bad_config) + " -- " + touch, 2, "capture_probes[0]");
  // Profile mode's settings, on the command line and in a config.
  expect_refused(dir, "run --mode fast -- " + touch, 2, "--mode");
  expect_refused(dir, "run --mode profile --interval-ms 5 -- " + touch, 2, "--interval-ms");
  std::ofstream(bad_config) << "mode: fast\ncapture_probes:\n  - name: POSIX\n    probe: syscalls\n";
  expect_refused(dir, "run --config " + shell_quote(bad_config) + " -- " + touch, 2, "mode must be");
  std::ofstream(bad_config)
      << "mode: profile\ninterval_ms: 0\ncapture_probes:\n  - name: POSIX\n    probe: syscalls\n";
  expect_refused(dir, "run --config " + shell_quote(bad_config) + " -- " + touch, 2, "interval_ms");
  expect_refused(dir, "explore /etc/passwd", 2, "not an ELF file");
  expect_refused(dir, "explore libc.so.6 --regex '('", 2, "--regex");
  expect_refused(dir, "explore", 2, "explore");
  EXPECT_FALSE(std::filesystem::exists(dir / "ran")) << "a refused run started the command";
}

TEST_F(runtime_test, ExploreListsTheFunctionsARegexSelects)
{
  std::string out = dir / "functions.txt";
  ASSERT_EQ(run_shell(tool() + " explore libc.so.6 --regex 'f(open|write|close)' > " + shell_quote(out)), 0);
  EXPECT_EQ(read_file(out), "fclose\nfopen\nfwrite\n");
  // USDT probes, from the binary's SDT notes.
  ASSERT_EQ(run_shell(tool() + " explore --usdt " USDT_APP_BIN " > " + shell_quote(out)), 0);
  EXPECT_EQ(read_file(out), "dctest:done\ndctest:tick\n");
}

TEST_F(runtime_test, RefusesWithoutPrivilegesAndWritesNothing)
{
  std::filesystem::permissions(dir.path, std::filesystem::perms::all);
  std::string err = dir / "err.txt";
  int got = run_shell("setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all " + tool() +
                      " run -o " + shell_quote(dir / "t.pfw.gz") + " -- touch " + shell_quote(dir / "ran") +
                      " 2>" + shell_quote(err));
  std::string text = read_file(err);
  EXPECT_NE(got, 0);
  EXPECT_NE(text.find("root"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
  EXPECT_FALSE(std::filesystem::exists(dir / "t.pfw.gz"));
}

}  // namespace
}  // namespace dc::test
