#include "sink/snapshots.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/clock.h"
#include "core/file_text.h"
#include "sink/snapshot_parse.h"

namespace dc {

namespace {

namespace fs = std::filesystem;

std::string read_trimmed(const std::string& path)
{
  std::string s = read_file_text(path).value_or("");
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<std::string> read_link(const std::string& path)
{
  std::error_code ec;
  fs::path target = fs::read_symlink(path, ec);
  if (ec)
    return std::nullopt;
  return target.string();
}

uint64_t usable_cpus()
{
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return 0;
  return static_cast<uint64_t>(CPU_COUNT(&set));
}

nlohmann::json block_devices()
{
  nlohmann::json devices = nlohmann::json::array();
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator("/sys/block", ec)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string dir = "/sys/block/" + name;
    uint64_t sectors = std::strtoull(read_trimmed(dir + "/size").c_str(), nullptr, 10);
    if (sectors == 0)
      continue;  // unused loop and ram devices
    nlohmann::json d = {
        {"name", name},
        {"size_bytes", sectors * 512},
        {"model", read_trimmed(dir + "/device/model")},
        {"vendor", read_trimmed(dir + "/device/vendor")},
        {"rotational", read_trimmed(dir + "/queue/rotational") == "1"},
        {"scheduler", parse_scheduler(read_trimmed(dir + "/queue/scheduler"))},
        {"logical_block_size",
         std::strtoull(read_trimmed(dir + "/queue/logical_block_size").c_str(), nullptr, 10)}};
    devices.push_back(std::move(d));
  }
  return devices;
}

const char* entry_type(mode_t mode)
{
  if (S_ISREG(mode))
    return "file";
  if (S_ISDIR(mode))
    return "dir";
  if (S_ISLNK(mode))
    return "symlink";
  return "other";
}

int64_t epoch_us(const struct timespec& t)
{
  return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}

}  // namespace

nlohmann::json system_spec()
{
  cpu_info cpu = parse_cpuinfo(read_file_text("/proc/cpuinfo").value_or(""));
  std::string meminfo = read_file_text("/proc/meminfo").value_or("");
  std::string os_release =
      read_file_text("/etc/os-release").value_or(read_file_text("/usr/lib/os-release").value_or(""));
  utsname uts{};
  uname(&uts);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  nlohmann::json mounts = nlohmann::json::array();
  for (const mount_entry& m : parse_mounts(read_file_text("/proc/self/mounts").value_or("")))
    mounts.push_back({{"device", m.device},
                      {"mount_point", m.mount_point},
                      {"fs_type", m.fs_type},
                      {"options", m.options}});
  return {{"hostname", host},
          {"cpu_model", cpu.model},
          {"cpu_count", cpu.count},
          {"cpus_usable", usable_cpus()},
          {"memory_bytes", parse_meminfo_bytes(meminfo, "MemTotal").value_or(0)},
          {"kernel", uts.release},
          {"kernel_version", uts.version},
          {"machine", uts.machine},
          {"os", parse_os_release(os_release, "PRETTY_NAME").value_or("")},
          {"page_size", sysconf(_SC_PAGESIZE)},
          {"block_devices", block_devices()},
          {"mounts", std::move(mounts)}};
}

nlohmann::json process_snapshot(uint32_t pid, const std::vector<std::string>* argv)
{
  std::string dir = "/proc/" + std::to_string(pid);
  auto status = read_file_text(dir + "/status");
  if (!status)
    return {{"pid", pid}, {"gone", true}};
  process_ids ids = parse_status(*status);
  std::vector<std::string> environ = split_nul(read_file_text(dir + "/environ").value_or(""));
  nlohmann::json env = kept_environment(environ);
  nlohmann::json j = {{"pid", pid},
                      {"ppid", ids.ppid},
                      {"argv", argv ? *argv : split_nul(read_file_text(dir + "/cmdline").value_or(""))},
                      {"exe", read_link(dir + "/exe").value_or("")},
                      {"cwd", read_link(dir + "/cwd").value_or("")},
                      {"uid", ids.uid},
                      {"gid", ids.gid},
                      {"cgroup", parse_cgroup(read_file_text(dir + "/cgroup").value_or(""))},
                      {"env", env}};
  if (auto rank = rank_of(env))
    j["rank"] = *rank;
  return j;
}

std::vector<snapshot_line> directory_snapshot(const std::string& given, std::string_view when, uint32_t pid,
                                              size_t per_line, size_t max_entries)
{
  std::error_code abs_ec;
  std::string dir = fs::absolute(given, abs_ec).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  uint64_t ts = epoch_now_us();
  nlohmann::json entries = nlohmann::json::array();
  std::string problem;
  bool truncated = false;
  std::error_code ec;
  struct stat top {};
  if (lstat(dir.c_str(), &top) != 0) {
    problem = errno == ENOENT ? "no such file or directory" : std::strerror(errno);
  } else if (!S_ISDIR(top.st_mode)) {
    problem = "not a directory";
  } else {
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (entries.size() == max_entries) {
        truncated = true;
        break;
      }
      struct stat st {};
      if (lstat(it->path().c_str(), &st) != 0)
        continue;  // removed while we walked
      entries.push_back({{"path", it->path().string()},
                         {"type", entry_type(st.st_mode)},
                         {"size", static_cast<uint64_t>(st.st_size)},
                         {"mtime_us", epoch_us(st.st_mtim)}});
    }
    if (ec)
      problem = ec.message();
  }
  std::sort(entries.begin(), entries.end(),
            [](const nlohmann::json& a, const nlohmann::json& b) { return a["path"] < b["path"]; });
  std::vector<snapshot_line> lines;
  size_t total = entries.size();
  for (size_t first = 0; first == 0 || first < total; first += per_line) {
    nlohmann::json part = nlohmann::json::array();
    for (size_t i = first; i < std::min(total, first + per_line); ++i) part.push_back(std::move(entries[i]));
    nlohmann::json value = {
        {"dir", dir}, {"when", when}, {"first", first}, {"total", total}, {"entries", part}};
    if (truncated)
      value["truncated"] = true;
    if (!problem.empty())
      value["error"] = problem;
    lines.push_back({snapshot_files_name, dir, std::move(value), pid, ts});
  }
  return lines;
}

