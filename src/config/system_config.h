// The installed system configuration (<prefix>/etc/datacrumbs/datacrumbs.yaml): where the daemon
// writes traces, where the signing secret and the signing service's socket are. Each value can
// be overridden by an environment variable (DATACRUMBS_TRACE_DIR, DATACRUMBS_TRACE_PATTERN,
// DATACRUMBS_SECRET_FILE,
// DATACRUMBS_SIGN_SOCKET); the run directory (ready files) is /run/datacrumbs, or
// DATACRUMBS_RUN_DIR, as the systemd unit expects.
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

// The trace's path under the trace directory unless the config says otherwise: a directory per
// day, a file per run id and host (deploy/trace_name.h expands it and says the fields).
inline constexpr const char* default_trace_pattern = "%Y/%m/%d/datacrumbs-%j-%h.pfw.gz";

struct system_config {
  std::string trace_dir = "/var/lib/datacrumbs/traces";
  std::string trace_pattern = default_trace_pattern;
  std::string run_dir = "/run/datacrumbs";
  std::string secret_file = "/var/lib/datacrumbs/probe-signing.key";
  std::string sign_socket = "/run/datacrumbs/sign.sock";
};

// Defaults, then the file at `path` if it exists, then the environment. A file that does not
// parse, or names a key it does not know, is an error naming it.
result<system_config> load_system_config_from(const std::string& path);

// The same from the installed file.
result<system_config> load_system_config();

}  // namespace dc
