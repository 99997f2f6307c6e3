#include "runtime/strace_counts.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "core/syscall_table.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {

std::map<std::string, uint64_t> strace_counts(const std::string& path)
{
  std::map<std::string, uint64_t> counts;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 5 || f[0] == "%" || f[0].starts_with("-") || f.back() == "total")
      continue;
    counts[f.back()] = std::stoull(f[3]);
  }
  return counts;
}

int expect_counts_equal(const std::map<std::string, uint64_t>& truth, const nlohmann::json& posix_layer)
{
  int compared = 0;
  for (const auto& s : traced_syscalls()) {
    std::string name(s.name);
    auto it = truth.find(name);
    uint64_t expected = it == truth.end() ? 0 : it->second;
    uint64_t got = posix_layer.contains(name) ? posix_layer[name]["count"].get<uint64_t>() : 0;
    EXPECT_EQ(got, expected) << name;
    compared += expected > 0;
  }
  return compared;
}

}  // namespace dc::test
