// Errors as values across module lines: every fallible operation returns result<T>, and only
// the CLI turns an error into the one line and exit code a user sees.
#pragma once

#include <expected>
#include <string>

namespace dc {

struct error {
  std::string message;
  int exit_code = 1;
};

template <class T = void>
using result = std::expected<T, error>;

inline std::unexpected<error> fail(std::string message, int exit_code = 1)
{
  return std::unexpected(error{std::move(message), exit_code});
}

}  // namespace dc
