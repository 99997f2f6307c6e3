// The block layer on a raw device stacked on a file system: a loop device ("inner") whose image
// lies on an ext4 mounted from another loop device ("outer"). Writes through the inner device's
// own page cache are charged once, to the writer, on the inner device; and with the outer file
// system frozen, the inner device's requests stay in flight past the end of tracing, which the
// summary must say (lost_block_unended) rather than leave out without a word.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <sstream>
#include <string>

#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr uint64_t written = 64 * 1024;

struct block_end_test : runtime_test {
  std::unique_ptr<loop_fs> outer, inner;
  int held = -1;
  void SetUp() override
  {
    runtime_test::SetUp();
    outer = std::make_unique<loop_fs>(dir.path, "ext4", 64);
    inner = std::make_unique<loop_fs>(outer->mount_point(), "raw", 16);
    // Held open, so that the writer's close is not the device's last one, which would wait
    // for its cache to be written back.
    held = open(inner->device().c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
  }
  void TearDown() override
  {
    if (held >= 0)
      close(held);
    inner.reset();
    outer.reset();
  }

  // xfs_io on the inner device: a 64 KiB buffered write, then `then` (an xfs_io command).
  traced_run write_inner(const std::string& then)
  {
    return trace_command(dir, "xfs_io -c 'pwrite -q 0 " + std::to_string(written) + "' -c '" + then + "' " +
                                  shell_quote(inner->device()));
  }
};

// The BLOCK events of a run on `fs`'s device: their bytes, and the pids they are charged to.
struct device_writes {
  uint64_t bytes = 0, events = 0;
  std::set<uint32_t> pids;
};

device_writes writes_on(const traced_run& run, const loop_fs& fs)
{
  device_writes w;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "BLOCK" && e["name"] == "write" && e["args"]["major"] == fs.device_major() &&
        e["args"]["minor"] == fs.device_minor()) {
      w.bytes += e["args"]["bytes"].get<uint64_t>();
      ++w.events;
      w.pids.insert(e["pid"].get<uint32_t>());
    }
  return w;
}

uint64_t writes_in_flight(const loop_fs& fs)
{
  std::istringstream in(
      read_file("/sys/block/" + fs.device().substr(fs.device().rfind('/') + 1) + "/inflight"));
  uint64_t reads = 0, writes = 0;
  in >> reads >> writes;
  return writes;
}

// Freezes a mounted file system while it lives: writes to it wait until it is thawed.
struct frozen {
  std::string mount;
  bool done = false;
  explicit frozen(std::string m) : mount(std::move(m))
  {
    done = run_shell("fsfreeze -f " + shell_quote(mount)) == 0;
  }
  ~frozen()
  {
    if (done)
      run_shell("fsfreeze -u " + shell_quote(mount));
  }
};

TEST_F(block_end_test, BufferedWritesToARawDeviceAreChargedToTheWriterOnce)
{
  disk_counters before = inner->counters(), outer_before = outer->counters();
  auto run = write_inner("fsync");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  disk_counters after = inner->counters(), outer_after = outer->counters();
  auto w = writes_on(run, *inner);
  EXPECT_EQ(w.bytes, (after.sectors_written - before.sectors_written) * 512);
  EXPECT_EQ(w.bytes, written);
  EXPECT_EQ(w.pids, std::set<uint32_t>{pid_of_command(run, "xfs_io")});
  // The outer device wrote the same pages again for the loop device's worker: not the writer's.
  EXPECT_GE((outer_after.sectors_written - outer_before.sectors_written) * 512, written);
  EXPECT_EQ(writes_on(run, *outer).events, 0u);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
  EXPECT_EQ(run.summary["events"]["lost_block_unended"], 0);
}

TEST_F(block_end_test, ARequestStillInFlightWhenTracingStopsIsCountedApart)
{
  uint64_t stuck = 0;
  traced_run run;
  {
    frozen thaw_at_end(outer->mount_point());
    ASSERT_TRUE(thaw_at_end.done);
    // Write-back started and not waited for: the inner device's worker then waits on the frozen
    // file system, the request in flight, while xfs_io exits and tracing stops.
    run = write_inner("sync_range -w 0 " + std::to_string(written));
    stuck = writes_in_flight(*inner);
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_GT(stuck, 0u) << "no write of the inner device was in flight";
  EXPECT_EQ(run.summary["events"]["lost_block_unended"], stuck);
  EXPECT_EQ(run.summary["events"]["lost"], 0) << "a request in flight is not lost from the traced window";
  EXPECT_EQ(writes_on(run, *inner).events, 0u);
  EXPECT_NE(run.err.find("not seen to end when tracing stopped (in flight, or ended unseen): " +
                         std::to_string(stuck)),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace dc::test
