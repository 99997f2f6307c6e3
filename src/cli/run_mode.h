// `datacrumbs run`: trace a command tree from its exec to its exit.
#pragma once

#include <string>
#include <vector>

#include "cli/command_line.h"
#include "core/result.h"

namespace dc {

// Returns the exit code the tool should exit with: the command's, as a shell reports it.
result<int> run_traced(const run_options& options);

}  // namespace dc
