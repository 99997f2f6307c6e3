// The DFTracer v1.0.x trace sink: "[" line, one JSON object per line, "]" line, written as
// gzip members of a few MiB, each closed at least twice a second. Metadata lines (HH, FH,
// process_name, thread_name) are written before the first event that uses them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/event.h"
#include "core/host_clock.h"
#include "core/names.h"
#include "core/result.h"
#include "sink/gzip_members.h"

namespace dc {

struct trace_names {
  const name_table& names;
  const process_table& processes;
};

struct loss_counts {
  uint64_t ring_full = 0;     // the ring had no room
  uint64_t no_state = 0;      // no per-thread entry state could be created
  uint64_t skipped = 0;       // the kernel skipped a program run (recursion on one CPU)
  uint64_t too_deep = 0;      // a user-space call nested deeper than the per-thread stack
  uint64_t profile_full = 0;  // profile mode: no room for a new counter
  uint64_t not_held = 0;      // a new process could not be held for its user-space probes
  uint64_t total() const { return ring_full + no_state + skipped + too_deep + profile_full + not_held; }
};

class pfw_writer {
 public:
  static constexpr size_t member_bytes = 4 << 20;
  static constexpr std::chrono::milliseconds member_age{500};

  // Takes over an already created trace file; root_pid names the HH and end records.
  pfw_writer(gzip_member_writer out, std::string host, uint32_t root_pid);

  void write_event(const trace_event& ev, const trace_names& names);
  // Closes a member when it is large or old enough.
  result<> maybe_flush(std::chrono::steady_clock::time_point now);
  // Writes the end record with the loss counts and the closing bracket, and closes the file.
  result<> finish(const loss_counts& lost);

  // The "clock" metadata line: how this host's clock stood when the trace began.
  void write_clock(const host_clock& clock);

  // Names a process's storage system in its process_name line ("" for none).
  void set_process_labeler(std::function<std::string(const process_info&)> labeler)
  {
    labeler_ = std::move(labeler);
  }

  uint64_t events_written() const { return events_; }      // spans ("ph":"X"), not counters
  uint64_t counters_written() const { return counters_; }  // "ph":"C" samples

 private:
  void begin_metadata(std::string_view name, uint32_t pid, uint32_t tid);
  void write_file_hash(uint64_t hash, const trace_names& names, uint32_t pid, uint32_t tid);
  void write_names_for(const trace_event& ev, const trace_names& names);

  gzip_member_writer out_;
  std::string host_;
  uint64_t hhash_;
  uint32_t root_pid_;
  uint64_t next_id_ = 1;
  uint64_t events_ = 0;
  uint64_t counters_ = 0;
  std::chrono::steady_clock::time_point last_flush_;
  std::unordered_set<uint64_t> written_hashes_;
  std::unordered_map<uint32_t, uint64_t> named_pids_;  // pid -> hash of the command it was named with
  std::unordered_map<uint32_t, uint64_t> named_tids_;  // tid -> hash of the name it was given
  std::function<std::string(const process_info&)> labeler_;
};

}  // namespace dc
