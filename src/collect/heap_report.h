// The allocator's own account of the tracer's heap, for the soak (bench/soak.sh): with
// DATACRUMBS_MALLOC_INFO=FILE, glibc's malloc_info() is appended to FILE at each of the
// formatter's trims, so a rising RSS can be split into memory in use and memory glibc keeps.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>

#include "core/result.h"

namespace dc {

class heap_report {
 public:
  // Opens the file DATACRUMBS_MALLOC_INFO names (new or truncated, never through a link); an
  // inactive report when it is unset.
  static result<heap_report> from_environment();

  // One <sample ms="..."> element (milliseconds since the report opened) holding malloc_info.
  void sample();

 private:
  struct closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, closer> file_;
  std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();
};

}  // namespace dc
