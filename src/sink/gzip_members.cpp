#include "sink/gzip_members.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "sink/member_compressor.h"
#include "sink/member_file.h"
#include "sink/trace_index.h"

namespace dc {

uint64_t scan_lines(std::string_view text, std::vector<uint32_t>* lengths)
{
  uint64_t count = 0;
  for (const char *line = text.data(), *at = line, *end = at + text.size();
       (at = static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)))) != nullptr;
       line = ++at) {
    ++count;
    if (lengths)
      lengths->push_back(static_cast<uint32_t>(at + 1 - line));
  }
  return count;
}

// Members handed over wait in `queue` with their number. A worker compresses one on its own,
// then waits for its turn (`next_write`) to write it, so the file stays in member order. At most
// `most_held` members are held: a writer faster than the workers waits instead of growing.
struct gzip_member_writer::workers {
  struct job {
    uint64_t number;
    std::string text;
    member_tally tally;
  };
  int fd = -1;
  std::string path;
  size_t most_held = 0;
  std::mutex m;
  std::condition_variable changed;
  std::deque<job> queue;
  std::vector<std::string> spare;  // an emptied text, kept for its capacity
  uint64_t handed = 0, next_write = 0;
  bool stopping = false;
  result<> first_error;
  std::vector<gzip_member_span> spans;
  member_tally written;
  trace_index_builder* index = nullptr;  // the writer's, set before the first member
  std::vector<std::thread> threads;

