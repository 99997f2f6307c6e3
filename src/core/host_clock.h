// What a trace records of its host's clock, so traces of one job from several nodes can be put
// on one timeline: the REALTIME-MONOTONIC offset the events' timestamps were converted with, and
// the kernel's NTP discipline state (set by chronyd or ntpd through adjtimex) at start.
#pragma once

#include <cstdint>

#include "core/clock.h"

namespace dc {

struct host_clock {
  int64_t realtime_minus_monotonic_ns = 0;
  bool ntp_synchronized = false;  // the kernel's clock is disciplined (no STA_UNSYNC)
  int64_t ntp_offset_ns = 0;      // offset still being corrected
  int64_t ntp_est_error_us = 0;   // estimated error
  int64_t ntp_max_error_us = 0;   // maximum error
};

host_clock read_host_clock(clock_offset offset);

}  // namespace dc
