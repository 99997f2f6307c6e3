// Keeps the kernel's uprobe registration warm while the object loads, so that the traced
// command's user-space probes, attached right after the load, do not wait for an RCU grace
// period on the path to its exec.
//
// Every uprobe registration (and removal) takes the kernel's `dup_mmap_sem` for writing, a
// per-CPU rwsem whose writer first moves the readers (every fork) to a slow path and waits a
// grace period for them (`rcu_sync_enter` -> `synchronize_rcu`). It waits only when the lock has
// been quiet for a grace period or more; a writer within one of the last pays nothing. The
// first link of a run therefore waited 12-30 ms here (docs/performance.md, session 43), spent off
// the CPU, while the loading thread had the CPU for ~90 ms just before. A thread registers a
// do-nothing uprobe on this executable's entry point (which runs once, at exec: never again in
// this process), for this process only, every few ms until stopped: the grace period is paid
// beside the load, and the lock stays warm until the command's own links are made. Its links
// are closed after the run by the object's keeper, where no one waits for their release: the
// session warms only when it keeps its object.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dc {

class uprobe_warmup {
 public:
  // Starts the thread; with no thread, or when the kernel refuses the do-nothing program or its
  // link, nothing is warmed (and nothing else changes): error() says why.
  uprobe_warmup();
  ~uprobe_warmup();  // stops, and closes the links not handed over (waiting for their release)
  uprobe_warmup(const uprobe_warmup&) = delete;
  uprobe_warmup& operator=(const uprobe_warmup&) = delete;

  // Stops registering; the links stay open. None is closed before the end: a process forked
  // meanwhile (the command, before its exec) holds copies of them, and the last holder of a
  // uprobe link pays its release (grace periods, ~30 ms each here), at its exec.
  void stop();
  // Stops, and hands the links over (to the object's keeper, which closes them after the run).
  std::vector<int> take_links();
  // Links made so far, and why the warming stopped early ("" while it runs or ran well).
  unsigned links_made() const { return made_.load(); }
  std::string error() const;

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string error_;
  std::atomic<unsigned> made_{0};
  int prog_fd_ = -1;
  std::vector<int> links_;
  std::thread thread_;
};

// Its parts, for tests: the do-nothing uprobe_multi program (an fd, or -1 with errno set), and
// one link of it on this executable's entry point for this process (an fd, or -errno).
int load_empty_uprobe_program();
int link_at_entry(int prog_fd);

}  // namespace dc
