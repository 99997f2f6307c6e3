// Whether a file is a dynamically linked ELF executable, the only kind the client library can be
// added to as a dependency.
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

// Ok for a dynamic ELF file; the error says which of "not found", "not ELF" or "statically
// linked" it is.
result<> check_dynamic_elf(const std::string& path);

}  // namespace dc
