// Regexes users write (on the command line, in configs), matched against whole names. RE2's
// syntax (the common Perl/ECMAScript subset: no back-references or lookaround), because RE2
// matches in time linear in the name whatever the pattern: libstdc++'s std::regex backtracks,
// and (n?)*, (a|a)* or (n*)* took seconds to minutes on a 25-character name (a C++ symbol is
// often longer), found by the names fuzz target. A bad one is an error value naming where it
// came from, never an exception.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace re2 {
class RE2;
}

namespace dc {

class user_regex {
 public:
  user_regex() = default;  // matches nothing
  // Whether the regex matches all of `name`.
  bool matches(std::string_view name) const;

 private:
  friend result<user_regex> compile_user_regex(const std::string& pattern, std::string_view context);
  std::shared_ptr<const re2::RE2> re_;  // shared: copies are cheap and a compiled RE2 is immutable
};

// `context` names the option or config entry ("--system Mine", "explore --regex").
result<user_regex> compile_user_regex(const std::string& pattern, std::string_view context);

}  // namespace dc
