#include "analyze/clock_section.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "analyze/run_section.h"
#include "analyze/text_format.h"

namespace dc::analyze {

namespace {

void widen(int64_t& lo, int64_t& hi, int64_t v)
{
  lo = std::min(lo, v);
  hi = std::max(hi, v);
}

// Widens [lo, hi] by another range; an empty one (lo > hi) adds nothing.
void widen_by(int64_t& lo, int64_t& hi, int64_t other_lo, int64_t other_hi)
{
  if (other_lo > other_hi)
    return;
  widen(lo, hi, other_lo);
  widen(lo, hi, other_hi);
}

// hi - lo for hi >= lo: exact for any two int64 values (the difference always fits in 64
// unsigned bits), where a signed subtraction of values read from a trace could overflow.
uint64_t span_of(int64_t lo, int64_t hi)
{
  return static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
}

// An NTP offset beyond this (about 11.6 days) is no clock reading: its host is taken as
// unsynchronized rather than corrected by it (and the arithmetic below stays in range).
constexpr int64_t most_offset_ns = 1'000'000'000'000'000;

nlohmann::json range_or_null(int64_t lo, int64_t hi)
{
  if (lo > hi)
    return nullptr;
  return {{"min", lo}, {"max", hi}};
}

std::string us_range(int64_t lo, int64_t hi)
{
  return lo == hi ? fmt("%+lld us", static_cast<long long>(lo))
                  : fmt("%+lld..%+lld us", static_cast<long long>(lo), static_cast<long long>(hi));
}

}  // namespace

void clock_section::note(const record& r)
{
  clock_host& h = hosts[r.hhash];
  ++h.traces;
  if (std::string_view s = r.text("ntp_source"); !s.empty())
    h.sources.emplace(s);
  else
    h.sources.emplace("kernel");  // traces written before chrony was read: adjtimex only
  if (auto v = r.arg("realtime_minus_monotonic_ns"))
    widen(h.rt_mono_min_ns, h.rt_mono_max_ns, *v);
  h.est_error_max_us = std::max(h.est_error_max_us, r.arg("ntp_est_error_us").value_or(0));
  h.max_error_max_us = std::max(h.max_error_max_us, r.arg("ntp_max_error_us").value_or(0));
  file_host_ = &h;
  file_shift_us_ = 0;
  if (r.arg("ntp_synchronized").value_or(0) == 0) {
    ++h.unsynchronized;
    return;
  }
  int64_t offset = r.arg("ntp_offset_ns").value_or(0);
  if (offset < -most_offset_ns || offset > most_offset_ns) {
    ++h.unsynchronized;
    return;
  }
  widen(h.offset_min_ns, h.offset_max_ns, offset);
  int64_t shift = std::llround(static_cast<double>(offset) / 1000.0);
  if (std::llabs(shift) <= threshold_us)
    shift = 0;
  file_shift_us_ = shift;
  widen(h.shift_min_us, h.shift_max_us, shift);
  widen(h.residual_min_ns, h.residual_max_ns, offset - shift * 1000);
}

const record& clock_section::place(const record& r, record& scratch)
{
  if (r.ph == phase::metadata && r.name == "clock" && r.cat == "dftracer") {
    note(r);
    return r;
  }
  if (file_shift_us_ == 0 || r.ts_us == 0)
    return r;
  scratch = r;
  if (__builtin_add_overflow(r.ts_us, file_shift_us_, &scratch.ts_us))
    scratch.ts_us = file_shift_us_ > 0 ? INT64_MAX : INT64_MIN;
  ++file_host_->shifted;
  return scratch;
}

void clock_section::merge(const clock_section& o)
{
  threshold_mixed = threshold_mixed || o.threshold_mixed || o.threshold_us != threshold_us;
  for (const auto& [hhash, q] : o.hosts) {
    clock_host& h = hosts[hhash];
    h.traces += q.traces;
    h.unsynchronized += q.unsynchronized;
    h.sources.insert(q.sources.begin(), q.sources.end());
    widen_by(h.offset_min_ns, h.offset_max_ns, q.offset_min_ns, q.offset_max_ns);
    widen_by(h.residual_min_ns, h.residual_max_ns, q.residual_min_ns, q.residual_max_ns);
    widen_by(h.shift_min_us, h.shift_max_us, q.shift_min_us, q.shift_max_us);
    widen_by(h.rt_mono_min_ns, h.rt_mono_max_ns, q.rt_mono_min_ns, q.rt_mono_max_ns);
    h.est_error_max_us = std::max(h.est_error_max_us, q.est_error_max_us);
    h.max_error_max_us = std::max(h.max_error_max_us, q.max_error_max_us);
    h.shifted += q.shifted;
  }
}

nlohmann::json clock_section::partial() const
{
  nlohmann::json hs = nlohmann::json::array();
  for (const auto& [hhash, h] : hosts)
    hs.push_back({{"hhash", hhash},
                  {"traces", h.traces},
                  {"unsynchronized", h.unsynchronized},
                  {"sources", h.sources},
                  {"offset_ns", {h.offset_min_ns, h.offset_max_ns}},
                  {"residual_ns", {h.residual_min_ns, h.residual_max_ns}},
                  {"shift_us", {h.shift_min_us, h.shift_max_us}},
                  {"rt_mono_ns", {h.rt_mono_min_ns, h.rt_mono_max_ns}},
                  {"est_error_us", h.est_error_max_us},
                  {"max_error_us", h.max_error_max_us},
                  {"shifted", h.shifted}});
  return {{"threshold_us", threshold_us}, {"threshold_mixed", threshold_mixed}, {"hosts", hs}};
}

dc::result<clock_section> clock_section::from_partial(const nlohmann::json& j)
{
  clock_section s;
  try {
    s.threshold_us = j.at("threshold_us").get<int64_t>();
    s.threshold_mixed = j.at("threshold_mixed").get<bool>();
    auto pair = [](const nlohmann::json& v, int64_t& lo, int64_t& hi) {
      lo = v.at(0).get<int64_t>();
      hi = v.at(1).get<int64_t>();
    };
    for (const auto& q : j.at("hosts")) {
      clock_host& h = s.hosts[q.at("hhash").get<uint64_t>()];
      h.traces = q.at("traces").get<uint64_t>();
      h.unsynchronized = q.at("unsynchronized").get<uint64_t>();
      h.sources = q.at("sources").get<std::set<std::string>>();
      pair(q.at("offset_ns"), h.offset_min_ns, h.offset_max_ns);
      pair(q.at("residual_ns"), h.residual_min_ns, h.residual_max_ns);
      pair(q.at("shift_us"), h.shift_min_us, h.shift_max_us);
      pair(q.at("rt_mono_ns"), h.rt_mono_min_ns, h.rt_mono_max_ns);
      h.est_error_max_us = q.at("est_error_us").get<int64_t>();
      h.max_error_max_us = q.at("max_error_us").get<int64_t>();
      h.shifted = q.at("shifted").get<uint64_t>();
    }
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("clock: ") + e.what());
  }
  return s;
}

