// Parsing the text of /proc and /sys files into the snapshot records that travel in a trace
// (system spec, process snapshot). Pure functions over the files' contents, so they are tested
// on recorded text; snapshots.cpp reads the real files and calls them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dc {

struct cpu_info {
  std::string model;   // "model name" of the first processor ("" when the file names none)
  uint64_t count = 0;  // processor entries (the online CPUs)
};
cpu_info parse_cpuinfo(std::string_view text);

// A "Key: N kB" line of /proc/meminfo, in bytes.
std::optional<uint64_t> parse_meminfo_bytes(std::string_view text, std::string_view key);

// The KEY=value pairs of /etc/os-release, quotes removed.
std::optional<std::string> parse_os_release(std::string_view text, std::string_view key);

// The active scheduler of /sys/block/DEV/queue/scheduler ("mq-deadline [none]" -> "none").
std::string parse_scheduler(std::string_view text);

struct mount_entry {
  std::string device, mount_point, fs_type, options;
};
// /proc/PID/mounts lines, with the kernel's octal escapes (\040 for a space) undone.
std::vector<mount_entry> parse_mounts(std::string_view text);

// NUL-separated fields (/proc/PID/cmdline, /proc/PID/environ).
std::vector<std::string> split_nul(std::string_view bytes);

// The environment variables a snapshot keeps: who the process is in its job (MPI and
// scheduler ranks, job ids), and the few settings that change I/O behaviour.
const std::vector<std::string_view>& snapshot_env_keys();
// The kept KEY=value pairs of an environment, as a JSON object.
nlohmann::json kept_environment(const std::vector<std::string>& environ);
// The process's rank in its job from the first rank variable present, else nullopt.
std::optional<int64_t> rank_of(const nlohmann::json& kept_env);

// The real uid and gid of a /proc/PID/status text.
struct process_ids {
  int64_t uid = -1, gid = -1, ppid = -1;
};
process_ids parse_status(std::string_view text);

// The cgroup path of /proc/PID/cgroup (the v2 line "0::/path", else the first line's path).
std::string parse_cgroup(std::string_view text);

}  // namespace dc
