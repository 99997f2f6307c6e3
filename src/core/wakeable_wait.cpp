#include "core/wakeable_wait.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace dc {

result<wakeable_wait> wakeable_wait::on(int fd)
{
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  int event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event watched{};
  watched.events = EPOLLIN;
  watched.data.fd = fd;
  epoll_event woken{};
  woken.events = EPOLLIN;
  woken.data.fd = event_fd;
  if (epoll_fd < 0 || event_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &watched) != 0 ||
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &woken) != 0) {
    std::string why = std::strerror(errno);
    if (epoll_fd >= 0)
      close(epoll_fd);
    if (event_fd >= 0)
      close(event_fd);
    return fail("cannot set up a wait on a ring: " + why);
  }
  return wakeable_wait(epoll_fd, event_fd, fd);
}

wakeable_wait::wakeable_wait(wakeable_wait&& other) noexcept
    : epoll_fd_(other.epoll_fd_), event_fd_(other.event_fd_), fd_(other.fd_)
{
  other.epoll_fd_ = other.event_fd_ = other.fd_ = -1;
}

wakeable_wait::~wakeable_wait()
{
  if (epoll_fd_ >= 0)
    close(epoll_fd_);
  if (event_fd_ >= 0)
    close(event_fd_);
}

int wakeable_wait::wait(int timeout_ms)
{
  epoll_event events[2];
  int n = epoll_wait(epoll_fd_, events, 2, timeout_ms);
  if (n < 0)
    return -errno;
  for (int i = 0; i < n; ++i)
    if (events[i].data.fd == fd_)
      return 1;
  return 0;
}

void wakeable_wait::wake()
{
  uint64_t one = 1;
  // The counter stays non-zero (nobody reads it), so every later wait() returns at once too.
  (void)!write(event_fd_, &one, sizeof(one));
}

}  // namespace dc