nlohmann::json clock_section::report(const name_map& names, const std::set<uint64_t>& all_hosts) const
{
  nlohmann::json hs = nlohmann::json::array(), notes = nlohmann::json::array(),
                 unsynced = nlohmann::json::array();
  nlohmann::json without = nlohmann::json::array();
  int64_t lo = INT64_MAX, hi = INT64_MIN, res_lo = INT64_MAX, res_hi = INT64_MIN;
  size_t synced_hosts = 0;
  bool corrected = false;
  for (const auto& [hhash, h] : hosts) {
    std::string name = host_name(hhash, names);
    bool synced = h.offset_min_ns <= h.offset_max_ns;
    hs.push_back(
        {{"host", name},
         {"traces", h.traces},
         {"synchronized", h.unsynchronized == 0},
         {"sources", h.sources},
         {"offset_ns", range_or_null(h.offset_min_ns, h.offset_max_ns)},
         {"est_error_us", h.est_error_max_us},
         {"max_error_us", h.max_error_max_us},
         {"shift_us", range_or_null(h.shift_min_us, h.shift_max_us)},
         {"records_shifted", h.shifted},
         {"realtime_step_us", h.rt_mono_min_ns <= h.rt_mono_max_ns
                                  ? nlohmann::json(span_of(h.rt_mono_min_ns, h.rt_mono_max_ns) / 1000)
                                  : nlohmann::json(nullptr)}});
    if (synced) {
      ++synced_hosts;
      widen_by(lo, hi, h.offset_min_ns, h.offset_max_ns);
      widen_by(res_lo, res_hi, h.residual_min_ns, h.residual_max_ns);
    }
    if (h.shift_min_us <= h.shift_max_us && (h.shift_min_us != 0 || h.shift_max_us != 0)) {
      corrected = true;
      notes.push_back(name + ": clock off NTP time by more than " + std::to_string(threshold_us) +
                      " us: its timestamps moved " + us_range(h.shift_min_us, h.shift_max_us));
    }
    if (h.unsynchronized)
      unsynced.push_back(name);
    if (h.traces > 1 && span_of(h.rt_mono_min_ns, h.rt_mono_max_ns) >
                            static_cast<uint64_t>(std::max<int64_t>(threshold_us, 0)) * 1000)
      notes.push_back(name + ": its traces' realtime-monotonic offsets differ by " +
                      std::to_string(span_of(h.rt_mono_min_ns, h.rt_mono_max_ns) / 1000) +
                      " us: the clock was stepped (or the host rebooted) between them");
  }
  for (uint64_t h : all_hosts)
    if (!hosts.contains(h))
      without.push_back(host_name(h, names));
  size_t known = hosts.size() + without.size();
  if (!unsynced.empty() && known > 1) {
    int64_t worst = 0;
    for (const auto& [hhash, h] : hosts)
      if (h.unsynchronized)
        worst = std::max(worst, h.max_error_max_us);
    notes.push_back(
        fmt("%zu host(s) with an unsynchronized clock (kernel maximum error up to %.3f s): "
            "their placement against the other hosts is unknown and not corrected",
            unsynced.size(), worst / 1e6));
  }
  if (!without.empty() && known > 1)
    notes.push_back(std::to_string(without.size()) +
                    " host(s) without a clock record (not a DataCrumbs trace): not corrected");
  nlohmann::json skew = nullptr, residual = nullptr;
  if (synced_hosts > 1) {
    skew = static_cast<double>(span_of(lo, hi)) / 1000.0;
    residual = static_cast<double>(span_of(res_lo, res_hi)) / 1000.0;
    notes.push_back(fmt("skew between synchronized hosts: %.3f us recorded, %.3f us after correction",
                        skew.get<double>(), residual.get<double>()));
  }
  return {{"threshold_us", threshold_mixed ? nlohmann::json(nullptr) : nlohmann::json(threshold_us)},
          {"hosts", hs},
          {"unsynchronized", unsynced},
          {"without_record", without},
          {"skew_us", skew},
          {"residual_skew_us", residual},
          {"corrected", corrected},
          {"notes", notes}};
}

std::string clock_text(const nlohmann::json& clock)
{
  std::string out;
  for (const auto& n : clock["notes"]) out += "clock: " + n.get<std::string>() + "\n";
  if (clock["threshold_us"].is_null() && !clock["hosts"].empty())
    out += "clock: partials made with different --clock-skew-us thresholds were merged\n";
  return out;
}

}  // namespace dc::analyze
