// The small parsers of names a user gives: the trace pattern and the fields it expands
// (deploy/trace_name.h), the run id, the regexes of `--system LABEL=REGEX`, configs and
// `explore --regex` (core/user_regex.h, matched against a process name as --system's is) and
// datacrumbs' own command line (cli/command_line.h: every subcommand's options and their checks)
// on an argv. The input is cut at NUL
// bytes into the pattern, the run id, the host, the user, a regex and a command line (one
// argument per line).
#include <algorithm>
#include <string_view>

#include "cli/command_line.h"
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

bool unsafe_run_id(const std::string& id)
{
  return id.empty() || id.size() > 64 || id.find('/') != std::string::npos || id == "." || id == "..";
}

// datacrumbs' own command line (cli/command_line.h) on an argv: only an exit code comes out of a
// refusal, never an exception, and what is accepted is in range.
void check_command_line(const std::string& command_line)
{
  std::vector<std::string> words = dc::fuzz::split(command_line, "\n", 64);
  std::vector<char*> argv;
  std::string tool = "datacrumbs";
  argv.push_back(tool.data());
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  auto parsed = dc::parse_command_line(static_cast<int>(argv.size() - 1), argv.data());
  if (!parsed) {
    if (parsed.error() != 0 && parsed.error() != 2)
      dc::fuzz::violated("a refused command line exits with neither 0 nor 2");
    return;
  }
  using mode = dc::command_line::mode;
  const dc::run_options& run = parsed->run;
  switch (parsed->which) {
    case mode::run:
      // 0: no --ring-mb (the ring is sized by mode when the run starts).
      if (run.ring_bytes != 0 &&
          (run.ring_bytes < (uint64_t{1} << 20) || run.ring_bytes > (uint64_t{2048} << 20) ||
           (run.ring_bytes & (run.ring_bytes - 1)) != 0))
        dc::fuzz::violated("a ring size out of range was accepted");
      if (run.interval_ms != 0 && (run.interval_ms < 10 || run.interval_ms > 3600000))
        dc::fuzz::violated("an interval out of range was accepted");
      if (run.process_detail > 1'000'000'000)
        dc::fuzz::violated("a process detail out of range was accepted");
      if (run.command.empty())
        dc::fuzz::violated("a run without a command was accepted");
      if (std::ranges::any_of(run.layers, [](const std::string& l) { return l.empty(); }))
        dc::fuzz::violated("an empty layer name was accepted");
      if (run.live && run.print && run.print_file.empty())
        dc::fuzz::violated("--live and --print both on stdout were accepted");
      break;
    case mode::live:
      if (unsafe_run_id(parsed->live.run_id))
        dc::fuzz::violated("live: an unsafe run id was accepted");
      break;
    case mode::daemon:
      if (!parsed->daemon.run_id.empty() && unsafe_run_id(parsed->daemon.run_id))
        dc::fuzz::violated("the daemon: an unsafe run id was accepted");
      break;
    case mode::analyze:
      if (parsed->analyze.inputs.empty() || parsed->analyze.threads > 4096)
        dc::fuzz::violated("analyze: no input or too many threads was accepted");
      break;
    case mode::explore:
    case mode::layers: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  auto f = dc::fuzz::split(dc::fuzz::text_of(data, size), std::string_view("\0", 1), 6);
  f.resize(6);
  auto run_id = dc::check_run_id(f[1]);
  if (run_id && unsafe_run_id(f[1]))
    dc::fuzz::violated("an unsafe run id was accepted");
  check_trace_name(f[0], {f[1], f[2], f[3], 1700000000});
  if (auto regex = dc::compile_user_regex(f[4], "--system X"); regex)
    (void)regex->matches(f[2].substr(0, 15));  // a comm: at most 15 characters
  check_command_line(f[5]);
  return 0;
}
