// The DFTracer v1.0.x trace sink: "[" line, one JSON object per line, "]" line, written as
// gzip members of at most a MiB of text, each closed at least twice a second. Metadata lines (HH, FH,
// process_name, thread_name) are written before the first event that uses them, with the ts of
// that event. What each line looks like, and why (the viewers that read it): README "The trace
// file".
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/event.h"
#include "core/loss_counts.h"
#include "core/host_clock.h"
#include "core/json.h"
#include "core/names.h"
#include "core/result.h"
#include "sink/gzip_members.h"
#include "sink/lanes.h"
#include "sink/thread_order.h"

namespace dc {

class pfw_writer {
 public:
  // A member's text, at most. Its buffers (the one being filled, one spare, those waiting for
  // compression, the compressed copy) stay as large as the largest member was: at 4 MiB a
  // 1.5 s stall of the tracer left +14 MiB of RSS, at 1 MiB +2 (same compression, same speed).
  static constexpr size_t member_bytes = 1 << 20;
  // Room kept in a member's buffer for the lines of one event (its names and its span).
  static constexpr size_t line_room = 64 << 10;
  static constexpr std::chrono::milliseconds member_age{500};

  // Takes over an already created trace file; root_pid names the HH and end records.
  pfw_writer(gzip_member_writer out, std::string host, uint32_t root_pid);

  // A span ("ph":"X"), or a profile counter sample ("ph":"C") when ev.counter. A span whose
  // parent is still to come waits for it (sink/thread_order.h).
  void write_event(const trace_event& ev, const trace_names& names);
  // Writes the spans still waiting for a parent (at the end of a run, before finish()).
  void flush_held(const trace_names& names);
  // A thread of a process that just ended: its span order starts afresh if the tid is reused (a
  // new thread's system call ids start low again), unless spans of it still wait.
  void thread_ended(uint32_t tid, process_key process) { order_.forget(tid, process); }
  // A process that ended a while ago (collect/decoder.h: forget_after_ns): forgets its pid's and
  // its threads' names and order, unless a newer process has them by now (nor threads with
  // spans still waiting), and tells the process-forgotten hook. A late event names it again.
  void forget_process(uint32_t pid, process_key process, std::span<const uint32_t> tids);
  // The snapshotter forgets the process with the writer (sink/snapshots.h).
  void set_process_forgotten_hook(std::function<void(uint32_t pid, process_key)> hook)
  {
    process_forgotten_ = std::move(hook);
  }
  // What the writer keeps per pid and per tid (bounded by the processes of the last minute).
  size_t pids_named() const { return named_pids_.size(); }
  size_t tids_named() const { return named_tids_.size(); }
  size_t threads_ordered() const { return order_.threads(); }
  // End-of-run totals (the page cache's counts per process and file) as a metadata line: they
  // are not events of any time, so no reader counts them as events.
  void write_totals(const trace_event& ev, const trace_names& names);
  // Closes a member when it is large or old enough.
  result<> maybe_flush(std::chrono::steady_clock::time_point now);
  // Writes the buffer as a member now; on failure, its events and every later one are unwritten.
  result<> flush();
  // flush(), then waits until the file holds it (compression workers write it later otherwise).
  result<> flush_through();
  // Writes the end record with the loss counts and the closing bracket, and closes the file.
  // After a failed write, or when the file was removed while open, writes nothing more and
  // returns that failure.
  result<> finish(const loss_counts& lost);

  // The "clock" metadata line: how this host's clock stood when the trace began.
  void write_clock(const host_clock& clock);

  // Names a process's storage system in its process_name line ("" for none).
  void set_process_labeler(std::function<std::string(const process_info&)> labeler)
  {
    labeler_ = std::move(labeler);
  }

  // Called when a process is (re)named in the trace: before its first event, when its command
  // changes, and when its pid is another process's (sink/snapshots.h takes its process snapshot
  // there). `instance`: which of the run's processes with the pid it is.
  void set_process_named_hook(
      std::function<void(process_key instance, const process_info&, uint64_t ts_us)> hook)
  {
    process_named_ = std::move(hook);
  }
  // A metadata line carrying a snapshot (docs/snapshots.md): args.name = label, args.value =
  // value_json as a string.
  void write_snapshot(std::string_view name, uint32_t pid, uint64_t ts_us, std::string_view label,
                      std::string_view value_json);

  // The trace file: its path and members (after finish(), for its index: sink/trace_index.h).
  const gzip_member_writer& file() const { return out_; }
  uint64_t events_written() const { return events_; }      // spans ("ph":"X"), not counters
  uint64_t counters_written() const { return counters_; }  // "ph":"C" samples
  // Decoded but not in the file: a write failed (from then on nothing is written: the file stays
  // a prefix of the trace, every part of it whole), or the file was removed while open.
  uint64_t events_unwritten() const { return unwritten_events_; }
  uint64_t counters_unwritten() const { return unwritten_counters_; }
  // The first failure of the trace file (the file named), or success.
  const result<>& status() const { return status_; }