void process_snapshotter::forget(uint32_t pid, process_key instance)
{
  if (auto it = taken_.find(pid); it != taken_.end() && it->second.instance == instance)
    taken_.erase(it);
}

std::optional<nlohmann::json> process_snapshotter::operator()(process_key instance, const process_info& p)
{
  if (p.forgotten)
    return std::nullopt;
  uint64_t command_hash = string_hash(p.command);
  auto [at, added] = taken_.try_emplace(p.pid);
  taken before = at->second;
  at->second = {instance, command_hash, false};
  if (!added && before.instance == instance && (before.any_command || before.command_hash == command_hash))
    return std::nullopt;
  nlohmann::json j = process_snapshot(p.pid);
  // The trace's own command line (from the exec the kernel saw) is the truth even when the
  // process is gone or has changed since.
  j["command"] = p.command;
  j["ppid"] = p.parent;
  return j;
}

void write_snapshot_line(pfw_writer& writer, const snapshot_line& line)
{
  // Paths and environment values need not be UTF-8: replaced, never thrown on.
  writer.write_snapshot(line.name, line.pid, line.ts_us, line.label,
                        line.value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void write_start_snapshots(pfw_writer& writer, const snapshot_plan& plan, process_snapshotter& processes,
                           uint32_t host_pid)
{
  if (plan.system) {
    nlohmann::json spec = system_spec();
    std::string host = spec["hostname"];
    write_snapshot_line(writer, {snapshot_system_name, host, std::move(spec), host_pid, epoch_now_us()});
  }
  if (plan.root_pid) {
    nlohmann::json p = process_snapshot(plan.root_pid, &plan.root_argv);
    std::string command;
    for (const std::string& a : plan.root_argv) command += (command.empty() ? "" : " ") + a;
    p["command"] = command;
    std::error_code ec;
    p["exe"] = fs::weakly_canonical(plan.root_executable, ec).string();
    write_snapshot_line(writer, {snapshot_process_name, std::to_string(plan.root_pid), std::move(p),
                                 plan.root_pid, epoch_now_us()});
    processes.taken_already(plan.root_pid);
  }
  for (const std::string& dir : plan.dirs)
    for (const snapshot_line& line : directory_snapshot(dir, "start", host_pid))
      write_snapshot_line(writer, line);
}

void write_end_snapshots(pfw_writer& writer, const snapshot_plan& plan, uint32_t host_pid)
{
  for (const std::string& dir : plan.dirs)
    for (const snapshot_line& line : directory_snapshot(dir, "end", host_pid))
      write_snapshot_line(writer, line);
}

}  // namespace dc
