// Processes as /proc shows them, for tests that must see every process a workload made: its
// descendants, their scheduler state, and an end to all of them.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace dc::test {

// Every live process below `root` (children, their children, ...), not root itself.
std::vector<pid_t> descendants(pid_t root);

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), or 0 when the process is gone.
char process_state(pid_t pid);

// Root and its descendants that are stopped ('T'), as "PID (comm)" lines.
std::vector<std::string> stopped_in_tree(pid_t root);

// Live processes (not zombies) whose command line, its arguments each followed by a NUL as
// /proc/PID/cmdline has them, `matches`.
std::vector<pid_t> processes_where(const std::function<bool(const std::string& cmdline)>& matches);
// Live processes that have `argument` as one of their arguments (the tool of a run, by its trace
// path).
std::vector<pid_t> processes_with_argument(const std::string& argument);

// The uprobe_multi links process `pid` holds (each a bpf_link fd whose fdinfo says so): the
// user-space probes of a tool, whatever other tracers on the machine hold.
int uprobe_links_of(pid_t pid);

// SIGKILL to root and every descendant, repeated until none is left (a forking loop makes new
// ones while it dies); reaps root if it is a child of this process.
void kill_tree(pid_t root);

}  // namespace dc::test
