// Errors as values across module lines: every fallible operation returns result<T>, and only
// the CLI turns an error into the one line and exit code a user sees. A result cannot be
// dropped unread ([[nodiscard]]): write (void) where ignoring an error is the decision.
#pragma once

#include <expected>
#include <string>

namespace dc {

struct error {
  std::string message;
  int exit_code = 1;
};

template <class T = void>
class [[nodiscard]] result : public std::expected<T, error> {
 public:
  using std::expected<T, error>::expected;
  using std::expected<T, error>::operator=;
  // A std::expected of the same kinds (what the monadic operations return).
  result(std::expected<T, error> e) : std::expected<T, error>(std::move(e)) {}
};

inline std::unexpected<error> fail(std::string message, int exit_code = 1)
{
  return std::unexpected(error{std::move(message), exit_code});
}

}  // namespace dc
