// A block test's failure message: which of a file's device blocks no traced BLOCK read covered.
#pragma once

#include <string>

#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {

// For a failure's message: the file's data blocks on the device (FIEMAP) that no BLOCK read of
// the trace covered, as ranges of 4 KiB device blocks, so that a whole readahead batch missing
// tells itself from scattered blocks; and the block programs' recursion misses (runs the kernel
// skipped because the program was already running on that CPU).
std::string uncovered_blocks(const traced_run& run, const loop_fs& fs, const std::string& path);

}  // namespace dc::test
