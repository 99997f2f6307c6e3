// The end of a session: new processes no longer held, the layers detached and flushed, and the
// loaded object kept for the next run (with the links only waiting to be closed) or freed.
#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

#include "core/link_closer.h"
#include "datacrumbs.skel.h"
#include "probe/object_keeper.h"
#include "probe/session.h"

namespace dc {

result<> session::set_hold_gate(bool open)
{
  uint32_t zero = 0, value = open ? static_cast<uint32_t>(getpid()) : 0;
  if (bpf_map_update_elem(maps_.hold_gate_fd, &zero, &value, BPF_ANY) != 0)
    return fail(std::string("cannot ") + (open ? "open" : "close") +
                " the gate that holds new processes: " + std::strerror(errno));
  // The gate's new value is visible before any read that follows (the hold ring's, at stop).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return {};
}

result<> session::release_holds()
{
  if (!holder_ || std::exchange(holds_released_, true))
    return {};
  // No new holds, then continue every process still held. No pause is needed for a program
  // that read the gate open just before: it reads the gate again once its record is in the ring
  // (dc_hold, behind a full barrier), and the holder's last read of the ring comes after the
  // gate is closed (the fence in set_hold_gate), so either that read finds the record or the
  // program finds the gate closed and continues its process itself.
  auto closed = set_hold_gate(false);
  holder_->stop();
  return closed;
}

result<> session::detach()
{
  // Every step runs even when an earlier one failed (a layer not flushed loses the records its
  // threads still hold back), and the error names every failure, in order.
  std::string failures;
  auto note = [&failures](const result<>& step) {
    if (!step)
      failures += (failures.empty() ? "" : "; ") + step.error().message;
  };
  note(release_holds());
  // With an object to keep, links that only wait to be closed go to its keeper, which closes
  // them after this run has ended: releasing a uprobe link waits for RCU grace periods (the
  // traced command's: 10-50 ms of the run's end, docs/performance.md).
  if (!kept_key_.empty()) {
    for (const auto& l : layers_) std::ranges::move(l->hand_over_links(), std::back_inserter(handed_links_));
    if (warmup_)
      std::ranges::move(warmup_->take_links(), std::back_inserter(handed_links_));
  }
  // Hooks go in the reverse of the order they came (layers, and each layer's links), one after
  // another. Several layers share a tracepoint (sched_process_exit, writeback_dirty_folio,
  // mm_filemap_add_to_page_cache, iomap_dio_rw_begin), and the kernel waits for an RCU grace
  // period when the probe removed is the first of two or more on one; in reverse order ours
  // never is (unless another tracer came after us). The kernel takes one mutex for every
  // tracepoint's change and one for patching its text, so threads detaching at once only spun
  // on them: 21 ms on threads, 14 ms in this order.
  for (auto l = layers_.rbegin(); l != layers_.rend(); ++l) (*l)->detach();
  for (const auto& l : layers_) note(l->flush_stages());
  // Profile mode: the counts threads still coalesce go to the ring now, before its last read.
  if (maps_.profile_interval_ns)
    note(flush_profile(UINT64_MAX - 1));
  if (!failures.empty())
    return fail(failures);
  return {};
}

session::~session()
{
  // Also on the way out of an error, before anything else goes; that error is the one reported.
  (void)release_holds();
  holder_.reset();
  while (!layers_.empty()) layers_.pop_back();  // in reverse, as detach() (why there)
  close_links_in_reverse(process_links_);
  // Detached: the next run configured the same way may take the object instead of loading it.
  if (!kept_key_.empty() && skel_) {
    auto kept = keep_object(*skel_, program_fds_.in_order(skel_->obj), kept_key_, keeper_exe_, keep_seconds_,
                            handed_links_);
    if (!kept && verbose_)
      std::fprintf(stderr, "datacrumbs: the object is not kept: %s\n", kept.error().message.c_str());
  }
  {
    // Kept, the keeper's copies are the last and these close at once; otherwise the releases
    // wait here, together (they share grace periods).
    link_closer closer;
    closer.close_later(std::move(handed_links_));
  }
  datacrumbs_bpf__destroy(skel_);
}

}  // namespace dc
