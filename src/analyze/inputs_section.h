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
  std::array<uint64_t, 6> skipped{};  // lines, by skip_reason
  // Compressed bytes not read (corrupt gzip members from their start, or from their damage, to
  // the next member's header; bytes that are not gzip at all), how many corrupt members there
  // were, and the lines the skipped corrupt members decoded to before their damage (a lower
  // bound of the lines lost: what follows the damage cannot be decoded).
  uint64_t unreadable_bytes = 0;
  uint64_t corrupt_members = 0;
  uint64_t corrupt_lines_at_least = 0;
  std::vector<std::string> problems;  // the first max_problems
  uint64_t problems_total = 0;
  bool print = false;  // also print each kept problem on stderr as it is found

  void skip(skip_reason r) { ++skipped[static_cast<size_t>(r)]; }
  // Lines read as records: every counted line that was not skipped.
  uint64_t records() const;
  void problem(std::string line);

  void merge(const inputs_section& other);
  nlohmann::json partial() const;
  static dc::result<inputs_section> from_partial(const nlohmann::json& j);
  nlohmann::json report() const;
};

}  // namespace dc::analyze
