#pragma once
// Closing file descriptors whose release is slow, off the caller's path.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace dc {

// Closes links in the background: releasing a uprobe link waits for RCU grace periods (~20-50
// ms on a quiet machine, over a second under a load of 50 on 2 CPUs), which must not delay the
// next process waiting to be continued. Concurrent releases share grace periods, so the threads
// set how many links close per second; that must keep up with a workload that forks all the
// time (two links per child for libc alone), or the links of exited processes pile up: with 8
// threads, bench/soak.sh's 28 forks/s left 3,000 open at 30 s, and every one of them still
// hooks libc's probed functions (checked on every fork and exec of any process). 32 threads
// closed 1.7x as many per second as 8 (200 links, a load of 50). A thread starts when a link
// waits and fewer than 32 run (starting all 32 up front cost ~7 ms of every run's start-up).
// Joined (every link closed) when destroyed.
class link_closer {
 public:
  link_closer() = default;
  ~link_closer();
  void close_later(std::vector<int> fds);
  // Waits (at most `longest`) until fewer than `n` links are still to close.
  void wait_below(size_t n, std::chrono::milliseconds longest);

 private:
  void work();
  void start_threads_for_waiting_links();  // holding mutex_

  std::mutex mutex_;
  std::condition_variable ready_, closed_;
  std::vector<int> fds_;
  size_t closing_ = 0;  // queued or being closed
  bool done_ = false;
  std::vector<std::thread> threads_;  // at most max_threads
  static constexpr size_t max_threads = 32;
};

}  // namespace dc
