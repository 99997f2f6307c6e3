#include "sink/async_output.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dc {

async_output::async_output(int fd, std::string what, bool owned)
    : fd_(fd), what_(std::move(what)), owned_(owned)
{
  writer_ = std::thread(&async_output::write_loop, this);
}

async_output::~async_output()
{
  (void)finish();
}

bool async_output::write(std::string&& chunk)
{
  if (chunk.empty())
    return true;
  {
    std::lock_guard lock(mutex_);
    if (queued_bytes_ + chunk.size() > max_queued_bytes) {
      dropped_ += chunk.size();
      return false;
    }
    queued_bytes_ += chunk.size();
    queue_.push_back(std::move(chunk));
  }
  ready_.notify_one();
  return true;
}

void async_output::write_loop()
{
  // A closed pipe must end this output, not the process: SIGPIPE for a write goes to the
  // writing thread, so with it blocked here the write returns EPIPE instead.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  for (;;) {
    std::string chunk;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !queue_.empty() || done_; });
      if (queue_.empty())
        return;
      chunk = std::move(queue_.front());
      queue_.pop_front();
    }
    for (size_t at = 0; at < chunk.size() && error_.empty();) {
      ssize_t w = ::write(fd_, chunk.data() + at, chunk.size() - at);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        error_ = "cannot write " + what_ + ": " + std::strerror(w < 0 ? errno : EIO);
      else
        at += static_cast<size_t>(w);
    }
    std::lock_guard lock(mutex_);
    queued_bytes_ -= chunk.size();
  }
}

result<> async_output::finish()
{
  if (!writer_.joinable())
    return error_.empty() ? result<>{} : fail(error_);
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  ready_.notify_one();
  writer_.join();
  if (owned_ && ::close(fd_) != 0 && error_.empty())
    error_ = "cannot write " + what_ + ": " + std::strerror(errno);
  if (!error_.empty())
    return fail(error_);
  return {};
}

}  // namespace dc
