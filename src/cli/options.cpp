#include "cli/options.h"

#include <cstdio>
#include <filesystem>

namespace dc::cli {

namespace fs = std::filesystem;

namespace {

std::string in_quotes(const std::string& s)
{
  return "'" + s + "'";
}

// What is at `p`, following symlinks (a dangling one is nothing); an error is nothing too.
fs::file_status status_of(const fs::path& p)
{
  std::error_code ec;
  return fs::status(p, ec);
}

// The nearest existing ancestor of `p` must be a directory (something else on the way: refused).
std::string check_parents(const fs::path& p)
{
  for (fs::path up = p.parent_path(); !up.empty(); up = up.parent_path()) {
    auto st = status_of(up);
    if (fs::exists(st))
      return fs::is_directory(st) ? "" : in_quotes(up.string()) + " is not a directory";
    if (up == up.parent_path())
      break;
  }
  return "";
}

CLI::Validator from(std::string (*check)(const std::string&), const char* description)
{
  return CLI::Validator([check](std::string& v) { return check(v); }, description);
}

}  // namespace

int report(const char* tool, const std::string& message, int exit_code)
{
  std::string line;
  for (unsigned char c : message) {
    if (c >= 0x20 && c != 0x7f) {
      line += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\x%02x", c);
      line += escaped;
    }
  }
  std::fprintf(stderr, "%s: %s\n", tool, line.c_str());
  return exit_code;
}

std::optional<int> parse(CLI::App& app, int argc, char** argv, const char* tool)
{
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report(tool, e.what(), 2);
  }
  return std::nullopt;
}

std::string check_whole_number(const std::string& value, uint64_t min, uint64_t max)
{
  std::string range = " (" + std::to_string(min) + " to " + std::to_string(max) + ")";
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
    return in_quotes(value) + " is not a whole number" + range;
  // Compared as digits first: a number too long for 64 bits is out of range, not an overflow.
  std::string digits = value.substr(std::min(value.find_first_not_of('0'), value.size() - 1));
  std::string top = std::to_string(max);
  bool above = digits.size() > top.size() || (digits.size() == top.size() && digits > top);
  if (above || std::stoull(digits) < min)
    return in_quotes(value) + " is out of range" + range;
  return "";
}

CLI::Validator whole_number(uint64_t min, uint64_t max)
{
  return CLI::Validator(
      [min, max](std::string& v) {
        std::string why = check_whole_number(v, min, max);
        // CLI11 reads a leading 0 as octal ("010" would become 8): what was checked, in decimal,
        // is what the option gets.
        if (why.empty())
          v.erase(0, std::min(v.find_first_not_of('0'), v.size() - 1));
        return why;
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

std::string check_power_of_two(const std::string& value)
{
  uint64_t n = std::stoull(value);  // check_whole_number passed it
  return (n & (n - 1)) == 0 ? std::string() : in_quotes(value) + " is not a power of two";
}

CLI::Validator power_of_two()
{
  return CLI::Validator([](std::string& v) { return check_power_of_two(v); }, "POWER_OF_TWO");
}

std::string check_output_file(const std::string& path)
{
  if (path.empty())
    return "an empty path";
  auto st = status_of(path);
  if (fs::is_directory(st))
    return in_quotes(path) + " is a directory, not a file";
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty())
    return "";
  auto pst = status_of(parent);
  if (!fs::exists(pst))
    return in_quotes(path) + ": directory " + in_quotes(parent.string()) + " does not exist";
  if (!fs::is_directory(pst))
    return in_quotes(path) + ": " + in_quotes(parent.string()) + " is not a directory";
  return "";
}

std::string check_output_directory(const std::string& path)
{
  if (path.empty())
    return "an empty path";
  auto st = status_of(path);
  if (fs::exists(st) && !fs::is_directory(st))
    return in_quotes(path) + " exists and is not a directory";
  if (std::string up = check_parents(path); !up.empty())
    return in_quotes(path) + ": " + up;
  return "";
}

std::string check_input_file(const std::string& path)
{
  if (path.empty())
    return "an empty path";
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::none)  // it may exist, but cannot be looked at
    return in_quotes(path) + " cannot be read: " + ec.message();
  if (!fs::exists(st))
    return in_quotes(path) + " does not exist";
  if (fs::is_directory(st))
    return in_quotes(path) + " is a directory, not a file";
  return "";
}

CLI::Validator output_file()
{
  return from(check_output_file, "FILE (created)");
}

CLI::Validator output_directory()
{
  return from(check_output_directory, "DIR (created)");
}

CLI::Validator input_file()
{
  return from(check_input_file, "FILE");
}

CLI::Validator input_directory()
{
  return from(
      [](const std::string& path) -> std::string {
        if (path.empty())
          return "an empty path";
        auto st = status_of(path);
        if (!fs::exists(st))
          return in_quotes(path) + " does not exist";
        if (!fs::is_directory(st))
          return in_quotes(path) + " is not a directory";
        return "";
      },
      "DIR");
}

CLI::Validator analyze_input()
{
  return from(
      [](const std::string& path) -> std::string {
        if (path.empty())
          return "an empty path";
        if (path.find_first_of("*?[") != std::string::npos || fs::exists(status_of(path)))
          return "";
        return in_quotes(path) + " does not exist";
      },
      "PATH");
}

CLI::Validator comma_list()
{
  return from(
      [](const std::string& list) -> std::string {
        for (const std::string& name : split_commas({list}))
          if (name.empty())
            return in_quotes(list) + " has an empty name (NAME[,NAME...])";
        return "";
      },
      "NAME[,NAME...]");
}

std::vector<std::string> split_commas(const std::vector<std::string>& lists)
{
  std::vector<std::string> out;
  for (const std::string& list : lists)
    for (size_t start = 0;;) {
      size_t comma = list.find(',', start);
      out.push_back(list.substr(start, comma - start));
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  return out;
}

CLI::Validator not_empty()
{
  return from([](const std::string& v) { return v.empty() ? std::string("an empty value") : std::string(); },
              "TEXT");
}

}  // namespace dc::cli
