// datacrumbs analyze: traces (or partial results) in, the report out (text on stdout, JSON,
// a mergeable partial).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "core/result.h"

namespace dc {

// Returns the exit code: 0 when something was read, 1 when nothing could be.
result<int> run_analyze(const analyze_options& options);

}  // namespace dc
