// Where the daemon writes a run's trace: a pattern under the trace directory, so that the nodes
// of one job (one run id) never write the same file on a shared filesystem, and a day's traces
// share a directory. The pattern is `trace_pattern` of the system config (default:
// default_trace_pattern in config/system_config.h; DATACRUMBS_TRACE_PATTERN overrides):
//   %j run id   %h short host name   %u traced user's name (uid when it has none)
//   %Y %m %d    year, month, day (UTC) the daemon started   %% a literal %
#pragma once

#include <ctime>
#include <string>

#include "core/result.h"

namespace dc {

struct trace_name_fields {
  std::string run_id, host, user;
  std::time_t start = 0;  // seconds since the epoch
};

// The trace's path relative to the trace directory. Refuses a pattern that is absolute, names
// a parent directory, ends in '/', does not end in ".pfw.gz" or uses an unknown '%' letter; and
// a field that would add a path component (a '/' in a host or user name).
result<std::string> expand_trace_pattern(const std::string& pattern, const trace_name_fields& fields);

// Ok when a run id is safe to put in a file name: 1-64 of [A-Za-z0-9._-], not "." or "..".
result<> check_run_id(const std::string& run_id);

// This machine's host name up to its first '.'.
std::string short_host_name();

}  // namespace dc
