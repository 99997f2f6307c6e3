// Waiting on a pollable descriptor (a BPF ring buffer's epoll fd) that another thread can cut
// short: a thread that drains a ring sleeps until records arrive, its poll interval passes, or
// it is told to stop, so stopping takes no poll interval.
#pragma once

#include "core/result.h"

namespace dc {

class wakeable_wait {
 public:
  // Waits on `fd` (readable) or wake(); `fd` stays owned by the caller.
  static result<wakeable_wait> on(int fd);
  wakeable_wait(wakeable_wait&& other) noexcept;
  wakeable_wait& operator=(wakeable_wait&&) = delete;
  ~wakeable_wait();

  // Until `fd` is readable, wake() was called (now or before), or timeout_ms passed: > 0 when
  // `fd` is readable, 0 otherwise, -errno on failure (EINTR included).
  int wait(int timeout_ms);
  // Ends the current wait() and every later one at once.
  void wake();

 private:
  wakeable_wait(int epoll_fd, int event_fd, int fd) : epoll_fd_(epoll_fd), event_fd_(event_fd), fd_(fd) {}
  int epoll_fd_ = -1;
  int event_fd_ = -1;
  int fd_ = -1;
};

}  // namespace dc
