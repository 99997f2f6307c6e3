// What the arguments of well-known user-space functions mean (stdio, MPI-IO, HDF5): which are
// shown and under what key, which one is a file or object name. Functions not listed are
// traced with their return value only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace dc {

struct function_arg {
  std::string_view key;
  uint8_t index;
};

enum class name_arg : uint8_t {
  none,
  file,    // a path: the event's fhash
  object,  // a dataset, group or attribute name: shown as "name"
};

// An argument that points at the value wanted (MPI_File_open's MPI_File* out parameter,
// MPI_File_close's MPI_File*): the probe reads the 8 bytes it points at, at entry or at return,
// and the event carries them in that argument's place.
enum class deref : uint8_t { none, at_entry, at_return };

struct function_info {
  std::string_view name;
  int8_t str_arg = -1;  // argument read as a string at entry
  name_arg str_kind = name_arg::none;
  std::vector<function_arg> args;
  int8_t item_size_arg = -1;  // fread/fwrite: bytes = ret * this argument
  int8_t deref_arg = -1;      // argument read through (see deref)
  deref deref_when = deref::none;
};

const function_info* find_function(std::string_view name);

}  // namespace dc
