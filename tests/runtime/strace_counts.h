// strace -f -c as ground truth for the tool's per-system-call counts.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace dc::test {

// The per-call counts of a `strace -c -o PATH` report.
std::map<std::string, uint64_t> strace_counts(const std::string& path);

// Every system call the tool traces: its count in the summary's POSIX layer equals strace's
// (0 where strace saw none). Returns how many of them strace saw at least once.
int expect_counts_equal(const std::map<std::string, uint64_t>& truth, const nlohmann::json& posix_layer);

}  // namespace dc::test
