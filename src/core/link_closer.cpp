#include "core/link_closer.h"

#include <unistd.h>

#include <algorithm>
#include <system_error>

namespace dc {

link_closer::~link_closer()
{
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
  for (int fd : fds_) close(fd);  // left only where no thread could start
}

void link_closer::close_later(std::vector<int> fds)
{
  {
    std::lock_guard lock(mutex_);
    fds_.insert(fds_.end(), fds.begin(), fds.end());
    closing_ += fds.size();
    start_threads_for_waiting_links();
  }
  ready_.notify_all();
}

void link_closer::start_threads_for_waiting_links()
{
  while (threads_.size() < std::min(max_threads, closing_)) {
    try {
      threads_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;  // those running close these links; with none, the next call or the destructor does
    }
  }
}

void link_closer::wait_below(size_t n, std::chrono::milliseconds longest)
{
  std::unique_lock lock(mutex_);
  closed_.wait_for(lock, longest, [&] { return closing_ < n; });
}

void link_closer::work()
{
  for (;;) {
    int fd;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return done_ || !fds_.empty(); });
      if (fds_.empty())
        return;
      fd = fds_.back();
      fds_.pop_back();
    }
    close(fd);
    {
      std::lock_guard lock(mutex_);
      --closing_;
    }
    closed_.notify_all();
  }
}

}  // namespace dc
