// `datacrumbs explore`: what can be probed. A binary's functions (from its ELF symbol tables),
// its USDT probes (--usdt), or with --kernel the kernel's tracepoints and which layers are live.
#pragma once

#include <string>

#include "cli/command_line.h"
#include "core/result.h"

namespace dc {

result<int> explore(const explore_options& options);

}  // namespace dc
