#include "core/host_clock.h"

#include <sys/timex.h>

namespace dc {

host_clock read_host_clock(clock_offset offset)
{
  host_clock c;
  c.realtime_minus_monotonic_ns = offset.realtime_minus_monotonic_ns;
  timex t{};  // modes 0: read only
  int state = adjtimex(&t);
  if (state == -1)
    return c;
  c.ntp_synchronized = state != TIME_ERROR && !(t.status & STA_UNSYNC);
  c.ntp_offset_ns = (t.status & STA_NANO) ? t.offset : t.offset * 1000;
  c.ntp_est_error_us = t.esterror;
  c.ntp_max_error_us = t.maxerror;
  return c;
}

}  // namespace dc
