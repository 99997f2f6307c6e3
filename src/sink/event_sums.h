// Events summed before the run summary adds them (sink/summary.h). The summary's add looks up
// where an event counts (its process, layer and operation, its file's flows, the page-cache
// tally): ~400 instructions an event, twice a buffered read (the call and its folded FS part),
// where a storm's events repeat a few keys. What an event adds there is linear in its count,
// bytes, time and pages read, so the sum of a key's events, added once, adds exactly what they
// would have one by one. A device request's time is a latency sample as well (core/latency_sketch.h):
// such events are added as they come.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/event.h"
#include "core/short_text.h"

namespace dc {

class event_sums {
 public:
  // Whether `ev` may wait in a sum: anything but a timed device request.
  static bool summable(const trace_event& ev);

  // Adds `ev` (of which the page-cache tally counts `pages` read) to its key's sum. When no sum
  // has its key, one that is not among the last two added to is handed to `flush` first, to
  // make room.
  template <class Flush>
  void add(const trace_event& ev, uint64_t pages, Flush&& flush)
  {
    slot* s = find(ev);
    if (!s) {
      size_t i = evictable();
      s = &slots_[i];
      found(i);
      if (s->used)
        flush(s->sum);
      start(*s, ev);
    }
    s->sum.count += ev.count;
    s->sum.bytes += ev.bytes;
    s->sum.dur_us += ev.dur_us;
    s->sum.args[0].value += static_cast<int64_t>(pages);
  }

  // Hands every sum to `flush` and empties them.
  template <class Flush>
  void drain(Flush&& flush)
  {
    for (slot& s : slots_)
      if (s.used) {
        flush(s.sum);
        s.used = false;
      }
  }

 private:
  // A sum: a counter event (event.h: `count` calls; its "pages" arg the pages they read) named
  // as its events, its name and layer kept here (the events' may not outlive them).
  struct slot {
    bool used = false;
    std::string name, category;
    trace_event sum;
  };
  std::array<slot, 4> slots_{};
  size_t next_ = 0;
  // The last two sums added to, tried first: a call and its folded FS part alternate (the one
  // before the last is then tried first), a storm of one layer's calls repeats the last.
  size_t last_ = 0, before_last_ = 1;
  bool alternating_ = false;

  // The name first: a call and its FS part have the same file, process and direction.
  static bool same_key(const slot& s, const trace_event& ev)
  {
    const trace_event& k = s.sum;
    return s.used && same_text(k.name, ev.name) && k.fhash == ev.fhash && k.instance() == ev.instance() &&
           k.dir == ev.dir && k.fhash2 == ev.fhash2 && k.dir2 == ev.dir2 &&
           same_text(k.category, ev.category);
  }

  void found(size_t i)
  {
    if (i != last_) {
      before_last_ = last_;
      last_ = i;
    }
  }

  slot* find(const trace_event& ev)
  {
    size_t first = alternating_ ? before_last_ : last_, second = alternating_ ? last_ : before_last_;
    for (size_t i : {first, second})
      if (same_key(slots_[i], ev)) {
        alternating_ = i == before_last_;
        found(i);
        return &slots_[i];
      }
    for (size_t i = 0; i < slots_.size(); ++i)
      if (i != last_ && i != before_last_ && same_key(slots_[i], ev)) {
        found(i);
        return &slots_[i];
      }
    return nullptr;
  }

  // The other slots in turn: a call and its FS part keep their two.
  size_t evictable()
  {
    size_t i = next_++ % slots_.size();
    while (i == last_ || i == before_last_) i = next_++ % slots_.size();
    return i;
  }

  static void start(slot& s, const trace_event& ev);
};

}  // namespace dc
