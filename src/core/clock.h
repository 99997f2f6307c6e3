// Kernel timestamps are CLOCK_MONOTONIC nanoseconds; traces carry epoch microseconds.
// The REALTIME-MONOTONIC offset is measured once at start and applied to every event.
#pragma once

#include <cstdint>

namespace dc {

struct clock_offset {
  int64_t realtime_minus_monotonic_ns = 0;
};

// CLOCK_MONOTONIC now, the kernel timestamps' clock.
uint64_t monotonic_now_ns();

// Epoch microseconds now (CLOCK_REALTIME): the `ts` of lines no kernel event dates.
uint64_t epoch_now_us();

// Takes the tightest of several REALTIME/MONOTONIC/REALTIME bracketings.
clock_offset measure_clock_offset();

inline uint64_t to_epoch_us(uint64_t monotonic_ns, clock_offset offset)
{
  return static_cast<uint64_t>(static_cast<int64_t>(monotonic_ns) + offset.realtime_minus_monotonic_ns) /
         1000;
}

// Start and end are each floored to a microsecond, so an event nested in another in
// nanoseconds stays nested in the trace, and durations add up to what the trace shows.
struct us_span {
  uint64_t ts_us;
  uint64_t dur_us;
};

inline us_span to_span(uint64_t start_ns, uint64_t dur_ns, clock_offset offset)
{
  uint64_t start = to_epoch_us(start_ns, offset);
  uint64_t end = to_epoch_us(start_ns + dur_ns, offset);
  return {start, end - start};
}

}  // namespace dc
