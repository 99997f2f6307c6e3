// A DataCrumbs trace writes a buffered read's or write's FS operation in the args of the call it
// ended with ("fs": the operation, then first_page/last_page or fs_offset) instead of as an event
// of its own (one event per call: src/collect/fs_decoder.cpp). Readers count it as the FS event
// it stands for: same process, thread, start, duration, file and result, nested in the call.
#pragma once

#include <array>

#include "analyze/record.h"

namespace dc::analyze {

struct folded_fs {
  record r;                          // the FS operation; its strings point into the call's line
  std::array<record_arg, 4> args{};  // ret, offset, first_page, last_page
};

// True, with `out` filled, when `call` is a POSIX span that carries an FS operation.
bool unfold_fs(const record& call, folded_fs& out);

}  // namespace dc::analyze
