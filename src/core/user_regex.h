// Regexes users write (on the command line, in configs): ECMAScript, matched against whole
// names. A bad one is an error value naming where it came from, never an exception.
#pragma once

#include <regex>
#include <string>
#include <string_view>

#include "core/result.h"

namespace dc {

// `context` names the option or config entry ("--system Mine", "explore --regex").
result<std::regex> compile_user_regex(const std::string& pattern, std::string_view context);

}  // namespace dc
