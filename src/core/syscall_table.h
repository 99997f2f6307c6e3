// The system calls the POSIX layer traces: for each, its kernel name, which arguments are files
// or paths (this fills the BPF spec map), which arguments the trace shows, and whether its
// return value is a byte count. One table, read by both the probe and the decoder.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

extern "C" {
#include "events.h"
}

#include "core/event.h"

namespace dc {

// How an argument is shown in the trace's args.
enum class arg_format : uint8_t { i64, u64, i32 };

struct shown_arg {
  std::string_view key;  // "fd", "count", "offset", ...
  int8_t index;          // syscall argument index 0..5
  arg_format format = arg_format::i64;
};

struct syscall_info {
  int nr;
  std::string_view name;
  dc_syscall_spec spec;
  std::array<shown_arg, 4> args;  // key empty = unused
  io_dir dir;                     // none: the return value is not a byte count; a copy: read
};

// A call that moves data between two files (copy_file_range, sendfile, splice, tee): its return
// value is bytes read from its first file (fd_a, the trace's fhash) and written to its second
// (fd_b, fhash2).
inline bool moves_between_files(const syscall_info& s)
{
  return s.spec.moves == DC_MOVES_COPY;
}

// Every traced system call known on this architecture.
std::span<const syscall_info> traced_syscalls();

// The entry for a syscall number, or nullptr when it is not traced.
const syscall_info* find_syscall(uint32_t nr);
// The entry for a syscall's kernel name ("fdatasync"), or nullptr when it is not traced.
const syscall_info* find_syscall(std::string_view name);

}  // namespace dc
