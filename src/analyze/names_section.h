// Hash -> name, gathered from FH/HH/SH metadata lines (and plain fname/hostname strings of
// older traces); used by every section's report.
#pragma once

#include <nlohmann/json.hpp>

#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

struct names_section {
  name_map names;

  void add(const record& r);
  void merge(const names_section& other);
  nlohmann::json partial() const;
  static dc::result<names_section> from_partial(const nlohmann::json& j);
};

}  // namespace dc::analyze