  void run(member_compressor c)
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
      result<> done = compress_member(c, path, j.text, member, index != nullptr);
      j.text.clear();
      lock.lock();
      changed.wait(lock, [&] { return next_write == j.number; });
      if (done && first_error) {
        // Only the worker whose turn it is writes, so the file is written outside the lock.
        lock.unlock();
        done = write_member(fd, path, member, spans, index);
        lock.lock();
        if (done) {
          written.events += j.tally.events;
          written.counters += j.tally.counters;
        }
      }
      if (!done && first_error)
        first_error = std::unexpected(done.error());
      // One spare is enough to swap in at the next hand-over; more only piled up in a burst.
      if (spare.empty())
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

result<gzip_member_writer> gzip_member_writer::create(const std::string& path, int level, int workers, int in,
                                                      const char* name)
{
  const char* at = name ? name : path.c_str();
  // A device is not even opened (opening some has effects: a watchdog, a tape); a FIFO planted
  // after this look fails to open (O_NONBLOCK, no reader) or is refused below. Not O_TRUNC:
  // what is there is looked at before anything of it is cut.
  struct stat st {};
  if (::fstatat(in, at, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    return fail("cannot create '" + path + "': not a regular file");
  int fd = ::openat(in, at, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail("cannot create '" + path + "': " +
                (errno == ELOOP ? std::string("a symbolic link (never followed)") : std::strerror(errno)));
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string refused = ::fstat(fd, &st) != 0  ? std::string(std::strerror(errno))
                        : !S_ISREG(st.st_mode) ? "not a regular file"
                        : st.st_nlink > 1 ? "it has other hard links (refusing to overwrite a linked file)"
                        : ::ftruncate(fd, 0) != 0 ? std::string(std::strerror(errno))
                                                  : "";
  if (!refused.empty()) {
    ::close(fd);
    return fail("cannot create '" + path + "': " + refused);
  }
  auto c = member_compressor::create(level);
  if (!c) {
    ::close(fd);
    return std::unexpected(c.error());
  }
  gzip_member_writer w(fd, path, std::make_unique<member_compressor>(std::move(*c)));
  if (workers > 0) {
    w.workers_ = std::make_unique<gzip_member_writer::workers>();
    auto* pool = w.workers_.get();
    pool->fd = fd;
    pool->path = path;
    pool->most_held = 2 * static_cast<size_t>(workers);
    for (int i = 0; i < workers; ++i) {
      auto made = member_compressor::create(level);  // the level was accepted above
      pool->threads.emplace_back([pool, c = std::move(*made)]() mutable { pool->run(std::move(c)); });
    }
  }
  return w;
}

gzip_member_writer::gzip_member_writer(int fd, std::string path,
                                       std::unique_ptr<member_compressor> compressor)
    : fd_(fd), path_(std::move(path)), compressor_(std::move(compressor))
{
}

gzip_member_writer::gzip_member_writer(gzip_member_writer&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      path_(std::move(o.path_)),
      compressor_(std::move(o.compressor_)),
      pending_(std::move(o.pending_)),
      compressed_(std::move(o.compressed_)),
      members_(o.members_),
      spans_(std::move(o.spans_)),
      index_(std::move(o.index_)),
      index_status_(std::move(o.index_status_)),
      workers_(std::move(o.workers_)),
      written_(o.written_),
      failed_(o.failed_)
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
  std::swap(index_, o.index_);
  std::swap(index_status_, o.index_status_);
  std::swap(workers_, o.workers_);
  std::swap(written_, o.written_);
  std::swap(failed_, o.failed_);
  return *this;
}

gzip_member_writer::~gzip_member_writer()
{
  stop_workers();
  index_.reset();  // unfinished: its temporary file removed
  if (fd_ >= 0)
    ::close(fd_);
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
  written_ = workers_->written;
  workers_.reset();
}

void gzip_member_writer::abandon()
{
  failed_ = true;
  pending_.clear();
  stop_workers();
  drop_index("the trace failed");
}

void gzip_member_writer::index_to(const std::string& index_path, int dir_fd, const std::string& leaf)
{
  if (members_ > 0 || failed_ || fd_ < 0) {
    index_status_ = fail("trace index: not written: asked for after the trace was begun");
    return;
  }
  auto made = trace_index_builder::create(index_path, dir_fd, leaf);
  if (!made) {
    index_status_ = std::unexpected(made.error());
    return;
  }
  index_ = std::move(*made);
  if (workers_) {
    std::lock_guard lock(workers_->m);
    workers_->index = index_.get();
  }
}

void gzip_member_writer::drop_index(const std::string& why)
{
  if (!index_)
    return;
  index_.reset();
  index_status_ = fail("trace index: not written: " + why);
}

bool gzip_member_writer::give_to(uint32_t uid, uint32_t gid) const
{
  return fd_ >= 0 && ::fchown(fd_, uid, gid) == 0;
}

std::pair<uint64_t, uint64_t> gzip_member_writer::identity() const
{
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0)
    return {0, 0};
  return {st.st_dev, st.st_ino};
}

bool gzip_member_writer::removed() const
{
  struct stat st {};
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_nlink == 0;
}

result<> gzip_member_writer::flush_member(member_tally tally)
{
  if (failed_) {
    pending_.clear();
    return fail("trace file '" + path_ + "' already failed");
  }
  if (pending_.empty())
    return {};
  if (fd_ < 0)
    return fail("trace file '" + path_ + "' is already closed");
  if (!workers_) {
    compressed_member member{.bytes = std::move(compressed_), .span = {}, .line_lengths = {}};
    auto done = compress_member(*compressor_, path_, pending_, member, index_ != nullptr);
    if (done)
      done = write_member(fd_, path_, member, spans_, index_.get());
    compressed_ = std::move(member.bytes);
    pending_.clear();
    ++members_;
    if (!done)
      failed_ = true;
    else {
      written_.events += tally.events;
      written_.counters += tally.counters;
    }
    return done;
  }
  workers& w = *workers_;
  std::unique_lock lock(w.m);
  w.changed.wait(lock, [&] { return w.handed - w.next_write < w.most_held; });
  if (!w.first_error) {  // an earlier member failed: nothing more is written
    failed_ = true;
    pending_.clear();
    return w.first_error;
  }
  w.queue.push_back({w.handed++, std::move(pending_), tally});
  pending_.clear();
  if (!w.spare.empty()) {
    pending_ = std::move(w.spare.back());  // empty, with its capacity: no page faults refilling it
    w.spare.pop_back();
  }
  ++members_;
  w.changed.notify_all();
  return w.first_error;
}

result<> gzip_member_writer::drain()
{
  if (!workers_)
    return {};
  std::unique_lock lock(workers_->m);
  workers_->changed.wait(lock, [&] { return workers_->next_write == workers_->handed; });
  written_ = workers_->written;
  return workers_->first_error;
}

result<> gzip_member_writer::close(member_tally tally)
{
  auto flushed = flush_member(tally);
  if (workers_) {
    if (auto drained = drain(); flushed)
      flushed = drained;
    stop_workers();
  }
  if (index_ && !flushed)
    drop_index("the trace is incomplete");
  if (index_ && fd_ >= 0) {
    // Only the commit is left to do here: the rows went in while the members were written.
    index_status_ = index_->finish(path_, fd_);
    index_.reset();
  }
  if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0 && flushed)
    return fail("cannot close '" + path_ + "': " + std::strerror(errno));
  return flushed;
}

}  // namespace dc
