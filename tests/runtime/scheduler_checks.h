// What the scheduler tests (SLURM, Flux) check in a job's trace: per output file, how many
// 4 KiB writes went to it and from which processes; and, per task, that the trace holds
// exactly strace's count of every traced system call of the task's process, with its rank.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/syscall_table.h"
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

// strace's count of each system call of process `pid` in `strace -f` output: strace prefixes a
// line with the pid only while it traces more than one process, and the tasks' writer (started
// first, ended last) is the only one otherwise. "<... resumed>", signal and exit lines are not
// calls.
inline std::map<std::string, uint64_t> strace_counts(const std::string& strace_output, uint32_t pid)
{
  std::map<std::string, uint64_t> counts;
  std::istringstream in(read_file(strace_output));
  for (std::string line; std::getline(in, line);) {
    std::string who;
    if (size_t digits = line.find_first_not_of("0123456789");
        digits != 0 && digits != std::string::npos && line[digits] == ' ') {
      who = line.substr(0, digits);
      line = line.substr(line.find_first_not_of(' ', digits));
    }
    if (!who.empty() && who != std::to_string(pid))
      continue;
    size_t paren = line.find('(');
    if (paren == std::string::npos || line.starts_with("<...") || line.starts_with("---") ||
        line.starts_with("+++"))
      continue;
    ++counts[line.substr(0, paren)];
  }
  return counts;
}

// The task's process in the trace: exactly strace's count of every traced system call (its
// writes: `writes` blocks), and its rank and size from the launcher's environment.
inline void expect_process_equals_strace(const parsed_trace& trace, const std::string& strace_output,
                                         uint32_t pid, int rank, int size, uint64_t writes)
{
  std::map<std::string, uint64_t> ours;
  for (const auto& e : complete_events(trace))
    if (e["pid"] == pid && e["cat"] == "POSIX")
      ++ours[e["name"].get<std::string>()];
  auto truth = strace_counts(strace_output, pid);
  ASSERT_EQ(truth["write"], writes) << "rank " << rank << ": strace's own count of dd's writes";
  int compared = 0;
  for (const auto& s : traced_syscalls()) {
    std::string name(s.name);
    EXPECT_EQ(ours[name], truth[name]) << "rank " << rank << ": " << name;
    compared += truth[name] > 0;
  }
  EXPECT_GE(compared, 8) << "rank " << rank;
  EXPECT_GE(truth["read"], writes) << "rank " << rank << ": dd reads each block";
  bool labelled = false;
  for (const auto& l : trace.lines)
    if (l["ph"] == "M" && l["name"] == "process_name" && l["pid"] == pid && l["args"].contains("rank")) {
      EXPECT_EQ(l["args"]["rank"], rank);
      EXPECT_EQ(l["args"]["size"], size);
      labelled = true;
    }
  EXPECT_TRUE(labelled) << "rank " << rank << " has no rank label";
}

}  // namespace dc::test
