// The user-space probe links of each traced process, and their closing once it is gone: told by
// the process's GONE record (bpf/task_record.bpf.h), or, when that record was lost to a full hold
// ring, found by a sweep. Each process is known by a pidfd taken when its entry is made (while it
// is held, or before the traced command's exec), so a process that is gone and a later one given
// its pid are never mistaken for each other.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/link_closer.h"
#include "probe/uprobe_links.h"
#include "probe/uprobe_objects.h"

namespace dc {

// What sweeps found over the run: processes gone without a GONE record, and their links.
struct sweep_counts {
  uint64_t sweeps = 0;
  uint64_t processes = 0;
  uint64_t links = 0;
  uint64_t longest_us = 0;  // the longest sweep (the closing itself is the closer's)
};

// Callable from any thread.
class process_links {
 public:
  // Begins attaching tgid, a live process: waits while many links of exited processes are still
  // to close (backpressure), then says whether the named libraries are linked for it already. An
  // entry left by a gone process of the same pid (its GONE record lost) is swept first.
  bool begin(uint32_t tgid);
  // Whether object `id` is new among those searched for tgid (each is searched once per process).
  bool first_search(uint32_t tgid, const file_id& id);
  // Adds links to tgid's; `libraries`: the named libraries' are among them (or were before).
  void add(uint32_t tgid, const std::vector<int>& fds, bool libraries);
  // tgid is gone (its GONE record): its links close.
  void forget(uint32_t tgid);
  // Closes the links of every process that is gone.
  void sweep();
  sweep_counts swept() const;
  // Closes every link (the end of the run).
  void close_all();
  // tgid's links are not closed when it is gone, but with close_all or hand_over: the traced
  // command's, whose end is the run's, so that a kept object's keeper can close them instead.
  void keep_to_the_end(uint32_t tgid);
  // The links of every process that is gone, taken out unclosed (the caller's to close): they
  // can no longer run a program (a link names its process). Those of live processes stay.
  std::vector<int> hand_over();

 private:
  struct entry {
    std::vector<int> fds;
    int pidfd = -1;  // -1: not taken (out of descriptors); then only its GONE record ends it
    bool libraries = false;
    std::set<file_id> objects;  // searched for the entries' functions
  };
  using entries = std::map<uint32_t, entry>;
  // Takes `it` out: its pidfd closed, its links added to `fds` (mutex_ held).
  entries::iterator drop(entries::iterator it, std::vector<int>& fds);
  // The same, counted as swept.
  entries::iterator sweep_out(entries::iterator it, std::vector<int>& fds);

  mutable std::mutex mutex_;
  entries procs_;
  uint32_t kept_to_the_end_ = 0;  // keep_to_the_end
  std::vector<int> ended_;        // its links, once it is gone
  sweep_counts swept_;
  link_closer closer_;  // joined (every link closed) when this is destroyed
};

}  // namespace dc
