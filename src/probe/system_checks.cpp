#include "probe/system_checks.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dc {

namespace {

constexpr int cap_sys_admin = 21;
constexpr int cap_perfmon = 38;
constexpr int cap_bpf = 39;

uint64_t effective_caps()
{
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("CapEff:", 0) == 0)
      return std::stoull(line.substr(7), nullptr, 16);
  return 0;
}

bool exists(const char* path)
{
  struct stat st {};
  return stat(path, &st) == 0;
}

}  // namespace

result<> check_bpf_privileges()
{
  uint64_t caps = effective_caps();
  auto has = [&](int cap) { return (caps >> cap) & 1; };
  if (has(cap_sys_admin) || (has(cap_bpf) && has(cap_perfmon)))
    return {};
  return fail("datacrumbs needs root (or CAP_BPF and CAP_PERFMON) to load its BPF probes; run it with sudo");
}

result<std::string> ensure_tracefs()
{
  const char* dir = "/sys/kernel/tracing";
  if (exists("/sys/kernel/tracing/events"))
    return std::string();
  if (::mount("nodev", dir, "tracefs", 0, nullptr) != 0)
    return fail(std::string("tracefs is not mounted at ") + dir +
                " and mounting it failed: " + std::strerror(errno) + "; tracepoint layers cannot attach");
  return std::string("mounted tracefs at ") + dir;
}

}  // namespace dc