 private:
  void begin_metadata(std::string_view name, uint32_t pid, uint32_t tid, uint64_t ts_us);
  // An FH line for a file not named yet (hash neither 0 nor the one named last).
  void write_file_hash(uint64_t hash, const trace_names& names, uint32_t pid, uint32_t tid, uint64_t ts_us);
  void name_process_and_thread(const trace_event& ev, const trace_names& names);
  // The naming lines an event needs first. Inline: most events are the thread the one before
  // was, its process table unchanged since, on the file named last, and need none.
  void write_names_for(const trace_event& ev, const trace_names& names)
  {
    if (names.processes_version == 0 || names.processes_version != named_version_ ||
        ev.tid != last_tid_.first || ev.pid != last_pid_.first || !last_tid_.second || !last_pid_.second ||
        ev.instance() != last_pid_.second->process || ev.instance() != last_tid_.second->process)
      name_process_and_thread(ev, names);
    for (uint64_t hash : {ev.fhash, ev.fhash2})
      if (hash != 0 && hash != last_hash_)
        write_file_hash(hash, names, ev.pid, ev.tid, ev.ts_us);
  }
  void write_now(const trace_event& ev, const trace_names& names);
  void write_counter(const trace_event& ev, const trace_names& names);
  // The thread an event is drawn on: its own, or a lane (named on first use).
  uint32_t track_of(const trace_event& ev);
  void give_up(result<> why);

  gzip_member_writer out_;
  std::string host_;
  uint64_t hhash_;
  uint32_t root_pid_;
  uint64_t next_id_ = 1;
  uint64_t events_ = 0;
  uint64_t counters_ = 0;
  uint64_t pending_events_ = 0, pending_counters_ = 0;  // in the buffer, not yet in the file
  uint64_t unwritten_events_ = 0, unwritten_counters_ = 0;
  result<> status_;
  std::chrono::steady_clock::time_point last_flush_;
  // What a process was named with: renamed when its command changes (or it becomes known).
  struct named_process {
    uint64_t process = 0;  // which process with the pid (a reused pid is named again)
    bool known = false;
    uint32_t version = 0;  // process_info::names_version when named
  };
  kept_number fhash_text_;  // of the last span line
  kept_high_digits id_text_, ts_text_;
  // The `,"name":"...","cat":"...","pid":P,"tid":T,"ts":` text of the last two (name, layer,
  // pid, track)s of span lines: most lines repeat one of them (a call, and the one before), and
  // escaping the names again was a sixth of a line's instructions.
  struct who_line {
    std::string name, category;
    uint32_t pid = 0, tid = 0;
    std::string text;
  };
  std::array<who_line, 2> whos_;
  size_t last_who_ = 0;
  // The last fixed string arg (event_text::fixed, static storage: its bytes never change) that
  // json_plain passed: copied as it is while it repeats (a buffered read's "fs" in every line).
  std::string_view plain_fixed_;
  std::string_view who_text(const trace_event& ev, uint32_t tid);
  std::unordered_set<uint64_t> written_hashes_;
  uint64_t last_hash_ = 0;  // in written_hashes_: most events name the file the one before named
  std::unordered_map<uint32_t, named_process> named_pids_;
  struct named_thread {
    uint64_t process = 0;  // the process it was named for
    std::string name;
  };
  std::unordered_map<uint32_t, named_thread> named_tids_;
  // The entries of the last event's pid and tid (most events are the one before's thread): a
  // hash lookup each per event otherwise. Their nodes stay put until forget_process erases them.
  std::pair<uint32_t, named_process*> last_pid_{0, nullptr};
  std::pair<uint32_t, named_thread*> last_tid_{0, nullptr};
  // The trace_names version (processes_version) last_pid_'s and last_tid_'s names were checked at.
  uint64_t named_version_ = 0;
  std::string span_args_;  // ,"ph":"X","args":{"hhash":H: the same on every span
  lane_table lanes_;
  thread_order order_;
  std::string series_;  // a counter's series id, reused
  // The last file a series id named, and its path in the name table (whose entries never move).
  std::pair<uint64_t, const std::string*> series_path_{0, nullptr};
  std::function<std::string(const process_info&)> labeler_;
  std::function<void(process_key, const process_info&, uint64_t)> process_named_;
  std::function<void(uint32_t, process_key)> process_forgotten_;
};

}  // namespace dc
