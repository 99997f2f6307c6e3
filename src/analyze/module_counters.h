// Darshan's per-file counters of the user-space layers: STDIO, MPIIO, H5F (files) and H5D
// (datasets), from the uprobe layers' events (analyze/module_replay.h), as entries of the
// report's "files" beside the POSIX ones. The POSIX calls nested beneath each call (via p_idx)
// give the bytes the call caused at the POSIX layer and, where a handle was never seen opened,
// its file. A call and the calls nested in it come in either order (system calls reach the trace
// in per-thread batches, up to 16 calls or 200 ms late): each call waits `window` lines of its
// file before it is replayed, so that its children are there; children later still are credited
// to it (bytes, flags) through the calls replayed in the last `window` lines.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <nlohmann/json.hpp>
#include <tuple>

#include "analyze/module_replay.h"
#include "analyze/record.h"
#include "analyze/run_section.h"
#include "core/result.h"

namespace dc::analyze {

// A user-space call waiting for its nested calls, with what the replay reads of it.
struct queued_call {
  static constexpr size_t max_args = 8;
  uint64_t line = 0;  // its line number among the file's records
  module_kind module = module_kind::stdio;
  std::string_view name;  // the function (interned: module_counters::names)
  std::string object;     // args.name
  uint64_t hhash = 0, pid = 0, tid = 0, fhash = 0;
  int64_t ts_us = 0, dur_us = 0, id = -1, p_idx = -1;
  std::array<record_arg, max_args> args{};  // keys point at static strings
  uint8_t nargs = 0;
};

// (host, pid, tid, call id): a call, unique per thread.
using call_key = std::tuple<uint64_t, uint64_t, uint64_t, int64_t>;
struct call_key_hash {
  // Ids of a thread are consecutive: kept in the low bits, so calls close in time sit in
  // neighbouring buckets (a mixing hash measured 1.7 times slower: cache misses).
  size_t operator()(const call_key& k) const
  {
    uint64_t h = (std::get<0>(k) * 0x9e3779b97f4a7c15ULL ^ std::get<1>(k)) * 0x9e3779b97f4a7c15ULL;
    return (h ^ std::get<2>(k)) * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(std::get<3>(k));
  }
};

struct module_counters {
  static constexpr uint64_t window = 1 << 16;

  std::map<process_key, module_replay> live;  // processes whose lines this accumulator read
  // From partials and merged accumulators (a process read by two is reduced as two ranks).
  std::map<process_key, std::map<module_file_key, darshan_record>> replayed;
  std::map<process_key, std::array<uint64_t, module_kinds>> unattributed;  // of `replayed`
  // Calls whose parent has not been replayed yet: parent -> what they did.
  std::unordered_map<call_key, nested_summary, call_key_hash> pending;
  // Calls replayed in the last `window` lines: where they were charged, and their parent.
  struct replayed_call {
    std::optional<module_file_key> key;
    int64_t p_idx = -1;
  };
  std::unordered_map<call_key, replayed_call, call_key_hash> recent;
  std::deque<std::pair<uint64_t, call_key>> recent_order;  // (line, call), to forget them
  std::deque<queued_call> queue;                           // the file's calls waiting, in line order
  uint64_t line = 0;
  std::unordered_set<std::string> names;  // the functions' names the queue points at

  void add(const record& r);
  void end_file();  // replays what waits; forgets parents never written (lost, never returned)
  void merge(const module_counters& other);
  nlohmann::json partial() const;
  static dc::result<module_counters> from_partial(const nlohmann::json& j);
  // {"files": [entries like file_counters' with "module" STDIO|MPIIO|H5F|H5D ("dataset" for
  // H5D)], "unattributed": {"STDIO": N, ...}}. MPI_File_open counts as collective in a process
  // of an MPI job of more than one rank (run's size), else independent.
  nlohmann::json report(const name_map& names, const run_section& run, int64_t start_us) const;

 private:
  std::map<process_key, std::map<module_file_key, darshan_record>> settled() const;
  module_replay& replay_of(uint64_t hhash, uint64_t pid) { return live[{hhash, pid}]; }
  void replay(const queued_call& c);
  // `s` happened beneath call `parent` of (host, pid, tid): charged up the chain of replayed
  // calls, kept for the first one not replayed yet.
  void credit(uint64_t hhash, uint64_t pid, uint64_t tid, int64_t parent, const nested_summary& s);
  void drain(uint64_t up_to_line);
};

}  // namespace dc::analyze
