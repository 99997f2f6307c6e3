// The small parsers of names a user gives: the trace pattern and the fields it expands
// (deploy/trace_name.h), the run id, the regexes of `--system LABEL=REGEX`, configs and
// `explore --regex` (core/user_regex.h, matched against a process name as --system's is) and the
// command-line checks (cli/options.h) as CLI11 applies them to an argv. The input is cut at NUL
// bytes into the pattern, the run id, the host, the user, a regex and a command line (one
// argument per line).
#include <algorithm>
#include <string_view>

#include "cli/options.h"
#include "core/user_regex.h"
#include "deploy/trace_name.h"
#include "fuzz/fuzz_util.h"

namespace {

void check_trace_name(const std::string& pattern, const dc::trace_name_fields& fields)
{
  auto name = dc::expand_trace_pattern(pattern, fields);
  if (!name)
    return;
  // What the daemon relies on to stay under its trace directory.
  const std::string& n = *name;
  if (n.empty() || n.front() == '/' || !n.ends_with(".pfw.gz"))
    dc::fuzz::violated("an expanded trace name is absolute or not a .pfw.gz");
  for (std::string_view rest = n; !rest.empty();) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (part.empty() || part == "." || part == "..")
      dc::fuzz::violated("an expanded trace name has an empty, '.' or '..' component");
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
}

// `datacrumbs run`'s kinds of option: only CLI11's parse errors may come out, and what is
// accepted is in range.
void check_options(const std::string& command_line)
{
  CLI::App app{"fuzz", "datacrumbs"};
  uint64_t ring_mb = 64, interval_ms = 0;
  std::vector<std::string> layers, command;
  std::string mode, config;
  app.add_option("--ring-mb", ring_mb)
      ->transform(dc::cli::whole_number(1, 2048))
      ->check(dc::cli::power_of_two());
  app.add_option("--interval-ms", interval_ms)->transform(dc::cli::whole_number(10, 3600000));
  app.add_option("--layers", layers)->check(dc::cli::comma_list())->allow_extra_args(false);
  app.add_option("--mode", mode)->check(CLI::IsMember({"trace", "profile"}));
  app.add_option("--config", config)->check(dc::cli::not_empty());
  app.add_option("command", command);
  std::vector<std::string> args = dc::fuzz::split(command_line, "\n", 64);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError&) {
    return;
  }
  if (ring_mb < 1 || ring_mb > 2048 || (ring_mb & (ring_mb - 1)) != 0)
    dc::fuzz::violated("a ring size out of range was accepted");
  if (interval_ms != 0 && (interval_ms < 10 || interval_ms > 3600000))
    dc::fuzz::violated("an interval out of range was accepted");
  for (const auto& name : dc::cli::split_commas(layers))
    if (name.empty())
      dc::fuzz::violated("an empty layer name was accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  auto f = dc::fuzz::split(dc::fuzz::text_of(data, size), std::string_view("\0", 1), 6);
  f.resize(6);
  auto run_id = dc::check_run_id(f[1]);
  if (run_id && (f[1].empty() || f[1].size() > 64 || f[1].find('/') != std::string::npos || f[1] == ".."))
    dc::fuzz::violated("an unsafe run id was accepted");
  check_trace_name(f[0], {f[1], f[2], f[3], 1700000000});
  if (auto regex = dc::compile_user_regex(f[4], "--system X"); regex)
    (void)std::regex_match(f[2].substr(0, 15), *regex);  // a comm: at most 15 characters
  check_options(f[5]);
  return 0;
}
