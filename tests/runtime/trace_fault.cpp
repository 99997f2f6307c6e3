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

cut_trace expect_whole_prefix(const std::string& trace, const nlohmann::json& summary)
{
  gzip_contents gz = read_gzip_members(trace);
  EXPECT_FALSE(gz.truncated_tail);
  EXPECT_GE(gz.complete_members, 1u);
  parsed_trace t = parse_trace_text(gz.text);  // throws on a line that is not JSON
  EXPECT_TRUE(t.opened);
  EXPECT_FALSE(t.closed);
  for (const auto& line : t.lines) EXPECT_NE(line["name"], "end");
  cut_trace c{gz.complete_members, complete_events(t).size(), 0};
  EXPECT_TRUE(summary.is_object());
  if (!summary.is_object())
    return c;
  EXPECT_EQ(summary["events"]["written"].get<uint64_t>(), c.in_file);
  c.unwritten = summary["events"]["unwritten"].get<uint64_t>();
  EXPECT_GT(c.unwritten, 0u);
  return c;
}

}  // namespace dc::test
