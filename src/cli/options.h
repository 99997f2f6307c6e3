// Command-line values checked where CLI11 reads them, for every tool: a bad value is one line
// naming the option and what is wrong, exit 2, before anything is created or started. Numbers
// are checked as text (CLI11 then converts only what fits), paths by what the option needs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dc::cli {

// Prints "<tool>: <message>" as one line (control characters escaped: a value's newline cannot
// make two) on stderr; returns exit_code.
int report(const char* tool, const std::string& message, int exit_code);

// Parses argv; nullopt: go on. Otherwise the exit code: 0 after --help, 2 after one line
// "<tool>: <what is wrong>" on stderr.
std::optional<int> parse(CLI::App& app, int argc, char** argv, const char* tool);

// A decimal number in [min, max]: digits only (no sign, no spaces, no suffix). Add it with
// transform(), not check(): it hands CLI11 the number without leading zeros, which CLI11 would
// read as octal.
CLI::Validator whole_number(uint64_t min, uint64_t max);
// A power of two (after whole_number).
CLI::Validator power_of_two();

// A file the tool creates: not empty, not a directory, in a directory that exists.
CLI::Validator output_file();
// A directory the tool creates (with its parents) or writes into: not empty, not an existing
// non-directory, and no existing non-directory on the way to it.
CLI::Validator output_directory();
// A file the tool reads: exists and is not a directory.
CLI::Validator input_file();
// A directory the tool reads: exists and is a directory.
CLI::Validator input_directory();
// An input of analyze: a path that exists, or a glob (a pattern that matches nothing is the
// report's problem, as an empty directory is).
CLI::Validator analyze_input();
// Names separated by commas (repeatable options add up): none of them empty.
CLI::Validator comma_list();
std::vector<std::string> split_commas(const std::vector<std::string>& lists);
// Not the empty string.
CLI::Validator not_empty();

// The checks above as plain functions (for values that do not come through CLI11): the empty
// string when `value` is good, else what is wrong with it.
std::string check_whole_number(const std::string& value, uint64_t min, uint64_t max);
// A power of two (a value check_whole_number passed).
std::string check_power_of_two(const std::string& value);
std::string check_output_file(const std::string& path);
std::string check_output_directory(const std::string& path);
std::string check_input_file(const std::string& path);

}  // namespace dc::cli
