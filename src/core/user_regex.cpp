#include "core/user_regex.h"

#include <re2/re2.h>

namespace dc {

namespace {

// RE2 refuses what would not compile in bounded memory itself: a repeat count over 1000, nested
// counts whose product is over 1000, a program over max_mem; errors are returned, not logged.
RE2::Options options()
{
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(8 << 20);  // the compiled program and its DFA cache; past it RE2 falls back to a slower,
                           // still linear, matcher
  return o;
}

}  // namespace

bool user_regex::matches(std::string_view name) const
{
  return re_ && RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

result<user_regex> compile_user_regex(const std::string& pattern, std::string_view context)
{
  auto re = std::make_shared<const RE2>(pattern, options());
  if (!re->ok())
    return fail(std::string(context) + ": invalid regex '" + pattern + "': " + re->error(), 2);
  user_regex r;
  r.re_ = std::move(re);
  return r;
}

}  // namespace dc
