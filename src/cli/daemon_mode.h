// The daemon: `datacrumbs SIGNED-PROBES.json.gz [RUN-ID]` (root). Verifies the probe file,
// attaches its probes, says it is ready, and traces every process of the signed user that
// registers through libdatacrumbs_client.so (with its threads and descendants) until SIGINT or
// SIGTERM, then finishes the trace and removes its ready file.
#pragma once

#include <cstdint>
#include <string>

#include "cli/command_line.h"
#include "core/result.h"

namespace dc {

result<int> run_daemon(const daemon_options& options);

}  // namespace dc
