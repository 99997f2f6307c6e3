#include "sink/thread_order.h"

#include <algorithm>

namespace dc {

namespace {

using parent_of = trace_event::parent_of;

// Spans on a thread's own track, placed in its call tree: the ones whose order matters.
bool ordered(const trace_event& ev)
{
  return !ev.counter && ev.lane == lane_kind::none && ev.level > 0;
}

bool is_syscall(const trace_event& ev)
{
  return ev.category == "POSIX";
}

}  // namespace

thread_order::thread& thread_order::thread_of(uint32_t tid)
{
  if (!cached_ || cached_tid_ != tid) {
    cached_ = &threads_[tid];
    cached_tid_ = tid;
  }
  return *cached_;
}

bool thread_order::held_id(const thread& t, int64_t id) const
{
  for (const trace_event& e : t.held)
    if (static_cast<int64_t>(e.id) == id)
      return true;
  return false;
}

bool thread_order::admit(const trace_event& ev)
{
  if (!ordered(ev))
    return true;
  thread& t = thread_of(ev.tid);
  t.process = ev.instance();
  if (is_syscall(ev))
    t.last_syscall = std::max(t.last_syscall, ev.id);
  if (ev.parent < 0)
    return true;
  bool wait = false;
  switch (ev.parent_kind) {
    case parent_of::none: break;
    case parent_of::syscall:
      wait = static_cast<uint64_t>(ev.parent) > t.last_syscall || held_id(t, ev.parent);
      break;
    case parent_of::call: wait = true; break;
    case parent_of::call_sent: wait = held_id(t, ev.parent); break;
  }
  if (!wait || t.held.size() >= max_held)
    return true;
  t.held.push_back(ev);
  ++held_;
  return false;
}

std::span<trace_event> thread_order::take_marked(thread& t)
{
  out_.clear();
  size_t keep = 0;
  for (size_t i = 0; i < t.held.size(); ++i) {
    if (taken_[i])
      out_.push_back(std::move(t.held[i]));
    else if (keep != i)
      t.held[keep++] = std::move(t.held[i]);
    else
      ++keep;
  }
  held_ -= t.held.size() - keep;
  t.held.resize(keep);
  // Kernel ids grow at each entry on a thread: id order is call order, parents first.
  std::stable_sort(out_.begin(), out_.end(),
                   [](const trace_event& a, const trace_event& b) { return a.id < b.id; });
  return out_;
}

std::span<trace_event> thread_order::free_held_by(const trace_event& written)
{
  if (!ordered(written))
    return {};
  thread& t = thread_of(written.tid);
  if (t.held.empty())
    return {};
  taken_.assign(t.held.size(), 0);
  roots_.assign(1, static_cast<int64_t>(written.id));
  for (size_t i = 0; i < t.held.size(); ++i) {
    const trace_event& e = t.held[i];
    if (held_id(t, e.parent))
      continue;
    // A parent that has not come though a later span shows it was sent: lost. A system call's
    // if a later call has arrived; a user-space call's if `written` started after it at its
    // level or above (so the call had ended, and its record gone out, before `written` began).
    bool lost = e.parent_kind == parent_of::syscall
                    ? static_cast<uint64_t>(e.parent) <= t.last_syscall && e.parent != roots_[0]
                    : e.parent < roots_[0] && e.level > written.level;
    if (lost) {
      taken_[i] = 1;
      roots_.push_back(static_cast<int64_t>(e.id));
    }
  }
  // Descendants of what is written: a child reaches us before its parent, so repeat until no
  // more are found (as many passes as the held tree is deep).
  for (bool found = true; found;) {
    found = false;
    for (size_t i = 0; i < t.held.size(); ++i)
      if (!taken_[i] && std::find(roots_.begin(), roots_.end(), t.held[i].parent) != roots_.end()) {
        taken_[i] = 1;
        roots_.push_back(static_cast<int64_t>(t.held[i].id));
        found = true;
      }
  }
  return take_marked(t);
}

void thread_order::forget(uint32_t tid, process_key process)
{
  auto it = threads_.find(tid);
  if (it == threads_.end() || !it->second.held.empty() || it->second.process != process)
    return;
  if (cached_ == &it->second)
    cached_ = nullptr;
  threads_.erase(it);
}

std::span<trace_event> thread_order::drain_all()
{
  std::vector<trace_event> all;
  for (auto& [tid, t] : threads_) {
    taken_.assign(t.held.size(), 1);
    take_marked(t);
    std::move(out_.begin(), out_.end(), std::back_inserter(all));
  }
  threads_.clear();
  cached_ = nullptr;
  out_ = std::move(all);
  return out_;
}

}  // namespace dc
