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

struct function_info {
  std::string_view name;
  int8_t str_arg = -1;  // argument read as a string at entry
  name_arg str_kind = name_arg::none;
  std::vector<function_arg> args;
  int8_t item_size_arg = -1;  // fread/fwrite: bytes = ret * this argument
};

const function_info* find_function(std::string_view name);

}  // namespace dc
