// Shared by the tests of a trace's filesystem failing mid-run (full, read-only): the tool run
// with its trace at a given path, and counting lines of its stderr.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/runtime_helpers.h"

namespace dc::test {

struct full_run {
  int exit_code = -1;
  std::string err;
  nlohmann::json summary;
};

// datacrumbs run with the trace at `trace` and the summary beside the scratch directory's files.
full_run run_tool(const scratch_dir& dir, const std::string& trace, const std::string& command_line,
                  const std::string& tool_args = "");

// The lines of `text` that contain `needle`.
int lines_with(const std::string& text, const std::string& needle);

}  // namespace dc::test
