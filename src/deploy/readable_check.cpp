#include "deploy/readable_check.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dc {

namespace {

void close_fd(readable_check& check)
{
  if (check.fd >= 0)
    close(check.fd);
  check.fd = -1;
}

}  // namespace

std::string checked_path(const readable_check& check)
{
  if (check.paths.empty())
    return {};
  size_t records = check.reported.size() / sizeof(uint64_t);
  uint64_t index = 0;
  if (records > 0)
    std::memcpy(&index, check.reported.data() + (records - 1) * sizeof(uint64_t), sizeof(index));
  return check.paths[index < check.paths.size() ? index : 0];
}

readable_check start_readable_check(uint32_t uid, std::vector<std::string> paths)
{
  readable_check check;
  check.paths = std::move(paths);
  if (check.paths.empty())
    return check;
  passwd* pw = getpwuid(uid);
  gid_t gid = pw ? pw->pw_gid : uid;
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    check.pid = -1;
    return check;
  }
  check.pid = fork();
  if (check.pid == 0) {
    // Only the report pipe stays open: a child stuck in an open must not keep other clients'
    // sockets (or the listening one) alive.
    if (dup2(report[1], 3) != 3 || close_range(4, ~0U, 0) != 0)
      _exit(2);
    if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, nullptr)) != 0 || setgid(gid) != 0 ||
        setuid(uid) != 0)
      _exit(2);
    for (uint64_t i = 0; i < check.paths.size(); ++i) {
      if (write(3, &i, sizeof(i)) != sizeof(i))
        _exit(2);
      // O_NONBLOCK: a FIFO, or a file under a lease, must not stop the child.
      int fd = open(check.paths[i].c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      struct stat st {};
      bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
      if (fd >= 0)
        close(fd);
      if (!regular)
        _exit(1);
    }
    _exit(0);
  }
  close(report[1]);
  if (check.pid < 0 || fcntl(report[0], F_SETFL, O_NONBLOCK) != 0) {
    close(report[0]);  // a child started is then failed closed, waited for by finish
    return check;
  }
  check.fd = report[0];
  return check;
}

bool pump_readable_check(readable_check& check)
{
  if (check.fd < 0)
    return true;
  char buf[4096];
  for (;;) {
    ssize_t n = read(check.fd, buf, sizeof(buf));
    if (n > 0) {
      check.reported.append(buf, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < sizeof(buf))
        return false;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return false;
    close_fd(check);
    return true;
  }
}

std::optional<std::string> finish_readable_check(readable_check& check)
{
  close_fd(check);
  if (check.pid == 0)
    return std::nullopt;
  int status = 0;
  bool all = check.pid > 0 && waitpid(check.pid, &status, 0) == check.pid && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
  check.pid = 0;
  if (all)
    return std::nullopt;
  return checked_path(check);
}

void abandon_readable_check(readable_check& check)
{
  close_fd(check);
  if (check.pid > 0) {
    kill(check.pid, SIGKILL);  // an open waiting on FUSE or NFS is a killable wait
    waitpid(check.pid, nullptr, 0);
  }
  check.pid = 0;
}

}  // namespace dc
