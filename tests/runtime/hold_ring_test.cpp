// The hold ring filled on purpose. With user-space probes (the default config's stdio) every new
// process is held until its links attach, and its end is told to the tool on the same small ring
// (bpf/task_record.bpf.h). An end that finds the ring full is lost (lost_gone_unsaid); the links
// of that process must still close while the tool runs, not at its end. The ring is made one page
// (DATACRUMBS_HOLD_RING_KB=4: 256 records) and a traced parent forks children without waiting
// for them, so that holds pile up faster than the tool takes them; the parent lives on after its
// children, and meanwhile the tool must hold the parent's links only. Figures:
// docs/reliability.md.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/process_tree.h"
#include "runtime/runtime_helpers.h"
#include "runtime/storm_fixture.h"

namespace dc::test {
namespace {

using clock_type = std::chrono::steady_clock;

// Waits (at most `longest`) until `done` holds, looking every 10 ms; whether it did.
template <class Fn>
bool wait_until(Fn done, std::chrono::milliseconds longest)
{
  auto give_up = clock_type::now() + longest;
  while (!done()) {
    if (clock_type::now() >= give_up)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void touch(const std::string& path)
{
  std::ofstream(path).put('\n');
}

// One run of `storm_workload flood` under the default config and a one-page hold ring.
struct flood_run {
  traced_run run;
  pid_t parent = 0, tool = 0;
  int before = -1;           // the tool's uprobe links while the parent alone runs
  int children_failed = -1;  // children that did not exit 0 (the workload's count)
  int left = -1;             // links of exited processes the tool still held at the end of the bound
  double settled_s = -1;     // from the last child reaped to the tool holding the parent's links only
  std::string stopped;       // processes of the workload stopped once its storm ended (or did not)
};

// The bound within which the links of every exited child must be closed.
constexpr std::chrono::seconds links_bound{10};

flood_run flood(const storm& s, int children)
{
  flood_run r;
  const scratch_dir& dir = s.dir;
  std::string ready = dir / "ready", stormed = dir / "stormed";
  std::thread tool([&] {
    r.run = trace_command(dir,
                          s.workload("flood " + shell_quote(s.data) + " " + std::to_string(children) + " " +
                                     shell_quote(dir.path)),
                          "", [](const std::string& line) { return "DATACRUMBS_HOLD_RING_KB=4 " + line; });
  });
  if (wait_until([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(60))) {
    r.parent = std::atoi(read_file(ready).c_str());
    auto tools = processes_with_argument(dir / "trace.pfw.gz");
    r.tool = tools.size() == 1 ? tools.front() : 0;
    if (r.tool)
      r.before = uprobe_links_of(r.tool);
  }
  touch(dir / "start");
  if (r.parent && wait_until([&] { return std::filesystem::exists(stormed); }, std::chrono::seconds(300))) {
    r.children_failed = std::atoi(read_file(stormed).c_str());
    auto reaped = clock_type::now();
    if (r.tool && wait_until([&] { return uprobe_links_of(r.tool) <= r.before; }, links_bound))
      r.settled_s = std::chrono::duration<double>(clock_type::now() - reaped).count();
    if (r.tool)
      r.left = uprobe_links_of(r.tool) - r.before;
  }
  if (r.parent)
    for (const std::string& p : stopped_in_tree(r.parent)) r.stopped += p + " ";
  if (r.parent && r.children_failed < 0)
    kill_tree(r.parent);  // its storm never ended: the tool then ends, and with it this run
  touch(dir / "go");
  tool.join();
  return r;
}

// Storms of growing size until the ends of held processes were lost: a child that found the ring
// full at its fork ran unheld, without links (lost_not_held), and its end may be lost too, so
// only ends lost beyond those (lost_gone_unsaid > lost_not_held) are ends of processes that had
// links. In every storm, the links of the exited children are all closed within links_bound of
// the last one's end.
TEST_F(storm, LinksOfProcessesWhoseEndWasLostCloseDuringTheRun)
{
  const int first = env_or("DC_HOLD_FLOOD_CHILDREN", 4000), most = 64000;
  for (int children = first;; children *= 2) {
    SCOPED_TRACE(std::to_string(children) + " children");
    flood_run f = flood(*this, children);
    ASSERT_GT(f.parent, 0) << "the workload never started: " << f.run.err;
    ASSERT_GT(f.tool, 0) << "the tool's process was not found";
    ASSERT_TRUE(f.stopped.empty()) << "left stopped: " << f.stopped;
    ASSERT_EQ(f.children_failed, 0) << "children that did not exit 0, or the storm never ended";
    EXPECT_EQ(f.run.exit_code, 0) << f.run.err;
    ASSERT_GT(f.before, 0) << "the traced parent has no uprobe link: nothing here could fail";
    EXPECT_EQ(f.left, 0) << "links of exited processes still held " << links_bound.count()
                         << " s after the last one ended";
    ASSERT_TRUE(f.run.summary.contains("events")) << f.run.err;
    const auto& events = f.run.summary["events"];
    uint64_t unsaid = events.value("lost_gone_unsaid", uint64_t{0});
    uint64_t not_held = events.value("lost_not_held", uint64_t{0});
    auto swept =
        f.run.summary.value(nlohmann::json::json_pointer("/uprobes/swept"), nlohmann::json::object());
    std::printf(
        "figure: hold ring of 4 KiB, %d children forked without waiting: lost_gone_unsaid %ju, "
        "lost_not_held %ju, %ju processes' %ju links swept (%ju sweeps, longest %ju us); the tool "
        "held the parent's %d links only %.2f s after the last child ended, %d of exited processes "
        "left; %.1f s, exit %d\n",
        children, static_cast<uintmax_t>(unsaid), static_cast<uintmax_t>(not_held),
        swept.value("processes", uintmax_t{0}), swept.value("links", uintmax_t{0}),
        swept.value("sweeps", uintmax_t{0}), swept.value("longest_us", uintmax_t{0}), f.before, f.settled_s,
        f.left, (f.run.end_us - f.run.start_us) / 1e6, f.run.exit_code);
    if (unsaid > not_held) {
      // Each held process whose end was lost had links, which nothing but a sweep closes before
      // the end.
      EXPECT_GE(swept.value("processes", uint64_t{0}), unsaid - not_held);
      break;
    }
    ASSERT_LT(children * 2, most) << "no end of a held process was lost: the hold ring never overflowed";
  }
}

}  // namespace
}  // namespace dc::test
