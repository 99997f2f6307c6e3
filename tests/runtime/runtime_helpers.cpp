#include "runtime/runtime_helpers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

namespace dc::test {

scratch_dir::scratch_dir()
{
  char tmpl[] = "/tmp/dctest.XXXXXX";
  if (!mkdtemp(tmpl))
    throw std::runtime_error("mkdtemp failed");
  path = std::filesystem::canonical(tmpl).string();
}

scratch_dir::~scratch_dir()
{
  std::filesystem::remove_all(path);
}

std::string shell_quote(const std::string& s)
{
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int run_shell(const std::string& command_line)
{
  int status = std::system(command_line.c_str());
  if (status == -1)
    return -1;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

std::string read_file(const std::string& path)
{
  // read(2), not an ifstream: a /proc file of a process that ends while it is read fails the
  // read, and an ifstream throws then.
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return text;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

uint64_t now_epoch_us()
{
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

traced_run trace_command(const scratch_dir& dir, const std::string& command_line,
                         const std::string& tool_args)
{
  return trace_command(dir, command_line, tool_args, [](const std::string& line) { return line; });
}

traced_run trace_command(const scratch_dir& dir, const std::string& command_line,
                         const std::string& tool_args,
                         const std::function<std::string(const std::string&)>& wrap)
{
  traced_run r;
  std::string trace = dir / "trace.pfw.gz", summary = dir / "summary.json", err = dir / "tool.err";
  r.start_us = now_epoch_us();
  r.exit_code = run_shell(wrap(std::string(DATACRUMBS_BIN) + " run " + tool_args + " -o " +
                               shell_quote(trace) + " --summary " + shell_quote(summary) + " -- " +
                               command_line + " 2>" + shell_quote(err)));
  r.end_us = now_epoch_us();
  r.err = read_file(err);
  std::string s = read_file(summary);
  if (!s.empty())
    r.summary = nlohmann::json::parse(s);
  r.trace = parse_trace_text(read_gzip_members(trace).text);
  return r;
}

std::vector<nlohmann::json> complete_events(const parsed_trace& t)
{
  std::vector<nlohmann::json> out;
  for (const auto& j : t.lines)
    if (j["ph"] == "X")
      out.push_back(j);
  return out;
}

uint64_t layer_total(const nlohmann::json& summary, const std::string& layer, const std::string& field)
{
  uint64_t total = 0;
  if (summary.contains("layers") && summary["layers"].contains(layer))
    for (const auto& by_op : summary["layers"][layer]) total += by_op[field].get<uint64_t>();
  return total;
}

uint32_t pid_of_command(const traced_run& run, const std::string& prefix)
{
  for (const auto& [pid, p] : run.summary["processes"].items())
    if (p["command"].get<std::string>().starts_with(prefix))
      return static_cast<uint32_t>(std::stoul(pid));
  ADD_FAILURE() << "no process running " << prefix;
  return 0;
}

std::map<uint64_t, std::string> file_names(const parsed_trace& t)
{
  std::map<uint64_t, std::string> out;
  for (const auto& j : t.lines)
    if (j["ph"] == "M" && j["name"] == "FH")
      out[j["args"]["value"].get<uint64_t>()] = j["args"]["name"].get<std::string>();
  return out;
}

}  // namespace dc::test
