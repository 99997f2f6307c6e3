#include "sink/gzip_members.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace dc {

result<gzip_member_writer> gzip_member_writer::create(const std::string& path, int level)
{
  // A device is not even opened (opening some has effects: a watchdog, a tape); a FIFO planted
  // after this look fails to open (O_NONBLOCK, no reader) or is refused below. Not O_TRUNC:
  // what is there is looked at before anything of it is cut.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    return fail("cannot create '" + path + "': not a regular file");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
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
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  if (!c) {
    ::close(fd);
    return fail("cannot allocate a gzip compressor");
  }
  return gzip_member_writer(fd, path, c);
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
      complete_bytes_(o.complete_bytes_),
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
  std::swap(complete_bytes_, o.complete_bytes_);
  std::swap(failed_, o.failed_);
  return *this;
}

gzip_member_writer::~gzip_member_writer()
{
  if (fd_ >= 0)
    ::close(fd_);
  if (compressor_)
    libdeflate_free_compressor(compressor_);
}

result<> gzip_member_writer::flush_member()
{
  if (failed_) {
    pending_.clear();
    return fail("trace file '" + path_ + "' already failed");
  }
  if (pending_.empty())
    return {};
  if (fd_ < 0)
    return fail("trace file '" + path_ + "' is already closed");
  compressed_.resize(libdeflate_gzip_compress_bound(compressor_, pending_.size()));
  size_t n = libdeflate_gzip_compress(compressor_, pending_.data(), pending_.size(), compressed_.data(),
                                      compressed_.size());
  if (n == 0)
    return fail("gzip compression failed for '" + path_ + "'");
  for (size_t done = 0; done < n;) {
    ssize_t w = ::write(fd_, compressed_.data() + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      int why = w < 0 ? errno : ENOSPC;
      failed_ = true;
      pending_.clear();
      // The part of the member that made it would be a corrupt tail: cut it (freeing space).
      std::string cut =
          ::ftruncate(fd_, static_cast<off_t>(complete_bytes_)) == 0
              ? ""
              : std::string("; its incomplete last part could not be cut off: ") + std::strerror(errno);
      return fail("cannot write '" + path_ + "': " + std::strerror(why) + " (the trace ends after " +
                  std::to_string(members_) + " complete parts" + cut + ")");
    }
    done += static_cast<size_t>(w);
  }
  gzip_member_span span{.offset = 0, .text_offset = 0, .first_line = 1};
  if (!spans_.empty()) {
    const gzip_member_span& last = spans_.back();
    span = {.offset = last.offset + last.compressed_size,
            .text_offset = last.text_offset + last.text_size,
            .first_line = last.first_line + last.line_count};
  }
  span.compressed_size = n;
  span.text_size = pending_.size();
  // memchr per line: glibc's is vectorized, a byte loop (std::count at -O2) cost 5 % of the
  // tracer's time on a syscall storm.
  for (const char *at = pending_.data(), *end = at + pending_.size();
       (at = static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)))) != nullptr; ++at)
    ++span.line_count;
  spans_.push_back(span);
  pending_.clear();
  complete_bytes_ += n;
  ++members_;
  return {};
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

result<> gzip_member_writer::close()
{
  auto flushed = flush_member();
  if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0 && flushed)
    return fail("cannot close '" + path_ + "': " + std::strerror(errno));
  return flushed;
}

}  // namespace dc
