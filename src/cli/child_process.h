// Starting the traced command: resolved like a shell would, forked, held before exec until the
// probes are armed for it, then released. Its exit status is returned as a shell reports it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"

namespace dc {

// The executable a shell would run for `name` (PATH lookup unless it has a '/'); exit code 127
// (not found) or 126 (not executable) on failure.
result<std::string> resolve_command(const std::string& name);

struct paused_child {
  pid_t pid = -1;
  int go_fd = -1;     // write end: a byte written lets the child exec; EOF alone (this process
                      // gone before release) makes it exit without running the command
  int error_fd = -1;  // read end: carries errno if exec fails, EOF if it succeeded
};

result<paused_child> spawn_paused(const std::string& executable, const std::vector<std::string>& argv);

// Lets the child exec. An exec failure comes back as an error with exit code 126/127.
result<> release(paused_child& child, const std::string& name);

// Forwards SIGTERM/SIGHUP/SIGQUIT, and SIGINT that was sent with kill(), to the child; a SIGINT
// from the terminal already reached it through its process group.
void forward_signals_to(pid_t child);

// Waits for the child and returns its status as a shell shows it (128+signal when killed).
int wait_for_exit(pid_t child);

}  // namespace dc
