// String tables of a trace: names (paths, hosts, commands) by hash, files by (dev, inode), and
// processes by TGID. Owned by the one thread that decodes, so nothing here locks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/hash.h"

namespace dc {

// How many exited processes a run's summary keeps in detail unless told (`run --process-detail`,
// decoder::keep_process_detail).
constexpr size_t default_process_detail = 1000;

class name_table {
 public:
  uint64_t add(std::string_view s)
  {
    uint64_t h = string_hash(s);
    by_hash_.try_emplace(h, s);
    return h;
  }
  const std::string* find(uint64_t hash) const
  {
    auto it = by_hash_.find(hash);
    return it == by_hash_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<uint64_t, std::string> by_hash_;
};

struct file_key {
  uint32_t dev;  // kernel encoding (major << 20 | minor)
  uint64_t ino;
  bool operator==(const file_key&) const = default;
};

struct file_key_hash {
  size_t operator()(const file_key& k) const { return k.ino * 31 + k.dev; }
};

// Which file (dev, inode) has which path hash; paths come from opens and fd snapshots. Only
// the files named or looked up most recently are kept, two generations of `generation` each: a
// workload that creates and deletes files all day (each a new inode) must not grow the tracer.
// A file forgotten is named again by its next open, or from /proc while a process holds it;
// only an event with no open file behind it (a write-back) of a file older than the last
// `generation` files named falls back to its identity.
//
// Profile mode's counters are read intervals after their files were named (profile_reader.h),
// with no descriptor to ask /proc by: there (hold_for_counters) the older generation is kept until
// the counters of the intervals its files were named in have been read (counters_read), and the
// newer one grows meanwhile. Forgotten after `generation` names, a storm over 100,000 files named
// every counter by its identity ("anon:[dev:ino]") instead of its path.
class file_table {
 public:
  explicit file_table(size_t generation = size_t{1} << 14) : generation_(generation) {}
  void name(file_key key, uint64_t path_hash)
  {
    recent_[key] = path_hash;
    last_ = {key, path_hash};
    if (!holding_)
      maybe_rotate();
  }
  std::optional<uint64_t> find(file_key key)
  {
    // The last file found or named, in recent_ as long as it is kept here: a storm's calls
    // repeat one file, and a hash lookup each was ~80 instructions an event.
    if (last_ && last_->first == key)
      return last_->second;
    if (auto it = recent_.find(key); it != recent_.end()) {
      last_ = {key, it->second};
      return it->second;
    }
    auto it = older_.find(key);
    if (it == older_.end())
      return std::nullopt;
    uint64_t path_hash = it->second;
    older_.erase(it);
    name(key, path_hash);  // still in use: kept
    return path_hash;
  }
  size_t size() const { return recent_.size() + older_.size(); }

  // Profile mode: generations turn over only in counters_read.
  void hold_for_counters() { holding_ = true; }
  // The counters of every interval up to `read_through` have been read, and the files named so
  // far were named by records of intervals up to `decoded_through`.
  void counters_read(uint64_t read_through, uint64_t decoded_through)
  {
    if (!holding_ || (!older_.empty() && older_named_through_ + 1 > read_through))
      return;
    if (maybe_rotate())
      older_named_through_ = decoded_through;
  }

 private:
  // The newer generation becomes the older, once it holds `generation` files; the older is
  // forgotten.
  bool maybe_rotate()
  {
    if (recent_.size() < generation_)
      return false;
    older_ = std::move(recent_);
    recent_.clear();
    last_.reset();  // it must be found in older_ again, and so kept
    return true;
  }

  size_t generation_;
  std::unordered_map<file_key, uint64_t, file_key_hash> recent_, older_;
  std::optional<std::pair<file_key, uint64_t>> last_;
  bool holding_ = false;
  uint64_t older_named_through_ = 0;  // holding: the last interval older_'s files were named in
};

struct thread_info {
  std::string comm;
};

struct process_info {
  uint32_t pid = 0;  // 0 for processes folded together (`folded`)
  uint32_t parent = 0;
  std::string command;  // the command line, arguments separated by spaces
  std::string comm;
  int exit_status = -1;  // wait(2) status, -1 while unknown
  std::map<uint32_t, thread_info> threads;
  int rank = -1, size = -1;  // MPI rank and job size from the launcher's environment (-1: none)
  // Not one process but this many exited ones of one command, folded together to bound what a
  // long run keeps (collect/process_instances.cpp); 0 for a process.
  uint64_t folded = 0;
  uint64_t folded_threads = 0;  // the threads those processes had
  uint32_t names_version = 0;   // counts the changes of its names (fork, exec): the trace names it again
  // Exited over a minute ago: the trace's sinks forgot its pid (collect/decoder.h), so a late
  // event that names it again takes no snapshot (its /proc entry is gone, or another's).
  bool forgotten = false;
};

// A process as the run saw it: its pid, plus which of the run's processes with that pid it is
// (pids are reused when they wrap), or a fold of exited processes. The key of a run's first
// process with a pid is the pid itself.
using process_key = uint64_t;
constexpr process_key folded_key_bit = 1ULL << 63;
constexpr process_key instance_key(uint32_t pid, uint32_t generation)
{
  return pid | static_cast<uint64_t>(generation) << 32;
}
constexpr uint32_t pid_of(process_key key)
{
  return key & folded_key_bit ? 0 : static_cast<uint32_t>(key);
}
constexpr uint32_t generation_of(process_key key)
{
  return static_cast<uint32_t>(key >> 32) & 0x7fffffffU;
}
// "1234" for a pid's first process in the run, "1234.2" for the second one to have that pid.
inline std::string process_label(process_key key)
{
  std::string s = std::to_string(pid_of(key));
  if (uint32_t g = generation_of(key); g > 0) {
    s.push_back('.');  // appended in two steps: GCC 12 at -O3 warns (-Wrestrict) on "." + string
    s.append(std::to_string(g + 1));
  }
  return s;
}

using process_table = std::map<process_key, process_info>;

// What a sink needs to name an event's file and process (the decoder's tables, read-only).
struct trace_names {
  const name_table& names;
  const process_table& processes;
  // Changes when any entry of `processes` is made, changed or erased (the decoder's
  // counted_processes); 0: not counted. A writer names an event's process and thread again only
  // when it changed, or the event is another thread's.
  uint64_t processes_version = 0;
};

// Converts a user-space st_dev to the kernel's s_dev encoding that BPF reports.
inline uint32_t kernel_dev(uint64_t major, uint64_t minor)
{
  return static_cast<uint32_t>((major << 20) | (minor & 0xfffff));
}

}  // namespace dc
