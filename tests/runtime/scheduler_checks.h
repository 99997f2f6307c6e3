// What the scheduler tests (SLURM, Flux) check in a job's trace: per output file, how many
// 4 KiB writes went to it, and from which processes.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "runtime/runtime_helpers.h"

namespace dc::test {

struct file_writes {
  int writes = 0;
  std::set<uint32_t> pids;
};

inline std::map<uint64_t, file_writes> block_writes_by_file(const parsed_trace& trace)
{
  std::map<uint64_t, file_writes> by_file;
  for (const auto& e : complete_events(trace)) {
    if (e["name"] != "write" || e["args"]["ret"] != 4096)
      continue;
    auto& f = by_file[e["args"].value("fhash", 0ull)];
    ++f.writes;
    f.pids.insert(e["pid"].get<uint32_t>());
  }
  return by_file;
}

}  // namespace dc::test
