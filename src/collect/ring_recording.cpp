#include "collect/ring_recording.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "collect/decoder.h"

namespace dc {

namespace {

constexpr std::string_view magic = "DCRING01";

bool write_all(int fd, const void* data, size_t size)
{
  const char* p = static_cast<const char*>(data);
  for (size_t done = 0; done < size;) {
    ssize_t w = ::write(fd, p + done, size - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

void decode_batch(decoder& dec, std::string_view batch)
{
  for (size_t at = 0; at + sizeof(uint64_t) <= batch.size();) {
    uint32_t len;
    std::memcpy(&len, batch.data() + at, sizeof(len));
    if (len > batch.size() - at - sizeof(uint64_t))
      break;  // only a damaged recording gets here: the collector builds batches whole
    dec.decode(batch.data() + at + sizeof(uint64_t), len);
    at += sizeof(uint64_t) + ((len + 7) & ~size_t{7});
  }
}

result<ring_recorder> ring_recorder::from_environment()
{
  ring_recorder r;
  const char* path = std::getenv("DATACRUMBS_RECORD_RING");
  if (!path || !*path)
    return r;
  r.path_ = path;
  r.fd_ = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (r.fd_ < 0)
    return fail("DATACRUMBS_RECORD_RING: cannot create '" + r.path_ + "': " + std::strerror(errno));
  if (!write_all(r.fd_, magic.data(), magic.size()))
    return fail("DATACRUMBS_RECORD_RING: cannot write '" + r.path_ + "': " + std::strerror(errno));
  return r;
}

ring_recorder::ring_recorder(ring_recorder&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), trouble_(std::move(o.trouble_))
{
}

ring_recorder& ring_recorder::operator=(ring_recorder&& o) noexcept
{
  std::swap(fd_, o.fd_);
  std::swap(path_, o.path_);
  std::swap(trouble_, o.trouble_);
  return *this;
}

ring_recorder::~ring_recorder()
{
  if (fd_ >= 0)
    ::close(fd_);
}

void ring_recorder::append(std::string_view batch)
{
  if (fd_ < 0 || batch.empty())
    return;
  uint64_t size = batch.size();
  if (!write_all(fd_, &size, sizeof(size)) || !write_all(fd_, batch.data(), batch.size())) {
    trouble_ = "DATACRUMBS_RECORD_RING: cannot write '" + path_ + "': " + std::strerror(errno);
    ::close(std::exchange(fd_, -1));
  }
}

result<std::vector<std::string>> read_ring_recording(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail("cannot read the ring recording '" + path + "'");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!std::string_view(data).starts_with(magic))
    return fail("'" + path + "' is not a ring recording (DATACRUMBS_RECORD_RING)");
  std::vector<std::string> batches;
  for (size_t at = magic.size(); at < data.size();) {
    uint64_t size = 0;
    if (data.size() - at < sizeof(size))
      return fail("the ring recording '" + path + "' ends inside a batch");
    std::memcpy(&size, data.data() + at, sizeof(size));
    at += sizeof(size);
    if (size > data.size() - at)
      return fail("the ring recording '" + path + "' ends inside a batch");
    batches.emplace_back(data, at, size);
    at += size;
  }
  return batches;
}

}  // namespace dc
