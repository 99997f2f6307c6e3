#include "runtime/trace_fault.h"

#include <sstream>

namespace dc::test {

full_run run_tool(const scratch_dir& dir, const std::string& trace, const std::string& command_line,
                  const std::string& tool_args)
{
  full_run r;
  r.exit_code = run_shell(std::string(DATACRUMBS_BIN) + " run " + tool_args + "-o " + shell_quote(trace) +
                          " --summary " + shell_quote(dir / "summary.json") + " -- " + command_line + " 2>" +
                          shell_quote(dir / "tool.err"));
  r.err = read_file(dir / "tool.err");
  if (std::string s = read_file(dir / "summary.json"); !s.empty())
    r.summary = nlohmann::json::parse(s);
  return r;
}

int lines_with(const std::string& text, const std::string& needle)
{
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace dc::test
