// The event ring mapped for reading before its reader exists. The kernel maps all of a BPF
// ring's pages when it is mmap'ed (a 64 MiB ring: its 16,384 data pages twice, 5-8 ms here), so
// run mode maps it beside the layers' attach instead of on the way to the command's exec; the
// collector names itself the reader (serve) before it consumes the first record.
#pragma once

#include <cstddef>
#include <memory>

#include "core/result.h"

struct ring_buffer;

namespace dc {

class mapped_ring {
 public:
  using on_record_fn = int (*)(void* ctx, void* data, size_t size);

  static result<std::unique_ptr<mapped_ring>> map(int ring_fd);
  ~mapped_ring();
  mapped_ring(const mapped_ring&) = delete;
  mapped_ring& operator=(const mapped_ring&) = delete;

  // Where records go from now on; call before the first consume.
  void serve(on_record_fn fn, void* ctx)
  {
    fn_ = fn;
    ctx_ = ctx;
  }
  ring_buffer* get() const { return ring_; }

 private:
  mapped_ring() = default;
  static int forward(void* self, void* data, size_t size);

  ring_buffer* ring_ = nullptr;
  on_record_fn fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace dc
