// A batch of ring records on its way from the consumer thread to the formatter, in memory mapped
// for it alone. Heap batches stayed with the process after a burst (a stalled formatter's
// backlog: the soak's RSS rose by its highest burst and never fell); a mapping given back with
// munmap leaves at once. The collector keeps a few spare batches and unmaps the rest.
#pragma once

#include <cstddef>
#include <string_view>

namespace dc {

class record_batch {
 public:
  // A batch is handed over once it holds this many bytes.
  static constexpr size_t fill_bytes = size_t{1} << 20;

  record_batch() = default;
  record_batch(record_batch&& other) noexcept;
  record_batch& operator=(record_batch&& other) noexcept;
  record_batch(const record_batch&) = delete;
  record_batch& operator=(const record_batch&) = delete;
  ~record_batch();

  // Appends one record as decode_batch() reads it: [u32 size][u32 0][record, padded to 8].
  // False, with nothing appended, when no memory could be mapped for it.
  bool append(const void* record, size_t size);
  std::string_view bytes() const { return {data_, size_}; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ >= fill_bytes; }
  void clear() { size_ = 0; }

 private:
  bool reserve(size_t bytes);
  void release();

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace dc
