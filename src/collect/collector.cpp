#include "collect/collector.h"

#include "core/clock.h"

#include <bpf/libbpf.h>
#include <malloc.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace dc {

result<std::unique_ptr<collector>> collector::start(std::unique_ptr<mapped_ring> ring, decoder& dec,
                                                    pfw_writer* writer,
                                                    std::unique_ptr<profile_reader> profile)
{
  auto recorder = ring_recorder::from_environment();
  if (!recorder)
    return std::unexpected(recorder.error());
  auto heap = heap_report::from_environment();
  if (!heap)
    return std::unexpected(heap.error());
  std::unique_ptr<collector> c(
      new collector(dec, writer, std::move(profile), std::move(*recorder), std::move(*heap)));
  if (!ring)
    return fail("no event ring to read");
  c->ring_ = std::move(ring);
  c->ring_->serve(&collector::on_record, c.get());
  auto wait = wakeable_wait::on(ring_buffer__epoll_fd(c->ring_->get()));
  if (!wait)
    return std::unexpected(wait.error());
  c->wait_.emplace(std::move(*wait));
  c->formatter_ = std::thread(&collector::format_loop, c.get());
  c->consumer_ = std::thread(&collector::consume_loop, c.get());
  return c;
}

collector::~collector()
{
  if (consumer_.joinable() || formatter_.joinable())
    (void)stop();
}

int collector::on_record(void* ctx, void* data, size_t size)
{
  auto* self = static_cast<collector*>(ctx);
  if (!self->batch_.append(data, size))
    return -ENOMEM;  // the record is lost: ring_buffer__consume() reports it (note_ring_error)
  if (self->batch_.full())
    self->hand_over_batch();
  return 0;
}

void collector::hand_over_batch()
{
  if (batch_.empty())
    return;
  record_batch next;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(batch_));
    if (!spare_.empty()) {
      next = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  ready_.notify_one();
  batch_ = std::move(next);
}

void collector::recycle(record_batch&& batch)
{
  if (batch.empty())  // none was taken: a wait that timed out
    return;
  batch.clear();
  std::lock_guard lock(mutex_);
  if (spare_.size() < max_spare_batches)
    spare_.push_back(std::move(batch));
}

void collector::consume_loop()
{
  while (!stopping_.load(std::memory_order_acquire)) {
    int polled = wait_->wait(poll_interval_ms);
    if (polled < 0 && polled != -EINTR) {
      note_ring_error("cannot wait on the event ring", polled);
      // Records still arrive: read the ring at the poll interval instead.
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_interval_ms));
    }
    uint64_t before_consume = monotonic_now_ns();
    if (int consumed = ring_buffer__consume(ring_->get()); consumed < 0)
      note_ring_error("cannot read the event ring", consumed);
    hand_over_batch();
    std::lock_guard lock(mutex_);
    drained_ns_ = before_consume;
  }
  if (int consumed = ring_buffer__consume(ring_->get()); consumed < 0)  // whatever arrived before stop
    note_ring_error("cannot read the event ring", consumed);
  hand_over_batch();
  {
    std::lock_guard lock(mutex_);
    consumer_done_ = true;
  }
  ready_.notify_one();
}

void collector::format_loop()
{
  for (;;) {
    record_batch batch;
    bool done = false;
    uint64_t decoded_until = 0;  // once this batch is decoded; 0: not known yet
    {
      std::unique_lock lock(mutex_);
      ready_.wait_for(lock, std::chrono::milliseconds(poll_interval_ms),
                      [&] { return !queue_.empty() || consumer_done_; });
      if (!queue_.empty()) {
        batch = std::move(queue_.front());
        queue_.pop_front();
      } else {
        done = consumer_done_;
      }
      if (queue_.empty())
        decoded_until = drained_ns_;
    }
    recorder_.append(batch.bytes());
    decode_batch(decoder_, batch.bytes());
    recycle(std::move(batch));
    if (profile_ && (done || (decoded_until && std::chrono::steady_clock::now() - last_take_ >=
                                                   std::chrono::nanoseconds(profile_->interval_ns()))))
      take_counters(decoded_until, done);
    auto now = std::chrono::steady_clock::now();
    decoder_.tick(now);
    // Memory freed after a burst (batches queued while this thread fell behind, a large member
    // compressed) goes back to the system: glibc keeps it in its arenas otherwise, and a run's
    // RSS then stays at the highest burst it ever had (the soak: +3 MiB at once, never returned).
    if (now - last_trim_ >= trim_interval) {
      malloc_trim(0);
      heap_.sample();
      last_trim_ = now;
    }
    if (writer_ && sink_status_) {
      auto flushed = writer_->maybe_flush(now);
      if (!flushed)
        sink_status_ = flushed;
    }
    if (done)
      return;
  }
}

void collector::take_counters(uint64_t decoded_until_ns, bool all)
{
  last_take_ = std::chrono::steady_clock::now();
  for (const profile_sample& s : profile_->take(decoded_until_ns, all, decoder_.take_profile_records()))
    decoder_.decode_profile(s.key, s.counts, profile_->interval_ns());
  // The files named so far were named by records of intervals up to the one after decoded_until
  // (a batch holds what arrived while it was read): kept until those intervals' counters are read.
  if (auto through = profile_->read_through(); through && !all)
    decoder_.state().files.counters_read(*through, decoded_until_ns / profile_->interval_ns() + 1);
  if (!profile_->flush_status() && sink_status_)
    sink_status_ = profile_->flush_status();
}

void collector::note_ring_error(std::string_view what, int err)
{
  if (ring_status_)
    ring_status_ = fail(std::string(what) + ": " + std::strerror(-err));
}

result<> collector::stop()
{
  stopping_.store(true, std::memory_order_release);
  if (wait_)
    wait_->wake();
  if (consumer_.joinable())
    consumer_.join();
  if (formatter_.joinable())
    formatter_.join();
  return ring_status_ ? sink_status_ : ring_status_;
}

}  // namespace dc
