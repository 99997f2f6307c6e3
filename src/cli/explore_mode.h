// `datacrumbs explore`: what can be probed. A binary's functions (from its ELF symbol tables),
// its USDT probes (--usdt), or with --kernel the kernel's tracepoints and which layers are live.
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

struct explore_options {
  std::string target;  // a library name or a path
  std::string regex;   // whole-name filter; empty: everything
  bool kernel = false;
  bool usdt = false;  // the binary's USDT probes ("provider:name") instead of its functions
};

result<int> explore(const explore_options& options);

}  // namespace dc
