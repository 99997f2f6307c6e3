// Turns raw kernel records into trace events and summary values. One decoder per record kind
// (collect/<kind>_decoder.cpp: staged syscall run, path, task, block, net, fault, fs, uprobe,
// profile counter, page-cache count); this class dispatches and owns the state they share:
// names, files and processes.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collect/profile_sample.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/names.h"
#include "core/uprobe_target.h"

extern "C" {
#include "counters.h"
}

namespace dc {

class pfw_writer;
class summary_builder;
class event_sink;

struct event_sinks {
  pfw_writer* trace = nullptr;
  summary_builder* summary = nullptr;
};

// What the run knows of a pid: 8 bytes, whatever became of its processes.
struct pid_state {
  uint32_t processes = 0;  // how many of the run's processes had it: the latest is PID.N, N = this
  uint32_t fold = 0;       // its latest process was folded: 1 + the fold's index; 0 if not
};

// pid -> pid_state, in pages of 4096 pids made as pids of them appear: bounded by pid_max
// however many processes a run sees, and small where pids are few (pid_max may be 4 M).
class pid_table {
 public:
  const pid_state* find(uint32_t pid) const
  {
    size_t page = pid / page_pids;
    return page < pages_.size() && pages_[page] ? &(*pages_[page])[pid % page_pids] : nullptr;
  }
  pid_state& operator[](uint32_t pid)
  {
    size_t page = pid / page_pids;
    if (page >= pages_.size())
      pages_.resize(page + 1);
    if (!pages_[page])
      pages_[page] = std::make_unique<std::array<pid_state, page_pids>>();
    return (*pages_[page])[pid % page_pids];
  }

 private:
  static constexpr uint32_t page_pids = 4096;
  std::vector<std::unique_ptr<std::array<pid_state, page_pids>>> pages_;
};

// A kernel layer's operation: its name and which way its bytes move. One table per layer (in its
// decoder), shared by its event and its profile decoding.
struct layer_op {
  std::string_view name;
  io_dir dir = io_dir::none;
};

// The decoder's process table and the count of its changes (the trace_names version). The only
// way to change it, change(), counts, so a writer that names an event's process again only when
// the count moved never keeps a stale name. A count for a change that then did not happen only
// names a process once more.
class counted_processes {
 public:
  const process_table& table() const { return table_; }
  operator const process_table&() const { return table_; }  // read as the table it counts
  uint64_t version() const { return version_; }
  // For a change made now, through the reference (counted before it: the decoder makes it before
  // any sink reads the table again).
  process_table& change()
  {
    ++version_;
    return table_;
  }

 private:
  process_table table_;
  uint64_t version_ = 1;
};

struct decode_state {
  clock_offset clock;
  name_table names;
  file_table files;
  counted_processes processes;
  pid_table pids;
  // Path arguments (by slot) waiting for the next syscall event of a thread.
  std::unordered_map<uint32_t, std::array<uint64_t, 2>> call_paths;
  // The probed user-space functions, by probe index: a deque, whose elements stay where they
  // are as it grows (events waiting to be written point at their function's name).
  std::deque<uprobe_target> uprobes;
  // Every function probed so far (the table grows as processes come with functions of their
  // own): asked when an event names an index past `uprobes`.
  std::function<std::vector<uprobe_target>()> current_uprobes;
};

class decoder {
 public:
  decoder(clock_offset clock, event_sinks sinks);

  // Decodes one ring record; records too short for their kind are counted, not trusted.
  void decode(const void* data, size_t size);

  // One profile-mode counter of one interval (profile_reader), as a "ph":"C" sample.
  void decode_profile(const dc_profile_key& key, const dc_profile_counts& counts, uint64_t interval_ns);
  // The counts threads sent through the ring (DC_REC_PROFILE) since the last call, unsummed:
  // profile_reader sums them with the map's when their intervals are read.
  std::vector<profile_sample> take_profile_records() { return std::exchange(profile_records_, {}); }

  // Names the files a process holds open now (its /proc/PID/fd), for fds opened before tracing.
  void snapshot_fds(uint32_t pid);

  // Another view fed every event (before the collector starts).
  void add_view(event_sink* view) { views_.push_back(view); }

  // The key events of pid `tgid` are counted under: its latest process's (core/names.h).
  process_key process_of(uint32_t tgid) const
  {
    const pid_state* s = state_.pids.find(tgid);
    if (!s)
      return tgid;
    return s->fold ? folded_key_bit | (s->fold - 1)
                   : instance_key(tgid, s->processes > 1 ? s->processes - 1 : 0);
  }
  // How long after a process's exit the sinks keep what they hold per pid and tid for it (its
  // names in the trace, its snapshot, its threads' order): events of it still come then (the
  // write-back of what it dirtied, records sent after its exit record); after it, a run that
  // forks all day keeps only the processes of the last minute, not every pid it saw.
  static constexpr uint64_t forget_after_ns = 60'000'000'000ULL;
  // Keeps the per-process detail (summary, process table) of at most `n` exited processes, those
  // that moved the most bytes, and folds the others by command, so that a run forking all day
  // keeps a bounded amount.
  void keep_process_detail(size_t n) { detail_limit_ = n; }

