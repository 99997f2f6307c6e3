// The report's "inputs" section: what was read, what was skipped and why.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze/parsed_chunk.h"
#include "core/result.h"

namespace dc::analyze {

struct inputs_section {
  static constexpr size_t max_problems = 100;

  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t lines = 0;
  std::array<uint64_t, 6> skipped{};  // by skip_reason
  std::vector<std::string> problems;  // the first max_problems
  uint64_t problems_total = 0;
  bool print = false;  // also print each kept problem on stderr as it is found

  void skip(skip_reason r) { ++skipped[static_cast<size_t>(r)]; }
  void problem(std::string line);

  void merge(const inputs_section& other);
  nlohmann::json partial() const;
  static dc::result<inputs_section> from_partial(const nlohmann::json& j);
  nlohmann::json report() const;
};

}  // namespace dc::analyze
