// Darshan's POSIX state machine, replayed over one process's file calls in call order. Darshan
// updates its counters inside the traced call; here the same rules run over the trace's events:
// the file position per descriptor (open: 0, O_APPEND: unknown; lseek: its return value;
// read/write: + bytes moved; pread/pwrite: their offset argument, position unchanged), and per
// file the last byte read and written, the last operation's kind and the end of the last timed
// call of each kind (read, write, metadata) for Darshan's non-overlapping time sums.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyze/darshan_record.h"

namespace dc::analyze {

enum class posix_kind : uint8_t { open, dup, close, read, write, seek, stat, mmap, fsync, fdatasync };

// The POSIX call a trace line names, or nothing for calls without a Darshan counter.
std::optional<posix_kind> posix_kind_of(std::string_view name);

// A file call, as little as the replay needs (kept for every call until the replay).
struct posix_op {
  int64_t ts_us = 0;
  int64_t dur_us = 0;
  uint64_t fhash = 0;
  int64_t ret = 0;
  int64_t offset = -1;  // pread/pwrite's offset; -1: none
  int64_t flags = 0;    // open's or mmap's flags
  int64_t id = 0;       // the line's id: call order among a thread's calls at the same microsecond
  uint32_t tid = 0;
  int32_t fd = -1;  // the descriptor the call used (dup: the old one)
  posix_kind kind = posix_kind::open;
  bool has_ret = true;  // DFTracer's stat wrappers carry no return value
};

// Replays `ops` (sorted here by start time, thread, id) and adds each file's counters into `out`.
void replay_process(std::vector<posix_op>& ops, std::map<uint64_t, darshan_record>& out);

}  // namespace dc::analyze
