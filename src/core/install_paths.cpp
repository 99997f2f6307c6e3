#include "core/install_paths.h"

#include <filesystem>

namespace dc {

std::string installed_path(std::string_view relative)
{
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path().parent_path() / relative).string();
}

}  // namespace dc
