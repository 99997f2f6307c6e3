// Events as decoders produce them, for tests of the sinks.
#pragma once

#include <string_view>

#include "core/event.h"

namespace dc::test {

// An operation of `layer` by process `pid`; "read" and "write" move `bytes` that way.
inline trace_event io_event(std::string_view name, uint32_t pid, uint64_t bytes, uint64_t dur_us,
                            std::string_view layer = "POSIX")
{
  trace_event ev;
  ev.category = layer;
  ev.dir = name == "read" ? io_dir::read : name == "write" ? io_dir::write : io_dir::none;
  ev.name = name;
  ev.pid = pid;
  ev.tid = pid;
  ev.bytes = bytes;
  ev.dur_us = dur_us;
  return ev;
}

}  // namespace dc::test
