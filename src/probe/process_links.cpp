#include "probe/process_links.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <chrono>

namespace dc {

namespace {

// Links of exited processes still to close above which a new process waits, held. Closing a
// link walks every mapping of its binary once per consumer still registered on each of its
// functions, so the links of exited processes, when they pile up faster than they close, make
// every close (and attach) slower, and a fork storm quadratic (4,000 exec'd children: 56 s,
// 6,700 links open at once).
constexpr size_t max_closing = 64;

// A pidfd of tgid, or -1. Close-on-exec, as every pidfd.
int open_pidfd(uint32_t tgid)
{
  return static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(tgid), 0));
}

// Whether the process of `pidfd` has ended (its last thread has exited: the pidfd is readable).
bool ended(int pidfd)
{
  pollfd p{pidfd, POLLIN, 0};
  return pidfd >= 0 && poll(&p, 1, 0) == 1;
}

}  // namespace

bool process_links::begin(uint32_t tgid)
{
  closer_.wait_below(max_closing, std::chrono::seconds(2));
  std::vector<int> stale;
  bool libraries;
  {
    std::lock_guard lock(mutex_);
    auto it = procs_.find(tgid);
    if (it != procs_.end() && ended(it->second.pidfd)) {
      sweep_out(it, stale);
      it = procs_.end();
    }
    if (it == procs_.end())
      it = procs_.emplace(tgid, entry{{}, open_pidfd(tgid), false, {}}).first;
    libraries = it->second.libraries;
  }
  closer_.close_later(std::move(stale));
  return libraries;
}

bool process_links::first_search(uint32_t tgid, const file_id& id)
{
  std::lock_guard lock(mutex_);
  return procs_[tgid].objects.insert(id).second;
}

void process_links::add(uint32_t tgid, const std::vector<int>& fds, bool libraries)
{
  std::lock_guard lock(mutex_);
  entry& e = procs_[tgid];
  e.libraries = e.libraries || libraries;
  e.fds.insert(e.fds.end(), fds.begin(), fds.end());
}

void process_links::forget(uint32_t tgid)
{
  std::vector<int> fds;
  {
    std::lock_guard lock(mutex_);
    if (auto it = procs_.find(tgid); it != procs_.end())
      drop(it, fds);
  }
  closer_.close_later(std::move(fds));
}

void process_links::sweep()
{
  auto started = std::chrono::steady_clock::now();
  std::vector<int> fds;
  {
    std::lock_guard lock(mutex_);
    // Every pidfd at once: one poll for thousands of processes.
    std::vector<pollfd> polled;
    std::vector<entries::iterator> of;
    for (auto it = procs_.begin(); it != procs_.end(); ++it)
      if (it->second.pidfd >= 0) {
        polled.push_back({it->second.pidfd, POLLIN, 0});
        of.push_back(it);
      }
    if (!polled.empty() && poll(polled.data(), polled.size(), 0) > 0)
      for (size_t i = 0; i < polled.size(); ++i)
        if (polled[i].revents & POLLIN)
          sweep_out(of[i], fds);
    auto took =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    ++swept_.sweeps;
    swept_.longest_us = std::max(swept_.longest_us, static_cast<uint64_t>(took.count()));
  }
  closer_.close_later(std::move(fds));
}

sweep_counts process_links::swept() const
{
  std::lock_guard lock(mutex_);
  return swept_;
}

void process_links::close_all()
{
  std::vector<int> fds;
  {
    std::lock_guard lock(mutex_);
    for (auto it = procs_.begin(); it != procs_.end();) it = drop(it, fds);
    fds.insert(fds.end(), ended_.begin(), ended_.end());
    ended_.clear();
  }
  closer_.close_later(std::move(fds));
}

void process_links::keep_to_the_end(uint32_t tgid)
{
  std::lock_guard lock(mutex_);
  kept_to_the_end_ = tgid;
}

std::vector<int> process_links::hand_over()
{
  std::lock_guard lock(mutex_);
  std::vector<int> fds = std::move(ended_);
  ended_.clear();
  for (auto it = procs_.begin(); it != procs_.end();)
    it = ended(it->second.pidfd) ? drop(it, fds) : std::next(it);
  fds.insert(fds.end(), ended_.begin(), ended_.end());  // the command's, when it was among them
  ended_.clear();
  return fds;
}

process_links::entries::iterator process_links::drop(entries::iterator it, std::vector<int>& fds)
{
  if (it->second.pidfd >= 0)
    close(it->second.pidfd);
  auto& to = it->first == kept_to_the_end_ ? ended_ : fds;
  to.insert(to.end(), it->second.fds.begin(), it->second.fds.end());
  return procs_.erase(it);
}

process_links::entries::iterator process_links::sweep_out(entries::iterator it, std::vector<int>& fds)
{
  ++swept_.processes;
  swept_.links += it->second.fds.size();
  return drop(it, fds);
}

}  // namespace dc
