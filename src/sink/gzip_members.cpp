#include "sink/gzip_members.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace dc {

namespace {

// One member made from text: its compressed bytes (the first `size` of `bytes`) and its span
// but for where it lies in the file, which only the member before it tells.
struct compressed_member {
  std::string bytes;
  gzip_member_span span;
};

result<> compress_member(libdeflate_compressor* c, const std::string& path, const std::string& text,
                         compressed_member& into)
{
  into.bytes.resize(libdeflate_gzip_compress_bound(c, text.size()));
  size_t n = libdeflate_gzip_compress(c, text.data(), text.size(), into.bytes.data(), into.bytes.size());
  if (n == 0)
    return fail("gzip compression failed for '" + path + "'");
  into.span = {.compressed_size = n, .text_size = text.size()};
  // memchr per line: glibc's is vectorized, a byte loop (std::count at -O2) cost 5 % of the
  // tracer's time on a syscall storm.
  for (const char *at = text.data(), *end = at + text.size();
       (at = static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)))) != nullptr; ++at)
    ++into.span.line_count;
  return {};
}

// Writes a compressed member after the last of spans and appends its span.
result<> write_member(int fd, const std::string& path, const compressed_member& member,
                      std::vector<gzip_member_span>& spans)
{
  for (size_t done = 0, n = member.span.compressed_size; done < n;) {
    ssize_t w = ::write(fd, member.bytes.data() + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return fail("cannot write '" + path + "': " + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  gzip_member_span span = member.span;
  span.first_line = 1;
  if (!spans.empty()) {
    const gzip_member_span& last = spans.back();
    span.offset = last.offset + last.compressed_size;
    span.text_offset = last.text_offset + last.text_size;
    span.first_line = last.first_line + last.line_count;
  }
  spans.push_back(span);
  return {};
}

struct compressor_closer {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

}  // namespace

// Members handed over wait in `queue` with their number. A worker compresses one on its own,
// then waits for its turn (`next_write`) to write it, so the file stays in member order. At most
// `most_held` members are held: a writer faster than the workers waits instead of growing.
struct gzip_member_writer::workers {
  struct job {
    uint64_t number;
    std::string text;
  };
  int fd = -1;
  std::string path;
  size_t most_held = 0;
  std::mutex m;
  std::condition_variable changed;
  std::deque<job> queue;
  std::vector<std::string> spare;  // emptied texts, kept for their capacity
  uint64_t handed = 0, next_write = 0;
  bool stopping = false;
  result<> first_error;
  std::vector<gzip_member_span> spans;
  std::vector<std::thread> threads;

  void run(std::unique_ptr<libdeflate_compressor, compressor_closer> c)
  {
    compressed_member member;
    std::unique_lock lock(m);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      job j = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      result<> done = compress_member(c.get(), path, j.text, member);
      j.text.clear();
      lock.lock();
      changed.wait(lock, [&] { return next_write == j.number; });
      if (done && first_error) {
        // Only the worker whose turn it is writes, so the file is written outside the lock.
        lock.unlock();
        done = write_member(fd, path, member, spans);
        lock.lock();
      }
      if (!done && first_error)
        first_error = std::unexpected(done.error());
      spare.push_back(std::move(j.text));
      ++next_write;
      changed.notify_all();
    }
  }
};

int gzip_member_writer::default_workers()
{
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 4, 1, 4);
}

result<gzip_member_writer> gzip_member_writer::create(const std::string& path, int level, int workers)
{
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail("cannot create '" + path + "': " + std::strerror(errno));
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  if (!c) {
    ::close(fd);
    return fail("cannot allocate a gzip compressor");
  }
  gzip_member_writer w(fd, path, c);
  if (workers > 0) {
    w.workers_ = std::make_unique<gzip_member_writer::workers>();
    auto* pool = w.workers_.get();
    pool->fd = fd;
    pool->path = path;
    pool->most_held = 2 * static_cast<size_t>(workers);
    for (int i = 0; i < workers; ++i) {
      std::unique_ptr<libdeflate_compressor, compressor_closer> own(libdeflate_alloc_compressor(level));
      if (!own)
        return fail("cannot allocate a gzip compressor");
      pool->threads.emplace_back([pool, own = std::move(own)]() mutable { pool->run(std::move(own)); });
    }
  }
  return w;
}

gzip_member_writer::gzip_member_writer(int fd, std::string path, libdeflate_compressor* compressor)
    : fd_(fd), path_(std::move(path)), compressor_(compressor)
{
}

gzip_member_writer::gzip_member_writer(gzip_member_writer&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      path_(std::move(o.path_)),
      compressor_(std::exchange(o.compressor_, nullptr)),
      pending_(std::move(o.pending_)),
      compressed_(std::move(o.compressed_)),
      members_(o.members_),
      spans_(std::move(o.spans_)),
      workers_(std::move(o.workers_))
{
}

gzip_member_writer& gzip_member_writer::operator=(gzip_member_writer&& o) noexcept
{
  std::swap(fd_, o.fd_);
  std::swap(path_, o.path_);
  std::swap(compressor_, o.compressor_);
  std::swap(pending_, o.pending_);
  std::swap(compressed_, o.compressed_);
  std::swap(members_, o.members_);
  std::swap(spans_, o.spans_);
  std::swap(workers_, o.workers_);
  return *this;
}

gzip_member_writer::~gzip_member_writer()
{
  stop_workers();
  if (fd_ >= 0)
    ::close(fd_);
  if (compressor_)
    libdeflate_free_compressor(compressor_);
}

void gzip_member_writer::stop_workers()
{
  if (!workers_)
    return;
  {
    std::lock_guard lock(workers_->m);
    workers_->stopping = true;
  }
  workers_->changed.notify_all();
  for (std::thread& t : workers_->threads) t.join();
  spans_ = std::move(workers_->spans);
  workers_.reset();
}

result<> gzip_member_writer::flush_member()
{
  if (pending_.empty())
    return {};
  if (fd_ < 0)
    return fail("trace file '" + path_ + "' is already closed");
  if (!workers_) {
    compressed_member member{.bytes = std::move(compressed_), .span = {}};
    auto done = compress_member(compressor_, path_, pending_, member);
    if (done)
      done = write_member(fd_, path_, member, spans_);
    compressed_ = std::move(member.bytes);
    pending_.clear();
    ++members_;
    return done;
  }
  workers& w = *workers_;
  std::unique_lock lock(w.m);
  w.changed.wait(lock, [&] { return w.handed - w.next_write < w.most_held; });
  w.queue.push_back({w.handed++, std::move(pending_)});
  pending_.clear();
  if (!w.spare.empty()) {
    pending_ = std::move(w.spare.back());  // empty, with its capacity: no page faults refilling it
    w.spare.pop_back();
  }
  ++members_;
  w.changed.notify_all();
  return w.first_error;
}

result<> gzip_member_writer::close()
{
  auto flushed = flush_member();
  if (workers_) {
    {
      std::unique_lock lock(workers_->m);
      workers_->changed.wait(lock, [&] { return workers_->next_write == workers_->handed; });
      if (flushed)
        flushed = workers_->first_error;
    }
    stop_workers();
  }
  if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0 && flushed)
    return fail("cannot close '" + path_ + "': " + std::strerror(errno));
  return flushed;
}

}  // namespace dc
