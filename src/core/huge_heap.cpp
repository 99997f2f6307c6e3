#include "core/huge_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace dc {

namespace {
constexpr uintptr_t huge_page = 2 << 20;
constexpr int max_threshold = 32 << 20;  // glibc's largest mmap threshold on 64-bit machines
// After the scope: where glibc's dynamic thresholds stood once the BTF's blocks (5.5 MB) were
// freed, before this class (a freed mapped block raises the mmap threshold to its size and the
// trim threshold to twice that); setting them ends that adjustment, which a process that loads
// once does not miss. Large buffers of the writer stay on the heap, not a mapping each.
constexpr int after_mmap_threshold = 8 << 20;
constexpr int after_trim_threshold = 16 << 20;
constexpr int default_top_pad = 128 * 1024;
}  // namespace

huge_heap::huge_heap(unsigned pad_mib)
{
  int pad = static_cast<int>(pad_mib) << 20;
  mallopt(M_MMAP_THRESHOLD, max_threshold);
  mallopt(M_TRIM_THRESHOLD, 2 * pad);
  mallopt(M_TOP_PAD, pad);
  auto before = reinterpret_cast<uintptr_t>(sbrk(0));
  // Grows the heap by the pad now, so that the whole pad can be advised at once (volatile: a
  // compiler may drop a malloc whose block is only freed).
  void* volatile grown = malloc(huge_page);
  free(grown);
  auto after = reinterpret_cast<uintptr_t>(sbrk(0));
  uintptr_t start = (before + huge_page - 1) & ~(huge_page - 1), end = after & ~(huge_page - 1);
  if (end > start)
    madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
}

huge_heap::~huge_heap()
{
  mallopt(M_TOP_PAD, default_top_pad);
  mallopt(M_TRIM_THRESHOLD, after_trim_threshold);
  mallopt(M_MMAP_THRESHOLD, after_mmap_threshold);
  malloc_trim(0);
}

}  // namespace dc
