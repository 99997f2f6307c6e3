#include "core/host_clock.h"

#include <sys/timex.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace dc {

namespace {

// Where Debian's (and most distributions') chronyd listens for chronyc as root.
constexpr const char* chrony_socket = "/run/chrony/chronyd.sock";

std::optional<double> number(const std::string& s)
{
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// chronyc's report, or nothing (no chronyd, no chronyc, or an answer that is not one line of
// the tracking report). Bounded: a hung chronyd costs at most 2 s at start.
std::optional<chrony_tracking> ask_chronyd()
{
  if (access(chrony_socket, F_OK) != 0)
    return std::nullopt;
  FILE* p = popen("timeout 2 chronyc -c -n tracking 2>/dev/null", "r");
  if (!p)
    return std::nullopt;
  char line[512] = {};
  bool got = std::fgets(line, sizeof line, p) != nullptr;
  pclose(p);
  if (!got)
    return std::nullopt;
  return parse_chronyc_tracking(line);
}

}  // namespace

std::optional<chrony_tracking> parse_chronyc_tracking(std::string_view csv)
{
  while (!csv.empty() && (csv.back() == '\n' || csv.back() == '\r')) csv.remove_suffix(1);
  std::vector<std::string> f;
  size_t at = 0;
  while (true) {
    size_t comma = csv.find(',', at);
    f.emplace_back(csv.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos)
      break;
    at = comma + 1;
  }
  // Reference ID, name, stratum, ref time, system time, last offset, RMS offset, frequency,
  // residual frequency, skew, root delay, root dispersion, update interval, leap status.
  if (f.size() != 14)
    return std::nullopt;
  auto system_time = number(f[4]), delay = number(f[10]), dispersion = number(f[11]);
  if (!system_time || !delay || !dispersion)
    return std::nullopt;
  return chrony_tracking{*system_time, *delay, *dispersion, f[13] != "Not synchronised"};
}

host_clock read_host_clock(clock_offset offset)
{
  host_clock c;
  c.realtime_minus_monotonic_ns = offset.realtime_minus_monotonic_ns;
  timex t{};  // modes 0: read only
  int state = adjtimex(&t);
  if (state != -1) {
    c.ntp_synchronized = state != TIME_ERROR && !(t.status & STA_UNSYNC);
    c.ntp_offset_ns = (t.status & STA_NANO) ? t.offset : t.offset * 1000;
    c.ntp_est_error_us = t.esterror;
    c.ntp_max_error_us = t.maxerror;
  }
  if (auto chrony = ask_chronyd()) {
    c.ntp_source = "chrony";
    c.ntp_synchronized = chrony->synchronized;
    c.ntp_offset_ns = std::llround(chrony->system_time_s * 1e9);
    c.ntp_est_error_us = std::llround((chrony->root_dispersion_s + chrony->root_delay_s / 2) * 1e6);
  }
  return c;
}

}  // namespace dc
