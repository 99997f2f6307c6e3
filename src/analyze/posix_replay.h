// Darshan's POSIX state machine, replayed over one process's file calls in call order. Darshan
// updates its counters inside the traced call; here the same rules run over the trace's events:
// the file position per descriptor (open: 0, O_APPEND: unknown; lseek: its return value;
// read/write: + bytes moved; pread/pwrite: their offset argument, position unchanged), and per
// file the last byte read and written, the last operation's kind and the end of the last timed
// call of each kind (read, write, metadata) for Darshan's non-overlapping time sums.
#pragma once

#include <cstdint>
#include <deque>
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

// Darshan's runtime state of one process: its descriptors and, per file, the record and the
// last byte read and written, the last operation's kind and the ends of the last timed calls.
class process_replay {
 public:
  void apply(const posix_op& op, bool late = false);  // late: replayed after a later call
  // Adds each file's counters into `out`.
  void add_records_to(std::map<uint64_t, darshan_record>& out) const;

 private:
  struct description {
    std::optional<int64_t> pos;  // the file position, when the trace establishes it
    uint32_t fds = 0;            // descriptors sharing it; 0: free for reuse
  };
  struct open_fd {
    uint64_t fhash;
    size_t desc;
  };
  struct file_state {
    darshan_record rec;
    int64_t last_byte_read = 0, last_byte_written = 0;
    int last_io = 0;  // 0 none, 1 read, 2 write
    int64_t last_read_end = 0, last_write_end = 0, last_meta_end = 0;
  };

  size_t new_desc(std::optional<int64_t> pos);
  void bind(int32_t fd, uint64_t fhash, size_t desc);  // fd now refers to desc
  void unbind(int32_t fd);
  open_fd& fd_of(const posix_op& op);
  void data(const posix_op& op, file_state& f, int64_t tm1, int64_t tm2);

  std::unordered_map<uint64_t, file_state> files_;
  std::unordered_map<int32_t, open_fd> fds_;
  std::vector<description> descs_;
  std::vector<size_t> free_descs_;
};

// One process's calls in call order: lines arrive in each thread's order but threads' lines
// interleave late (the kernel hands records over in per-thread batches), so each thread's
// calls wait in its queue and the earliest head (by start time, thread, id) is replayed when
// more than `window` calls wait, or at flush. A call that arrives after a later one was
// replayed (its thread's batch came more than a window late) is replayed at once and counted in
// its file's out_of_order_ops.
struct process_stream {
  static constexpr size_t window = 1 << 16;
  std::map<uint32_t, std::deque<posix_op>> queues;  // by thread
  size_t waiting = 0;
  process_replay replay;
  bool replayed_any = false;
  posix_op last{};  // the last call replayed

  void push(const posix_op& op);
  void flush();
  std::map<uint64_t, darshan_record> records() const;  // flushed on a copy

 private:
  void replay_next();
};

}  // namespace dc::analyze
