// The layers' category names: a loader reports its layer under one (datacrumbs layers), its
// decoder stamps its events with it (the trace's "cat"), the sinks group by it. User-space
// probes name their events by their config entry instead ("STDIO", "MPI", ...).
#pragma once

#include <string_view>

namespace dc::category {

inline constexpr std::string_view posix = "POSIX";
inline constexpr std::string_view fs = "FS";
inline constexpr std::string_view block = "BLOCK";
inline constexpr std::string_view pagecache = "PAGECACHE";
inline constexpr std::string_view net = "NET";
inline constexpr std::string_view fault = "FAULT";
inline constexpr std::string_view user = "USER";              // the uprobe layer, as a loader
inline constexpr std::string_view registration = "REGISTER";  // the daemon's beacon: no events

}  // namespace dc::category
