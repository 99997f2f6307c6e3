// `datacrumbs live RUN-ID`: the live view of a daemon's run, from the snapshot the daemon
// replaces every second in its run directory (cli/live_output.h, docs/live.md).
#pragma once

#include <string>

#include "cli/command_line.h"
#include "core/result.h"

namespace dc {

// 0 once the run's last frame is shown; an error when there is no such run or its daemon is gone.
result<int> run_live(const live_options& options);

}  // namespace dc
