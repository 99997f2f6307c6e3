#include "probe/process_holder.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern "C" {
#include "events.h"
}

namespace dc {

result<std::unique_ptr<process_holder>> process_holder::start(int holds_fd, user_probes& probes,
                                                              std::function<uint64_t()> gone_unsaid)
{
  std::unique_ptr<process_holder> h(new process_holder(probes, std::move(gone_unsaid)));
  h->ring_ = ring_buffer__new(holds_fd, &process_holder::on_record, h.get(), nullptr);
  if (!h->ring_)
    return fail(std::string("cannot open the hold ring: ") + std::strerror(errno));
  auto wait = wakeable_wait::on(ring_buffer__epoll_fd(h->ring_));
  if (!wait)
    return std::unexpected(wait.error());
  h->wait_.emplace(std::move(*wait));
  h->thread_ = std::thread(&process_holder::loop, h.get());
  return h;
}

process_holder::~process_holder()
{
  stop();
  if (ring_)
    ring_buffer__free(ring_);
}

int process_holder::on_record(void* ctx, void* data, size_t size)
{
  auto* self = static_cast<process_holder*>(ctx);
  dc_hold_record r;
  if (size < sizeof(r))
    return 0;
  std::memcpy(&r, data, sizeof(r));
  if (r.op == DC_HOLD_GONE) {
    self->probes_.forget_process(r.tgid);
    return 0;
  }
  // Attached or not, a held process always goes on: a failure costs its user-space events, never
  // the process.
  if (auto attached = self->probes_.attach_process(r.tgid); !attached && kill(r.tgid, 0) == 0)
    self->note_failure(attached.error().message);
  // The entry stays in the kernel's held set until the process exits (bpf/process.bpf.c): deleted
  // here after the SIGCONT, it could be the entry of the next hold (the continued child execs
  // /bin/true at once and is held again), and a holder killed then would leave that hold stopped
  // (runtime_test.SigkilledTracerNeverLeavesAHeldProcessStopped caught it). The holder's death
  // continues every process in the set; one already running only gets a second SIGCONT.
  kill(static_cast<pid_t>(r.tgid), SIGCONT);
  return 0;
}

void process_holder::loop()
{
  // Holds wake this thread as they come (BPF_RB_FORCE_WAKEUP), and so does stop().
  int timeout_ms = 1000;
  while (!stopping_.load(std::memory_order_acquire)) {
    int polled = wait_->wait(timeout_ms);
    if (polled > 0) {
      if (int consumed = ring_buffer__consume(ring_); consumed < 0)
        note_failure(std::string("cannot read the hold ring: ") + std::strerror(-consumed));
    } else if (polled != 0 && polled != -EINTR) {
      note_failure(std::string("cannot wait on the hold ring: ") + std::strerror(-polled));
      // Holds are still taken, by reading the ring every 10 ms.
      (void)ring_buffer__consume(ring_);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    timeout_ms = sweep_if_ends_lost();
  }
  if (int consumed = ring_buffer__consume(ring_); consumed < 0)
    note_failure(std::string("cannot read the hold ring: ") + std::strerror(-consumed));
}

int process_holder::sweep_if_ends_lost()
{
  // The count grows as a process's last thread exits, a moment before its pidfd says it has
  // ended: after a growth, sweeps go on every 250 ms for 2 s, so that a process still exiting
  // at the first one is found by a later one. At most 4 a second while a storm keeps the ring
  // full (a sweep polls every traced process's pidfd at once: microseconds for hundreds).
  constexpr std::chrono::milliseconds every{250}, for_as_long{2000};
  auto now = std::chrono::steady_clock::now();
  if (uint64_t unsaid = gone_unsaid_(); unsaid != unsaid_seen_) {
    unsaid_seen_ = unsaid;
    sweep_until_ = now + for_as_long;
  }
  if (now >= sweep_until_)
    return 1000;
  if (now >= next_sweep_) {
    probes_.sweep_gone();
    next_sweep_ = now + every;
  }
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next_sweep_ - now).count());
}

void process_holder::note_failure(std::string what)
{
  if (failures_++ == 0) {
    std::lock_guard lock(mutex_);
    first_failure_ = std::move(what);
  }
}

void process_holder::stop()
{
  stopping_.store(true, std::memory_order_release);
  if (wait_)
    wait_->wake();
  if (thread_.joinable())
    thread_.join();
}

std::string process_holder::first_failure() const
{
  std::lock_guard lock(mutex_);
  return first_failure_;
}

}  // namespace dc
