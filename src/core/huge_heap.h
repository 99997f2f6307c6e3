// glibc's heap grown at once and backed by transparent huge pages for a while: libbpf parses the
// kernel's BTF (5.5 MB read, then copied, then indexed) into plain malloc'd memory, and on
// machines where a page fault is dear that was half the parse (docs/performance.md, "The heap
// of the BTF parse").
#pragma once

namespace dc {

// While it lives, glibc's main heap grows by `pad_mib` at a time, keeps what is freed, serves
// blocks up to 32 MiB itself (not by mmap), and the part it grows by now is advised
// MADV_HUGEPAGE; at its end the heap is trimmed and glibc's thresholds are left where its dynamic
// adjustment would have put them after the load (huge_heap.cpp).
// The settings are the process's: other threads' large blocks meanwhile come from their own arenas,
// not mmap, too; only the main heap is grown and advised.
class huge_heap {
 public:
  explicit huge_heap(unsigned pad_mib = 64);
  ~huge_heap();
  huge_heap(const huge_heap&) = delete;
  huge_heap& operator=(const huge_heap&) = delete;
};

}  // namespace dc
