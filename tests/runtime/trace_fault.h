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

// What a trace cut short by its filesystem holds, once checked (with gtest expectations) to be
// a prefix of whole gzip members, every line valid JSON, no end record, and the summary's
// written events exactly the file's with some counted unwritten.
struct cut_trace {
  size_t members = 0;
  uint64_t in_file = 0;    // events ("ph":"X") in the file
  uint64_t unwritten = 0;  // the summary's events.unwritten
};
cut_trace expect_whole_prefix(const std::string& trace, const nlohmann::json& summary);

}  // namespace dc::test
