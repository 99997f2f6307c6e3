// The order a thread's spans are written in, so that every viewer nests them as their p_idx
// says. Viewers (Perfetto's JSON importer, Chrome's trace model) sort spans by start time and
// keep the file order among spans that start in the same microsecond; the first written becomes
// the parent. The kernel sends a span when it ends, so a child (a buffered read's FS operation,
// a system call inside a probed function) usually reaches us before its parent; where both start
// in one microsecond, written in that order, the child would become its parent's parent. So a
// span whose parent has not been written yet is held until it is, then written right after it
// (parents before children, children in start order: by kernel id, assigned at entry).
//
// Whether a parent is still to come is known from the event (trace_event::parent_kind): a system
// call's children (FS, network, faults in the kernel) reach us before or after it, and a thread's
// system calls arrive in id order, so the highest id seen says which have arrived; a user-space
// call's children always come before it, except faults sent after it ended (parent_of::call_sent).
// A parent that never comes (its record lost) frees its children when a later span of its thread
// shows it must have been sent, at the thread's exit or at the end of the run. At most
// `max_held` spans wait per thread; past that a span is written at once (in arrival order).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/event.h"
#include "core/names.h"

namespace dc {

class thread_order {
 public:
  static constexpr size_t max_held = 4096;

  // True: write ev now (then the events freed_by(ev)). False: it is held.
  bool admit(const trace_event& ev);
  // What writing `written` frees: its held descendants, and held spans whose parent is now known
  // lost, parents first. Valid until the next call.
  // Inline: nothing is held on any thread for almost every span written.
  std::span<trace_event> freed_by(const trace_event& written)
  {
    return held_ == 0 ? std::span<trace_event>{} : free_held_by(written);
  }
  // Everything every thread holds (at the end of the run), each thread's by id.
  std::span<trace_event> drain_all();
  // A thread of a process that ended: drops its state unless spans of it still wait or its tid
  // is another process's thread by now.
  void forget(uint32_t tid, process_key process);
  size_t threads() const { return threads_.size(); }

 private:
  struct thread {
    process_key process = 0;    // whose thread the tid was at its latest span
    uint64_t last_syscall = 0;  // highest id of a system call of this thread seen so far
    std::vector<trace_event> held;
  };
  thread& thread_of(uint32_t tid);
  bool held_id(const thread& t, int64_t id) const;
  // Moves the held spans marked in taken_ to out_, sorted by id.
  std::span<trace_event> take_marked(thread& t);
  std::span<trace_event> free_held_by(const trace_event& written);

  std::unordered_map<uint32_t, thread> threads_;
  uint32_t cached_tid_ = 0;
  thread* cached_ = nullptr;
  std::vector<trace_event> out_;
  std::vector<char> taken_;
  std::vector<int64_t> roots_;
  size_t held_ = 0;  // spans held on all threads
};

}  // namespace dc
