// Running the real tool on real workloads from tests, and reading what it wrote.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "unit/trace_reader.h"

namespace dc::test {

// A scratch directory (canonical path), removed with its contents at scope exit.
struct scratch_dir {
  std::string path;
  scratch_dir();
  ~scratch_dir();
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

std::string shell_quote(const std::string& s);

// Runs a shell command line; returns its exit status as a shell reports it.
int run_shell(const std::string& command_line);

std::string read_file(const std::string& path);
uint64_t now_epoch_us();

struct traced_run {
  int exit_code = -1;
  std::string err;  // the tool's stderr
  nlohmann::json summary;
  parsed_trace trace;
  uint64_t start_us = 0, end_us = 0;
};

// datacrumbs run -o DIR/trace.pfw.gz --summary DIR/summary.json -- <command_line>
traced_run trace_command(const scratch_dir& dir, const std::string& command_line,
                         const std::string& tool_args = "");
// The same, the tool's whole command line (stderr redirection included) handed to `wrap`, whose
// result is what runs (e.g. under script(1) for a terminal).
traced_run trace_command(const scratch_dir& dir, const std::string& command_line,
                         const std::string& tool_args,
                         const std::function<std::string(const std::string&)>& wrap);

// Events ("ph":"X") of a trace, in trace order.
std::vector<nlohmann::json> complete_events(const parsed_trace& t);

// A layer's field ("count", "bytes", "time_us") summed over its operations in a run's summary;
// 0 when the layer has none.
uint64_t layer_total(const nlohmann::json& summary, const std::string& layer, const std::string& field);

// The pid of the run's process whose command starts with `prefix` (a test failure when none).
uint32_t pid_of_command(const traced_run& run, const std::string& prefix);

// Path of every FH hash in the trace.
std::map<uint64_t, std::string> file_names(const parsed_trace& t);

}  // namespace dc::test

#include <gtest/gtest.h>
#include <unistd.h>

namespace dc::test {

// Runtime tests load real BPF programs: they need root, and say so instead of skipping.
struct runtime_test : ::testing::Test {
  scratch_dir dir;
  void SetUp() override { ASSERT_EQ(geteuid(), 0u) << "runtime tests need root (they load BPF programs)"; }
};

}  // namespace dc::test
