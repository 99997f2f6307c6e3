// A run's loaded object kept for the next (probe/object_keeper.h): the next run configured the
// same way takes it instead of loading, and counts exactly what a fresh load counts; another
// configuration loads and keeps its own beside it, up to four, the least recently used going
// first; a keeper goes after its idle time; --keep-loaded 0 keeps nothing.
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/process_tree.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr const char* taken_line = "the object was taken from its keeper, not loaded";

// Whether a keeper of this user's is listening (its abstract socket in /proc/net/unix, one name
// per configuration: @datacrumbs-keeper-UID-HASH).
bool keeper_listening()
{
  std::ifstream in("/proc/net/unix");
  std::string line, name = "@datacrumbs-keeper-" + std::to_string(geteuid()) + "-";
  while (std::getline(in, line))
    if (line.find(name) != std::string::npos)
      return true;
  return false;
}

bool wait_for(bool listening, std::chrono::seconds within)
{
  auto end = std::chrono::steady_clock::now() + within;
  while (keeper_listening() != listening) {
    if (std::chrono::steady_clock::now() > end)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Keepers alive, once those told to go have gone (a keeper exits as soon as it is told, or has
// handed its object over).
int keepers(int expected)
{
  int n = -1;
  for (int i = 0; i < 250 && n != expected; ++i) {
    if (i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    n = run_shell("exit $(pgrep -c -x dc-keeper)");
  }
  return n;
}

void stop_keepers()
{
  run_shell("pkill -x dc-keeper");
  ASSERT_TRUE(wait_for(false, std::chrono::seconds(5)));
}

struct file_counts {
  uint64_t writes = 0, bytes = 0;
};

// The write calls to `path` in a trace, and their bytes.
file_counts writes_to(const traced_run& run, const std::string& path)
{
  uint64_t hash = 0;
  for (const auto& [h, p] : file_names(run.trace))
    if (p == path)
      hash = h;
  file_counts c;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "POSIX" && e["name"] == "write" && e["args"].contains("fhash") &&
        e["args"]["fhash"].get<uint64_t>() == hash) {
      ++c.writes;
      c.bytes += e["args"]["ret"].get<int64_t>();
    }
  return c;
}

TEST_F(runtime_test, KeptObjectIsTakenByTheNextRunAndCountsAsAFreshLoad)
{
  stop_keepers();
  std::string out = dir / "out.bin";
  std::string dd = "dd if=/dev/zero of=" + shell_quote(out) + " bs=4096 count=50 status=none";
  auto fresh = trace_command(dir, dd, "-v");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err.substr(0, 2000);
  EXPECT_EQ(fresh.err.find(taken_line), std::string::npos);
  EXPECT_EQ(fresh.summary["bpf_object"], "loaded");
  ASSERT_TRUE(wait_for(true, std::chrono::seconds(10))) << "no keeper after the run";
  for (int run = 0; run < 2; ++run) {
    auto kept = trace_command(dir, dd, "-v");
    ASSERT_EQ(kept.exit_code, 0) << kept.err.substr(0, 2000);
    EXPECT_NE(kept.err.find(taken_line), std::string::npos) << kept.err.substr(0, 2000);
    EXPECT_EQ(kept.summary["bpf_object"], "taken from a keeper");
    auto a = writes_to(fresh, out), b = writes_to(kept, out);
    EXPECT_EQ(a.writes, 50u);
    EXPECT_EQ(a.bytes, 50u * 4096);
    EXPECT_EQ(b.writes, 50u);
    EXPECT_EQ(b.bytes, 50u * 4096);
    EXPECT_EQ(kept.summary["events"]["lost"], 0) << kept.summary.dump();
    ASSERT_TRUE(wait_for(true, std::chrono::seconds(10))) << "the taking run kept no object";
  }
  EXPECT_EQ(keepers(1), 1);
}

// The keeper's argv, one string each (its plan is the fourth: keep_object).
std::vector<std::string> keeper_argv()
{
  std::vector<std::string> argv;
  auto pids = processes_with_argument("__keep-object");
  if (pids.size() != 1)
    return argv;
  std::istringstream in(read_file("/proc/" + std::to_string(pids[0]) + "/cmdline"));
  for (std::string a; std::getline(in, a, '\0');) argv.push_back(a);
  argv.push_back(std::to_string(pids[0]));
  return argv;
}

// STDIO fwrite events in a trace.
int fwrites_in(const traced_run& run)
{
  int n = 0;
  for (const auto& e : complete_events(run.trace)) n += e["cat"] == "STDIO" && e["name"] == "fwrite";
  return n;
}

// The traced command's uprobe links are not closed by the run (a uprobe link's release waits for
// RCU grace periods): its keeper closes them before it resets the object, and the next run,
// taking the object, counts the same stdio calls exactly.
TEST_F(runtime_test, TheCommandsUprobeLinksAreClosedByTheKeeperAndTheNextRunCountsTheSame)
{
  stop_keepers();
  constexpr int fwrites = 20;  // stdio_app: N fwrites, one more after its longjmp
  std::string app =
      std::string(STDIO_APP_BIN) + " " + shell_quote(dir / "out.txt") + " " + std::to_string(fwrites);
  auto fresh = trace_command(dir, app);
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err.substr(0, 2000);
  EXPECT_EQ(fresh.summary["bpf_object"], "loaded");
  EXPECT_EQ(fwrites_in(fresh), fwrites + 1);
  ASSERT_TRUE(wait_for(true, std::chrono::seconds(10))) << "no keeper after the run";
  auto argv = keeper_argv();
  ASSERT_EQ(argv.size(), 7u) << "one keeper, started as keep_object starts it; found "
                             << processes_with_argument("__keep-object").size()
                             << " processes with the keeper's argument, a keeper listening: "
                             << keeper_listening();
  int links = 0;
  std::istringstream plan(argv[3]);
  for (std::string item; std::getline(plan, item, ',');) links += item.starts_with("l");
  EXPECT_GT(links, 0) << "the command's uprobe links went to the keeper: " << argv[3];
  pid_t keeper = std::stoi(argv[6]);
  int open_links = -1;
  for (int i = 0; i < 250 && open_links != 0; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(20)))
    open_links = uprobe_links_of(keeper);
  EXPECT_EQ(open_links, 0) << "the keeper closed them";
  auto next = trace_command(dir, app);
  ASSERT_EQ(next.exit_code, 0) << next.err.substr(0, 2000);
  EXPECT_EQ(next.summary["bpf_object"], "taken from a keeper");
  EXPECT_EQ(fwrites_in(next), fwrites + 1);
  EXPECT_EQ(next.summary["events"]["lost"], 0);
}

// On a kernel that refuses a program (here the uprobe session program, refused as a kernel
// before 6.13 refuses it), a run remembers the refusal and the next one configured so leaves it
// out at once (probe/refusal_memory.h): it asks the keeper for what loaded, and takes it.
TEST_F(runtime_test, OnAKernelThatRefusesAProgramTheNextRunStillTakesTheKeptObject)
{
  stop_keepers();
  run_shell("rm -f /var/cache/datacrumbs/refused-*");
  setenv("DATACRUMBS_NO_UPROBE_SESSION", "1", 1);
  std::string app = std::string(STDIO_APP_BIN) + " " + shell_quote(dir / "out.txt") + " 5";
  auto first = trace_command(dir, app, "-v");
  auto second = trace_command(dir, app, "-v");
  unsetenv("DATACRUMBS_NO_UPROBE_SESSION");
  ASSERT_EQ(first.exit_code, 0) << first.err.substr(0, 2000);
  ASSERT_EQ(second.exit_code, 0) << second.err.substr(0, 2000);
  EXPECT_NE(first.err.find("bpf_session_is_return is not allowed"), std::string::npos) << "refused";
  EXPECT_EQ(second.err.find("bpf_session_is_return is not allowed"), std::string::npos) << "not tried again";
  EXPECT_NE(second.err.find("left out what this kernel refused"), std::string::npos)
      << second.err.substr(0, 2000);
  EXPECT_EQ(second.summary["bpf_object"], "taken from a keeper");
  for (const auto* run : {&first, &second}) {
    EXPECT_EQ(run->summary["uprobes"]["calls_linked_as"], "entry and return");
    EXPECT_EQ(fwrites_in(*run), 6);
    EXPECT_EQ(run->summary["events"]["lost"], 0);
  }
}

// Back to back (a script's commands): the next run starts while the keeper still resets the
// object, waits for it, and takes it.
TEST_F(runtime_test, ARunRightAfterAnotherTakesItsObject)
{
  stop_keepers();
  ASSERT_EQ(trace_command(dir, "true").exit_code, 0);
  for (int i = 0; i < 3; ++i) {
    auto next = trace_command(dir, "true");
    ASSERT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(next.summary["bpf_object"], "taken from a keeper") << "run " << i;
  }
}

// Whether a verbose run took its object from a keeper.
bool took_kept(const traced_run& run)
{
  return run.err.find(taken_line) != std::string::npos && run.summary["bpf_object"] == "taken from a keeper";
}

// Configurations a user alternates between each keep their own object: a run of either, after
// the other's, takes its own configuration's.
TEST_F(runtime_test, AnotherConfigurationKeepsItsOwnObjectBesideTheFirst)
{
  stop_keepers();
  ASSERT_EQ(trace_command(dir, "true").exit_code, 0);
  ASSERT_TRUE(wait_for(true, std::chrono::seconds(10)));
  auto other = trace_command(dir, "true", "-v --layers syscall");
  ASSERT_EQ(other.exit_code, 0);
  EXPECT_FALSE(took_kept(other)) << other.err.substr(0, 2000);
  EXPECT_NE(other.err.find("no object of this configuration is kept"), std::string::npos)
      << other.err.substr(0, 2000);
  EXPECT_EQ(keepers(2), 2) << "each configuration's object is kept";
  for (int round = 0; round < 2; ++round) {
    auto first = trace_command(dir, "true", "-v");
    EXPECT_TRUE(took_kept(first)) << "round " << round << ": " << first.err.substr(0, 2000);
    auto second = trace_command(dir, "true", "-v --layers syscall");
    EXPECT_TRUE(took_kept(second)) << "round " << round << ": " << second.err.substr(0, 2000);
  }
  EXPECT_EQ(keepers(2), 2);
}

// At most four objects stay kept: a fifth configuration's keeper makes the least recently used
// one go, and only that one.
TEST_F(runtime_test, AtMostFourConfigurationsStayKeptTheLeastRecentlyUsedGoingFirst)
{
  stop_keepers();
  const std::vector<std::string> configs = {"", "--layers syscall", "--mode profile",
                                            "--mode profile --layers syscall", "--layers syscall,fs"};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(trace_command(dir, "true", configs[i]).exit_code, 0) << configs[i];
    ASSERT_EQ(keepers(static_cast<int>(i + 1)), static_cast<int>(i + 1)) << "after " << configs[i];
  }
  // The first configuration is used again: the second is now the least recently used.
  auto again = trace_command(dir, "true", "-v");
  ASSERT_TRUE(took_kept(again)) << again.err.substr(0, 2000);
  ASSERT_EQ(keepers(4), 4);
  auto fifth = trace_command(dir, "true", "-v " + configs[4]);
  ASSERT_EQ(fifth.exit_code, 0);
  EXPECT_FALSE(took_kept(fifth));
  EXPECT_EQ(keepers(4), 4) << "four stay";
  for (size_t i : {0, 2, 3, 4}) {
    auto kept = trace_command(dir, "true", "-v " + configs[i]);
    EXPECT_TRUE(took_kept(kept)) << configs[i] << ": " << kept.err.substr(0, 2000);
  }
  auto gone = trace_command(dir, "true", "-v " + configs[1]);
  EXPECT_FALSE(took_kept(gone)) << "the least recently used configuration's keeper went";
  EXPECT_EQ(keepers(4), 4);
  stop_keepers();
}

TEST_F(runtime_test, AKeeperGoesAfterItsIdleTimeAndNoneIsMadeWithKeepLoadedZero)
{
  stop_keepers();
  ASSERT_EQ(trace_command(dir, "true", "--keep-loaded 1").exit_code, 0);
  ASSERT_TRUE(wait_for(true, std::chrono::seconds(10)));
  EXPECT_TRUE(wait_for(false, std::chrono::seconds(5))) << "the keeper outlived its idle time";
  EXPECT_EQ(keepers(0), 0);
  ASSERT_EQ(trace_command(dir, "true", "--keep-loaded 0").exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(keeper_listening());
  EXPECT_EQ(keepers(0), 0);
}

}  // namespace
}  // namespace dc::test
