// printf-style formatting into a std::string: the text report's aligned tables.
#pragma once

#include <cstdio>
#include <string>

namespace dc::analyze {

template <typename... Args>
std::string fmt(const char* format, Args... args)
{
  char buf[1024];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

}  // namespace dc::analyze
