#include "sink/lanes.h"

#include <algorithm>

namespace dc {

lane_table::placement lane_table::place(uint32_t pid, lane_kind kind, uint32_t dev, uint64_t ts_us,
                                        uint64_t end_us)
{
  if (++places_ % places_per_sweep == 0)
    drop_idle(ts_us);
  std::vector<lane>& lanes = groups_[{pid, kind, kind == lane_kind::device ? dev : 0}];
  // Strictly after: a span starting where another ends (both floored to a microsecond) would
  // be nested in it by Chrome's trace model, and two instants at one microsecond are stacked by
  // Perfetto.
  for (size_t i = 0; i < lanes.size(); ++i)
    if (lanes[i].end_us < ts_us) {
      lanes[i].end_us = end_us;
      return {lanes[i].tid, false, i};
    }
  lanes.push_back({next_tid_++, end_us});
  return {lanes.back().tid, true, lanes.size() - 1};
}

void lane_table::drop_idle(uint64_t ts_us)
{
  if (ts_us < idle_us)
    return;
  std::erase_if(groups_, [&](const auto& group) {
    return std::ranges::all_of(group.second, [&](const lane& l) { return l.end_us + idle_us < ts_us; });
  });
}

std::string lane_table::group_name(lane_kind kind, uint32_t dev)
{
  if (kind == lane_kind::device)
    return "device " + std::to_string(dev >> 20) + ":" + std::to_string(dev & 0xfffff);
  return "network";
}

std::string lane_table::lane_name(lane_kind kind, uint32_t dev, size_t index)
{
  return group_name(kind, dev) + " #" + std::to_string(index);
}

}  // namespace dc
