// What a trace records of its host's clock, so traces of one job from several nodes can be put
// on one timeline (analyze's clock section): the REALTIME-MONOTONIC offset the events'
// timestamps were converted with, and how far the local clock is from NTP time at start.
//
// Where the offset and error come from: the kernel's NTP state (adjtimex) tells whether the clock
// is disciplined (STA_UNSYNC) and its error bounds, which both ntpd and chronyd set. The offset
// still to be corrected is in the kernel only when the daemon uses the kernel's PLL: ntpd does
// (adjtimex's `offset` is then exactly what it has not yet slewed away); chronyd does not (it
// slews with the frequency, so adjtimex's offset stays 0) and keeps its current correction to
// itself. So when chronyd runs (its socket exists), its own report is read: `chronyc -c
// tracking`'s "System time" (NTP time minus the local clock) and its error (root dispersion plus
// half the root delay, chrony's bound on the offset's accuracy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace dc {

struct host_clock {
  int64_t realtime_minus_monotonic_ns = 0;
  bool ntp_synchronized = false;      // the clock is disciplined (kernel: no STA_UNSYNC; chrony: leap status)
  int64_t ntp_offset_ns = 0;          // NTP time minus the local clock, still to be corrected
  int64_t ntp_est_error_us = 0;       // estimated error
  int64_t ntp_max_error_us = 0;       // maximum error (the kernel's)
  std::string ntp_source = "kernel";  // "kernel" (adjtimex) or "chrony"
};

// chronyd's tracking report, from `chronyc -c tracking` (one CSV line).
struct chrony_tracking {
  double system_time_s = 0;  // NTP time minus the local clock (chronyc: positive is "slow")
  double root_delay_s = 0;
  double root_dispersion_s = 0;
  bool synchronized = false;  // leap status other than "Not synchronised"
};
std::optional<chrony_tracking> parse_chronyc_tracking(std::string_view csv);

// The kernel's state, then chronyd's report when its command socket exists.
host_clock read_host_clock(clock_offset offset);

}  // namespace dc
