// The report's "clock" section, and the one place timestamps are moved: traces of several hosts
// on one timeline. A DataCrumbs trace's second line is a `clock` record of its host's clock at
// start (sink/pfw_writer.cpp write_clock): the REALTIME-MONOTONIC offset its timestamps were
// converted with, whether the kernel's clock is NTP-disciplined, and the NTP daemon's offset of
// the local clock from NTP time (reference minus local) with its error. A trace recorded while
// the clock was synchronized and off NTP time by more than the threshold has every later
// timestamp of its file shifted by that offset (rounded to the µs): each host is moved onto NTP
// time on its own, so partial results of disjoint trace sets stay mergeable. Unsynchronized
// clocks cannot be corrected (there is no reference to measure against): the report says so.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

inline constexpr int64_t default_clock_skew_us = 1000;

struct clock_host {
  uint64_t traces = 0;          // traces of this host with a clock record
  uint64_t unsynchronized = 0;  // of them, recorded with the kernel's clock unsynchronized
  std::set<std::string> sources;
  int64_t offset_min_ns = INT64_MAX, offset_max_ns = INT64_MIN;      // synchronized traces only
  int64_t residual_min_ns = INT64_MAX, residual_max_ns = INT64_MIN;  // offset - applied shift
  int64_t shift_min_us = INT64_MAX, shift_max_us = INT64_MIN;
  int64_t est_error_max_us = 0, max_error_max_us = 0;
  int64_t rt_mono_min_ns = INT64_MAX, rt_mono_max_ns = INT64_MIN;
  uint64_t shifted = 0;  // records whose timestamp was moved
};

struct clock_section {
  int64_t threshold_us = default_clock_skew_us;  // shift when |offset| exceeds it
  bool threshold_mixed = false;                  // merged partials made with different thresholds
  std::map<uint64_t, clock_host> hosts;          // by host hash

  // The record as the other sections must see it: r itself, or a copy in scratch with its
  // timestamp on NTP time. Notes r when it is a clock record.
  const record& place(const record& r, record& scratch);
  void end_file()
  {
    file_shift_us_ = 0;
    file_host_ = nullptr;
  }

  void merge(const clock_section& other);
  nlohmann::json partial() const;
  static dc::result<clock_section> from_partial(const nlohmann::json& j);
  // all_hosts: every host the run saw (those without a clock record are listed as such).
  nlohmann::json report(const name_map& names, const std::set<uint64_t>& all_hosts) const;

 private:
  void note(const record& r);
  int64_t file_shift_us_ = 0;
  clock_host* file_host_ = nullptr;
};

// The text report's lines for the clock section (empty when there is nothing to say).
std::string clock_text(const nlohmann::json& clock);

}  // namespace dc::analyze
