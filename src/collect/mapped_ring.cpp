#include "collect/mapped_ring.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace dc {

result<std::unique_ptr<mapped_ring>> mapped_ring::map(int ring_fd)
{
  std::unique_ptr<mapped_ring> m(new mapped_ring());
  m->ring_ = ring_buffer__new(ring_fd, &mapped_ring::forward, m.get(), nullptr);
  if (!m->ring_)
    return fail(std::string("cannot open the event ring: ") + std::strerror(errno));
  return m;
}

mapped_ring::~mapped_ring()
{
  if (ring_)
    ring_buffer__free(ring_);
}

int mapped_ring::forward(void* self, void* data, size_t size)
{
  auto* m = static_cast<mapped_ring*>(self);
  return m->fn_(m->ctx_, data, size);
}

}  // namespace dc
