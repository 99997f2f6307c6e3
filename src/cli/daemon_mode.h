// The daemon: `datacrumbs SIGNED-PROBES.json.gz [RUN-ID]` (root). Verifies the probe file,
// attaches its probes, says it is ready, and traces every process of the signed user that
// registers through libdatacrumbs_client.so (with its threads and descendants) until SIGINT or
// SIGTERM, then finishes the trace and removes its ready file.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace dc {

struct daemon_options {
  std::string probe_file;
  std::string run_id;  // empty: the daemon's pid
  bool verbose = false;
  uint64_t hold_ring_bytes = 0;  // DATACRUMBS_HOLD_RING_KB (a test and tuning knob); 0: 64 KiB
};

result<int> run_daemon(const daemon_options& options);

}  // namespace dc
