// What the storm tests share (tests/runtime/storm_workload.c drives their workloads): a data
// file the workload reads, and sizes a run can change through the environment.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/runtime_helpers.h"

namespace dc::test {

// The layers of a storm: every kernel layer. The user-space layers (the default config's stdio)
// hold each new process while its probes attach, which takes a storm from seconds to minutes.
inline const std::string kernel_layers = "--layers syscall,fs,block,pagecache,net,fault";

inline int env_or(const char* name, int fallback)
{
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

struct storm : runtime_test {
  std::string data;
  void SetUp() override
  {
    runtime_test::SetUp();
    data = dir / "data";
    ASSERT_EQ(run_shell("head -c 4096 /dev/urandom > " + shell_quote(data)), 0);
  }
  std::string workload(const std::string& args) const { return std::string(STORM_WORKLOAD_BIN) + " " + args; }
  // Events of the POSIX layer on the data file.
  std::vector<nlohmann::json> data_calls(const traced_run& run) const
  {
    auto names = file_names(run.trace);
    std::vector<nlohmann::json> out;
    for (const auto& e : complete_events(run.trace))
      if (e["cat"] == "POSIX" && e["args"].contains("fhash") &&
          names[e["args"]["fhash"].get<uint64_t>()] == data)
        out.push_back(e);
    return out;
  }
};

}  // namespace dc::test
