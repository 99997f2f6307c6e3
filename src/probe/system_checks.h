// What the machine must offer before anything is loaded: privileges and a mounted tracefs.
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

// Ok when the process may load and attach BPF programs (root, or CAP_BPF + CAP_PERFMON).
result<> check_bpf_privileges();

// Mounts tracefs at /sys/kernel/tracing when it is missing (classic tracepoints need it).
// Returns a note for the user when it mounted something, an error when it could not.
result<std::string> ensure_tracefs();

}  // namespace dc
