#include "core/user_regex.h"

namespace dc {

result<std::regex> compile_user_regex(const std::string& pattern, std::string_view context)
{
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return fail(std::string(context) + ": invalid regex '" + pattern + "': " + e.what(), 2);
  }
}

}  // namespace dc
