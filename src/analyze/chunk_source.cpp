#include "analyze/chunk_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dc::analyze {

dc::result<chunk_source> chunk_source::open(const std::string& path)
{
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return dc::fail(path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return dc::fail(path + ": not a regular file");
  }
  unsigned char magic[2] = {0, 0};
  bool gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  return chunk_source(fd, static_cast<uint64_t>(st.st_size), gzip);
}

chunk_source::chunk_source(chunk_source&& o) noexcept
    : fd_(o.fd_),
      size_(o.size_),
      gzip_(o.gzip_),
      buf_(std::move(o.buf_)),
      head_(o.head_),
      buf_at_(o.buf_at_),
      piece_start_(o.piece_start_),
      read_to_(o.read_to_),
      scanned_(o.scanned_),
      skipping_(o.skipping_)
{
  o.fd_ = -1;
}

chunk_source::~chunk_source()
{
  if (fd_ >= 0)
    ::close(fd_);
}

bool chunk_source::fill()
{
  if (read_to_ >= size_)
    return false;
  if (head_ > 0) {  // what was cut off goes now: the rest is less than a member, moved once
    buf_.erase(0, head_);
    head_ = 0;
  }
  size_t want = static_cast<size_t>(std::min<uint64_t>(block_bytes, size_ - read_to_));
  size_t old = buf_.size();
  ssize_t got = 0;
  buf_.resize_and_overwrite(old + want, [&](char* p, size_t) {
    got = pread(fd_, p + old, want, static_cast<off_t>(read_to_));
    return got > 0 ? old + static_cast<size_t>(got) : old;
  });
  if (got <= 0) {
    size_ = read_to_;  // shrunk or unreadable: what was read is the file
    return false;
  }
  read_to_ += static_cast<uint64_t>(got);
  return true;
}

// A gzip member header: ID1 ID2, CM = 8 (deflate), FLG with its reserved bits clear.
size_t chunk_source::find_candidate(size_t from) const
{
  const unsigned char* p = reinterpret_cast<const unsigned char*>(buf_.data() + head_);
  size_t n = buf_.size() - head_;
  while (from + 4 <= n) {
    const void* hit = std::memchr(p + from, 0x1f, n - 3 - from);
    if (!hit)
      return std::string::npos;
    size_t at = static_cast<size_t>(static_cast<const unsigned char*>(hit) - p);
    if (p[at + 1] == 0x8b && p[at + 2] == 8 && (p[at + 3] & 0xe0) == 0)
      return at;
    from = at + 1;
  }
  return std::string::npos;
}

void chunk_source::resume_at(uint64_t offset)
{
  offset = std::min(offset, size_);
  if (offset <= piece_start_)
    return;
  if (offset < buf_at_ + window() && offset >= buf_at_) {
    head_ += static_cast<size_t>(offset - buf_at_);
  } else {
    buf_.clear();
    head_ = 0;
    read_to_ = offset;
  }
  buf_at_ = piece_start_ = offset;
  scanned_ = 1;
  skipping_ = false;
}

bool chunk_source::next(chunk_piece& out)
{
  if (!gzip_) {
    if (!fill())
      return false;
    out.what = chunk_piece::kind::text;
    out.start = buf_at_;
    out.end = buf_at_ + buf_.size();
    out.bytes = std::move(buf_);
    buf_.clear();
    buf_at_ = piece_start_ = out.end;
    return true;
  }
  auto emit = [&](uint64_t end, size_t keep_bytes) {
    out.start = piece_start_;
    out.end = end;
    if (skipping_) {
      out.what = chunk_piece::kind::stream_only;
      out.bytes.clear();
    } else {
      out.what = chunk_piece::kind::member;
      out.bytes.assign(buf_, head_, keep_bytes);
    }
    head_ += static_cast<size_t>(end - buf_at_);
    buf_at_ = piece_start_ = end;
    scanned_ = 1;
    skipping_ = false;
  };
  while (true) {
    size_t from = buf_at_ == piece_start_ ? std::max<size_t>(scanned_, 1) : scanned_;
    if (size_t c = find_candidate(from); c != std::string::npos) {
      emit(buf_at_ + c, c);
      return true;
    }
    scanned_ = window() > 3 ? window() - 3 : 0;
    if (!skipping_ && window() > max_member_bytes)
      skipping_ = true;  // too large to inflate whole: the applier streams it
    if (skipping_ && window() > 3) {
      // Keep looking for the next header without keeping the member's bytes.
      size_t drop = window() - 3;
      head_ += drop;
      buf_at_ += drop;
      scanned_ = 0;
    }
    if (!fill()) {
      if (buf_at_ == piece_start_ && window() == 0)
        return false;
      emit(buf_at_ + window(), window());
      return true;
    }
  }
}

}  // namespace dc::analyze
