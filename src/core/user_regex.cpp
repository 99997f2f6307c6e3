#include "core/user_regex.h"

#include <cctype>
#include <string>

namespace dc {

namespace {

// libstdc++'s regex compiler reads the number of a back-reference (\N) or of a repeat ({n,m})
// into a long without checking for overflow: undefined behaviour for 19 digits; and it copies a
// repeated expression once per count, so a{10000000} takes seconds and gigabytes to compile
// (both found by the names fuzz target). A back-reference over 9 digits or a repeat count over
// max_repeat is refused before it gets there.
constexpr long max_repeat = 1000;

bool has_oversized_number(const std::string& p)
{
  bool in_braces = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size() && !std::isdigit(static_cast<unsigned char>(p[i + 1]))) {
      ++i;  // an escaped character, never a number's start
      continue;
    }
    if (c == '{')
      in_braces = true;
    else if (c == '}')
      in_braces = false;
    if (c != '\\' && c != '{' && !(c == ',' && in_braces))
      continue;
    size_t end = i + 1;
    while (end < p.size() && std::isdigit(static_cast<unsigned char>(p[end]))) ++end;
    if (end - (i + 1) > 9 ||
        (c != '\\' && end > i + 1 && std::stol(p.substr(i + 1, end - i - 1)) > max_repeat))
      return true;
  }
  return false;
}

}  // namespace

result<std::regex> compile_user_regex(const std::string& pattern, std::string_view context)
{
  std::string prefix = std::string(context) + ": invalid regex '" + pattern + "': ";
  if (has_oversized_number(pattern))
    return fail(prefix + "a back-reference of more than 9 digits or a repeat count over " +
                    std::to_string(max_repeat),
                2);
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return fail(prefix + e.what(), 2);
  }
}

}  // namespace dc