  decode_state& state() { return state_; }
  const decode_state& state() const { return state_; }
  // The tables as the sinks read them, with their version.
  trace_names trace_names_now() const
  {
    return {state_.names, state_.processes.table(), state_.processes.version()};
  }
  // One process's in-kernel page-cache counts for one file (read at the end of a run), to the summary.
  void decode_page_cache(const dc_pagecache_key& key, const dc_pagecache_counts& counts);
  // One PAGECACHE totals line per process and file the summary has counts for, at now_us.
  void write_page_cache_counters(uint64_t now_us);
  // Writes the spans still waiting for a parent that never came (after the ring is drained),
  // then ends the views.
  void finish_trace();
  // After each decoded batch: the views' turn to show what they have.
  void tick(std::chrono::steady_clock::time_point now);
  uint64_t malformed() const { return malformed_; }

 private:
  // Probe index i's function, nullptr if none is known (even after asking current_uprobes).
  const uprobe_target* uprobe_at(uint32_t i);
  bool decode_staged(const void* data, size_t size);
  void decode_syscall(const dc_syscall_event& ev);
  void decode_path(const dc_path_record& rec, size_t size);
  void decode_task(const dc_task_event& ev);
  // collect/process_instances.cpp: the process a task record of `pid` is about; a new one when
  // an earlier process of the run had the pid (`new_process`: a fork, which always starts one).
  process_info& process_for(uint32_t pid, bool new_process);
  void process_exited(process_key key);
  void fold_process(process_key key);
  // A process's exit record at ts_ns: the sinks forget it forget_after_ns later (forget_ended).
  void process_ended(uint32_t pid, process_key key, const process_info& p, uint64_t ts_ns);
  void forget_ended(uint64_t now_ns);
  // The fold the late events of `key` (pid `pid`'s process) go to, if it was folded and the pid
  // has had no newer process; 0 otherwise.
  process_key fold_of_late_events(uint32_t pid, process_key key) const;
  void decode_block(const dc_block_event& ev);
  void decode_net(const dc_net_event& ev);
  void decode_fault(const dc_fault_event& ev);
  void decode_fs(const dc_fs_event& ev);
  // The FS operation carried in call `raw` (bpf/events.h dc_folded_fs), counted but not written on its own:
  // its thread, span and file are those of `call`, the call's event (file_a: its hash).
  void decode_folded_fs(const dc_syscall_event& raw, const trace_event& call, uint64_t file_a);
  void decode_uprobe(const dc_uprobe_event& ev);
  // Layer, operation name and direction of a profile counter; false for a key no layer made.
  bool name_counter(const dc_profile_key& key, trace_event& ev);
  // An event of `category` for the thread in `hdr`, spanning hdr.ts_ns .. + dur_ns: a new one,
  // or `ev` made blank and begun so (an event kept for reuse).
  trace_event begin_event(std::string_view name, std::string_view category, const dc_record_header& hdr,
                          uint64_t dur_ns) const;
  void begin_event(trace_event& ev, std::string_view name, std::string_view category,
                   const dc_record_header& hdr, uint64_t dur_ns) const;
  void emit(const trace_event& ev);
  // Places ev in its thread's call tree where the kernel placed it (if it did), under a parent
  // of `kind` (what the trace writer needs to write parents first).
  static void place(trace_event& ev, const dc_nesting& nest, trace_event::parent_of kind);
  uint64_t file_hash(const dc_file_ref& ref, uint32_t tgid, int64_t fd);

  decode_state state_;
  event_sinks sinks_;
  std::vector<event_sink*> views_;  // --print, the live view (sink/event_sink.h)
  uint64_t malformed_ = 0;
  size_t detail_limit_ = default_process_detail;
  std::set<std::pair<uint64_t, process_key>> exited_detail_;  // (bytes moved, key), kept in detail
  std::map<std::string, process_key, std::less<>> fold_of_command_;
  struct ended_process {
    uint64_t ts_ns;
    uint32_t pid;
    process_key key;
    std::vector<uint32_t> tids;
  };
  std::deque<ended_process> ended_;  // by exit time, oldest first
  // Kept for reuse: a new event a call (its texts' strings built and destroyed) was ~40
  // instructions, twice a buffered call.
  trace_event call_;         // decode_syscall's
  trace_event folded_part_;  // decode_folded_fs's
  std::vector<profile_sample> profile_records_;
};

layer_op block_op(uint32_t op);
layer_op fs_op(uint32_t op);
layer_op net_op(uint32_t op);
layer_op fault_op(uint32_t op);
// A buffered read or write folded into its call's record (bpf/events.h dc_folded_fs): the args
// the call's event carries for it ("fs", then first_page/last_page or fs_offset). The summary
// gets the FS operation itself from decoder::decode_folded_fs.
void add_folded_fs_args(trace_event& call, const dc_folded_fs& fs);

struct syscall_info;
// Which way a POSIX call that moved bytes moved them for its files (fhash: `a`, fhash2: `b`),
// for events and profile counters alike. Only file data counts as the application's I/O
// (amplification, page cache); bytes through sockets and pipes stay in the call's own totals.
void set_posix_dirs(trace_event& ev, const syscall_info& info, const dc_file_ref& a, const dc_file_ref& b);

// "/a/b/c" from the leaf-first, NUL-separated components a BPF path walk produces.
std::string join_components(std::string_view leaf_first);

// The path /proc/PID/fd/N points to, if it is the file (dev, inode) `expected`, or any file when
// `expected` is null; "" otherwise. *found gets the file's identity.
std::string proc_fd_path(const std::string& link, const file_key* expected, file_key* found);

// A name for a file no path names: sockets and pipes as /proc shows them, others by identity.
std::string fallback_name(const dc_file_ref& ref);

// The absolute, lexically normal path of `raw`, relative to `base` when it is not absolute.
std::string resolve_path(std::string_view raw, std::string_view base);

}  // namespace dc
