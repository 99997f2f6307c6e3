// Where the tool's own files are: beside the running binary, in the install layout
// (<prefix>/bin/tool -> <prefix>/lib, <prefix>/etc/datacrumbs, ...), which the build tree
// mirrors (build/bin, build/lib).
#pragma once

#include <string>
#include <string_view>

namespace dc {

// <prefix>/<relative>, prefix being the parent of the running binary's directory.
std::string installed_path(std::string_view relative);

}  // namespace dc
