// The "files" section: Darshan's POSIX counters per file, computed from the POSIX layer's
// events (our system calls and DFTracer's POSIX wrappers). Each process's file calls go
// through a process_stream (analyze/posix_replay.h): put back in call order within a window,
// then replayed through Darshan's rules as the lines arrive, so memory stays bounded by the
// window per process, not by the trace.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/darshan_record.h"
#include "analyze/posix_replay.h"
#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

using process_key = std::pair<uint64_t, uint64_t>;  // (hhash, pid)

struct file_counters {
  std::map<process_key, process_stream> streams;  // processes whose lines this accumulator read
  // Replayed counters per process and file: from partials, and from merged accumulators (a
  // process read by two accumulators is reduced as Darshan reduces two ranks' records).
  std::map<process_key, std::map<uint64_t, darshan_record>> replayed;
  int64_t start_us = 0;  // the earliest event: Darshan's timestamps are seconds after it

  void add(const record& r);
  void merge(const file_counters& other);
  nlohmann::json partial() const;
  static dc::result<file_counters> from_partial(const nlohmann::json& j);
  // [{"file","module":"POSIX","processes","counters","fcounters","small_ops","unknown_offset_ops",
  //   "out_of_order_ops"}], the files with most bytes first; sockets, pipes and other pseudo
  // files are left out.
  nlohmann::json report(const name_map& names) const;

  // Every process's counters, its pending calls replayed (what partial and report use).
  std::map<process_key, std::map<uint64_t, darshan_record>> settled() const;

  // Per process: POSIX_F_READ_TIME, _WRITE_TIME and _META_TIME (µs) summed over the files of
  // the report (pseudo files left out): {"read", "write", "meta"}.
  std::map<process_key, nlohmann::json> io_cost_us(const name_map& names) const;

  // The previous line's operation and its kind: names repeat, and comparing beats hashing.
  std::string last_name;
  std::optional<posix_kind> last_kind;
  bool last_copies = false;  // it moved data between two files (posix_copies): read, then write
};

// Whether a name is a file a Darshan record would exist for (not "socket:[..]", "pipe:[..]",
// "anon_inode:..": the names /proc and the tracer give to pseudo files).
bool is_pseudo_file(std::string_view name);

}  // namespace dc::analyze
