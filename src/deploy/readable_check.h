// The signing service's readability check (signing_service.cpp): whether a uid can read each
// binary a request probes, as a regular file, asked of the kernel by a child that takes the uid
// and its groups and opens each path. It runs beside the service's other clients: the child
// reports on a pipe the service polls, so an open that never returns (a FUSE or NFS server that
// does not answer) costs that request its deadline, not every other client its turn.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dc {

struct readable_check {
  pid_t pid = 0;  // 0: nothing to check; -1: the child could not be started
  int fd = -1;    // the child's reports: each path's index, before its open
  std::vector<std::string> paths;
  std::string reported;
};

// Starts the child on `paths` (distinct, in the request's order).
readable_check start_readable_check(uint32_t uid, std::vector<std::string> paths);

// Reads what the child reported; true once it has finished (its pipe at EOF).
bool pump_readable_check(readable_check& check);

// Waits for the finished child: the first path uid cannot read as a regular file, if any. Fails
// closed: a child that could not tell (or never started) names the path it was at.
std::optional<std::string> finish_readable_check(readable_check& check);

// The path the child reported last (it reports each before opening it); the first when none.
std::string checked_path(const readable_check& check);

// Kills an unfinished child (its request's deadline passed).
void abandon_readable_check(readable_check& check);

}  // namespace dc
