#include "collect/record_batch.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace dc {

namespace {
// Room past fill_bytes for the record that fills a batch (the largest ring record is a staged
// group of a few KiB), so a batch is mapped once.
constexpr size_t slack_bytes = size_t{64} << 10;

size_t page_rounded(size_t bytes)
{
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}
}  // namespace

record_batch::record_batch(record_batch&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0))
{
}

record_batch& record_batch::operator=(record_batch&& other) noexcept
{
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

record_batch::~record_batch()
{
  release();
}

void record_batch::release()
{
  if (data_)
    munmap(data_, capacity_);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

bool record_batch::reserve(size_t bytes)
{
  if (bytes <= capacity_)
    return true;
  size_t capacity = page_rounded(bytes < fill_bytes + slack_bytes ? fill_bytes + slack_bytes : bytes);
  void* grown = data_ ? mremap(data_, capacity_, capacity, MREMAP_MAYMOVE)
                      : mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (grown == MAP_FAILED)
    return false;
  data_ = static_cast<char*>(grown);
  capacity_ = capacity;
  return true;
}

bool record_batch::append(const void* record, size_t size)
{
  size_t padded = (size + 7) & ~size_t{7};
  size_t end = size_ + sizeof(uint64_t) + padded;
  if (!reserve(end))
    return false;
  const uint32_t header[2] = {static_cast<uint32_t>(size), 0};
  std::memcpy(data_ + size_, &header, sizeof(header));
  std::memcpy(data_ + size_ + sizeof(header), record, size);
  std::memset(data_ + size_ + sizeof(header) + size, 0, padded - size);
  size_ = end;
  return true;
}

}  // namespace dc
