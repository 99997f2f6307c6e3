// Events the kernel side could not deliver, by kind: the kinds of the BPF loss map (one table,
// DC_LOSS_KIND_TABLE in bpf/loss_kinds.h) and the program runs the kernel skipped.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

extern "C" {
#include "events.h"
}

namespace dc {

// One name per dc_loss_kind, in its order.
inline constexpr std::array<std::string_view, DC_LOSS_KINDS> kernel_loss_names = {
#define DC_LOSS_NAME(kind, name, events) #name,
    DC_LOSS_KIND_TABLE(DC_LOSS_NAME)
#undef DC_LOSS_NAME
};

// Whether a kind counts trace events (else records that are no event, or processes).
inline constexpr std::array<bool, DC_LOSS_KINDS> kernel_loss_counts_events = {
#define DC_LOSS_EVENTS(kind, name, events) events != 0,
    DC_LOSS_KIND_TABLE(DC_LOSS_EVENTS)
#undef DC_LOSS_EVENTS
};

struct loss_counts {
  std::array<uint64_t, DC_LOSS_KINDS> kernel{};  // by dc_loss_kind
  uint64_t skipped = 0;                          // the kernel skipped a program run (recursion on one CPU)
  // Traced block requests started and not seen to end when the block layer detached: still in
  // flight then, or ended unseen. No event of theirs is in the trace; not summed into total(),
  // since those in flight are past the traced window rather than lost from it.
  uint64_t block_unended = 0;

  // Calls fn(name, count) for every kind that counts events: the kernel's that do, in
  // dc_loss_kind order, then "skipped" (each skipped run an event not seen).
  template <class Fn>
  void for_each_event_kind(Fn&& fn) const
  {
    for (size_t k = 0; k < kernel.size(); ++k)
      if (kernel_loss_counts_events[k])
        fn(kernel_loss_names[k], kernel[k]);
    fn(std::string_view("skipped"), skipped);
  }

  // Events lost: the sum over the kinds that count events.
  uint64_t total() const
  {
    uint64_t sum = 0;
    for_each_event_kind([&sum](std::string_view, uint64_t n) { sum += n; });
    return sum;
  }

  // Calls fn(name, count) for every kind: the kernel's in dc_loss_kind order, then "skipped" and
  // "block_unended".
  template <class Fn>
  void for_each(Fn&& fn) const
  {
    for (size_t k = 0; k < kernel.size(); ++k) fn(kernel_loss_names[k], kernel[k]);
    fn(std::string_view("skipped"), skipped);
    fn(std::string_view("block_unended"), block_unended);
  }
};

}  // namespace dc
