#include "runtime/process_tree.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "runtime/runtime_helpers.h"

namespace dc::test {

namespace {

// /proc/PID/stat: "pid (comm) state ppid ...", where comm may hold spaces and parentheses.
bool read_stat(pid_t pid, char& state, pid_t& ppid, std::string& comm)
{
  std::string line = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (line.empty())
    return false;
  size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 4 > line.size())
    return false;
  comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 2));
  return static_cast<bool>(rest >> state >> ppid);
}

}  // namespace

std::vector<pid_t> processes_where(const std::function<bool(const std::string& cmdline)>& matches)
{
  std::vector<pid_t> pids;
  // Without exceptions: processes come and go while /proc is read.
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const auto& e = *it;
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string cmdline = read_file(e.path() / "cmdline");
    pid_t pid = std::stoi(name);
    if (matches(cmdline) && process_state(pid) != 'Z' && process_state(pid) != 0)
      pids.push_back(pid);
  }
  return pids;
}

std::vector<pid_t> processes_with_argument(const std::string& argument)
{
  std::string marker = std::string(1, '\0') + argument + '\0';
  return processes_where(
      [&](const std::string& cmdline) { return cmdline.find(marker) != std::string::npos; });
}

int uprobe_links_of(pid_t pid)
{
  int n = 0;
  std::error_code ec;  // the process may end, or an fd close, while they are read
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fdinfo", ec), end;
       !ec && it != end; it.increment(ec))
    n += read_file(it->path()).find("link_type:\tuprobe_multi") != std::string::npos;
  return n;
}

std::vector<pid_t> descendants(pid_t root)
{
  // /proc/PID/task/TID/children of every thread: cheap enough to poll a tree every millisecond.
  std::vector<pid_t> out, todo{root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc/" + std::to_string(p) + "/task", ec), end;
         !ec && it != end; it.increment(ec)) {
      std::istringstream in(read_file(it->path() / "children"));
      for (pid_t child; in >> child;) {
        out.push_back(child);
        todo.push_back(child);
      }
    }
  }
  return out;
}

char process_state(pid_t pid)
{
  char state = 0;
  pid_t ppid = 0;
  std::string comm;
  return read_stat(pid, state, ppid, comm) ? state : 0;
}

std::vector<std::string> stopped_in_tree(pid_t root)
{
  std::vector<pid_t> all = descendants(root);
  all.push_back(root);
  std::vector<std::string> out;
  for (pid_t p : all) {
    char state = 0;
    pid_t ppid = 0;
    std::string comm;
    if (read_stat(p, state, ppid, comm) && state == 'T')
      out.push_back(std::to_string(p) + " (" + comm + ")");
  }
  return out;
}

void kill_tree(pid_t root)
{
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> all = descendants(root);
    bool root_alive = process_state(root) != 0 && process_state(root) != 'Z';
    if (all.empty() && !root_alive)
      break;
    if (root_alive)
      kill(root, SIGKILL);
    for (pid_t p : all) {
      kill(p, SIGKILL);
      kill(p, SIGCONT);  // a stopped process dies only once it runs
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  waitpid(root, nullptr, WNOHANG);
}

}  // namespace dc::test
