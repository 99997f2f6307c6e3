#include "core/file_text.h"

#include <fstream>
#include <sstream>

namespace dc {

std::optional<std::string> read_file_text(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace dc
