#include "core/clock.h"

#include <ctime>
#include <limits>

namespace dc {

namespace {
int64_t ns_of(clockid_t id)
{
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

uint64_t monotonic_now_ns()
{
  return static_cast<uint64_t>(ns_of(CLOCK_MONOTONIC));
}

uint64_t epoch_now_us()
{
  return static_cast<uint64_t>(ns_of(CLOCK_REALTIME)) / 1000;
}

clock_offset measure_clock_offset()
{
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  clock_offset best{};
  for (int i = 0; i < 32; ++i) {
    int64_t before = ns_of(CLOCK_REALTIME);
    int64_t mono = ns_of(CLOCK_MONOTONIC);
    int64_t after = ns_of(CLOCK_REALTIME);
    if (after - before < best_gap) {
      best_gap = after - before;
      best.realtime_minus_monotonic_ns = before + (after - before) / 2 - mono;
    }
  }
  return best;
}

}  // namespace dc
