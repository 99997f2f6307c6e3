// Snapshots (the IO Tracer seed's system, process and filesystem snapshots): what the machine,
// the traced processes and chosen directories looked like. They travel inside the trace as
// DFTracer metadata lines (docs/snapshots.md):
//   {"id":..,"name":"snapshot_system","cat":"dftracer","pid":..,"tid":..,"ts":..,"ph":"M",
//    "args":{"hhash":..,"name":LABEL,"value":"<the snapshot as a JSON text>"}}
// The value is a JSON document in a string so every reader of flat args (dfanalyzer, ours)
// takes the line as it is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/names.h"
#include "sink/pfw_writer.h"

namespace dc {

inline constexpr std::string_view snapshot_system_name = "snapshot_system";
inline constexpr std::string_view snapshot_process_name = "snapshot_process";
inline constexpr std::string_view snapshot_files_name = "snapshot_files";

// One metadata line's content.
struct snapshot_line {
  std::string_view name;  // one of the snapshot_*_name kinds
  std::string label;      // args.name: the host, the pid, the directory
  nlohmann::json value;   // args.value, written as a JSON text
  uint32_t pid = 0;
  uint64_t ts_us = 0;
};

// The machine: CPUs, memory, kernel, OS, block devices, mounts (read from /proc, /sys, /etc).
nlohmann::json system_spec();

// A live process from /proc/PID: command line, executable, cwd, uid/gid, cgroup, kept
// environment variables and rank. `argv` replaces the command line of a process read before
// its exec (run mode snapshots its command while it waits to exec). A process that is gone
// gives {"pid": PID, "gone": true}.
nlohmann::json process_snapshot(uint32_t pid, const std::vector<std::string>* argv = nullptr);

// Every entry under `dir` (made absolute; not following symbolic links): path, type, size, mtime, in lines of
// at most `per_line` entries (at least one line, also for an empty or missing directory).
std::vector<snapshot_line> directory_snapshot(const std::string& dir, std::string_view when, uint32_t pid,
                                              size_t per_line = 1000, size_t max_entries = 1000000);

// The process snapshots the trace writer asks for when it names a process (at its first event,
// again when its command changes, and for a later process given the same pid): reads /proc on the
// writer's thread, once per process and command. Per pid it keeps which process and the hash of
// its command (16 bytes) until the writer forgets the process (a minute after its exit), so a
// run that forks all day keeps the processes of the last minute. A forgotten process is not
// snapshotted again: its /proc entry is gone, or another process's.
class process_snapshotter {
 public:
  // A process snapshotted before its first event (run mode's command, before its exec): its
  // first naming is not snapshotted again.
  void taken_already(uint32_t pid) { taken_[pid] = {instance_key(pid, 0), 0, true}; }
  // The snapshot's value, or nullopt when this process was snapshotted with this command.
  std::optional<nlohmann::json> operator()(process_key instance, const process_info& p);
  // The writer forgot the process (pfw_writer::forget_process).
  void forget(uint32_t pid, process_key instance);
  size_t pids() const { return taken_.size(); }

 private:
  struct taken {
    process_key instance = 0;
    uint64_t command_hash = 0;
    bool any_command = false;  // taken_already: whatever its first command is
  };
  std::unordered_map<uint32_t, taken> taken_;
};

// What a trace records besides its events: the system spec, run mode's command (snapshotted
// while it waits to exec: its argv, cwd, uid, environment are those it will exec with), and
// the directories to snapshot at start and end (--snapshot-dir).
struct snapshot_plan {
  bool system = true;
  std::vector<std::string> dirs;
  uint32_t root_pid = 0;  // 0: none
  std::vector<std::string> root_argv;
  std::string root_executable;  // the file it will exec
};

// Writes one line into the trace.
void write_snapshot_line(pfw_writer& writer, const snapshot_line& line);
// At the start, before the collector runs: the system spec, the root process, the directories.
// `host_pid` is the pid of the trace's host line; the root process counts as snapshotted.
void write_start_snapshots(pfw_writer& writer, const snapshot_plan& plan, process_snapshotter& processes,
                           uint32_t host_pid);
// At the end, after the collector stopped: the directories again.
void write_end_snapshots(pfw_writer& writer, const snapshot_plan& plan, uint32_t host_pid);

}  // namespace dc
