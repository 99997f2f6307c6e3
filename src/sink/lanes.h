// Lanes: tracks of their own for work done for a thread but not on its call stack (block
// requests and journal commits per device, softirq network work). Viewers (Perfetto, Chrome's
// trace model) nest a thread's spans by time alone, so such work on the thread's track would
// appear inside whatever call the thread was making, and concurrent requests of one submitter
// would overlap partially, which no viewer can nest. A lane is a reserved thread id (above any
// Linux tid) of the process the work is charged to; spans on one lane never overlap, not even at
// an end point, so no viewer nests one in another. A process gets as many lanes per group as its
// most concurrent work needs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/event.h"

namespace dc {

class lane_table {
 public:
  // Linux tids stay below 2^22 (PID_MAX_LIMIT); lanes count up from here.
  static constexpr uint32_t first_tid = 0x40000000;
  // A group whose lanes all ended this long before a span is dropped, looked for once every
  // places_per_sweep spans (drop_idle).
  static constexpr uint64_t idle_us = 60'000'000;
  static constexpr uint32_t places_per_sweep = 4096;

  struct placement {
    uint32_t tid;
    bool fresh;    // the lane's first span: it needs its thread_name line
    size_t index;  // which lane of its group (for its name)
  };
  // The lane for a span [ts_us, end_us] of `kind` (device: on device `dev`) charged to `pid`.
  placement place(uint32_t pid, lane_kind kind, uint32_t dev, uint64_t ts_us, uint64_t end_us);

  // The name a lane's thread_name line gives it: "device 8:0 #1", "network #0".
  static std::string lane_name(lane_kind kind, uint32_t dev, size_t index);
  // The group a lane belongs to, without its index: "device 8:0", "network".
  static std::string group_name(lane_kind kind, uint32_t dev);

 private:
  struct lane {
    uint32_t tid;
    uint64_t end_us;  // where its last span ends: the next must start strictly after
  };
  // Drops the groups whose lanes all ended `idle_us` before ts_us: a process's lanes are kept
  // only while it has work on them (a later span gets a new lane), so a run that sees
  // thousands of processes write keeps the lanes of the last minute's.
  void drop_idle(uint64_t ts_us);

  std::map<std::tuple<uint32_t, lane_kind, uint32_t>, std::vector<lane>> groups_;
  uint32_t next_tid_ = first_tid;
  uint32_t places_ = 0;
};

}  // namespace dc
