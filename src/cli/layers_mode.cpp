#include "cli/layers_mode.h"

#include <cstdio>

#include "probe/session.h"

namespace dc {

result<int> list_layers(bool verbose)
{
  auto probes = session::open({1 << 20, verbose, {}});
  if (!probes)
    return std::unexpected(probes.error());
  for (const auto& note : (*probes)->notes()) std::printf("note: %s\n", note.c_str());
  for (const layer_report& r : (*probes)->reports()) {
    std::printf("%-10s %-10s %s\n", r.name.c_str(), r.category.c_str(), r.live ? "live" : "not live");
    for (const auto& h : r.hooks) std::printf("    %s\n", h.c_str());
    if (!r.why.empty())
      std::printf("    why: %s\n", r.why.c_str());
  }
  return 0;
}

}  // namespace dc
