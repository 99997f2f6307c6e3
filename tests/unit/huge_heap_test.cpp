// core/huge_heap: the heap grows by the pad at once, large blocks come from it (not mmap), its
// new part is eligible for transparent huge pages, and all of that ends with the scope.
#include "core/huge_heap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace dc {
namespace {

constexpr uintptr_t mib = 1 << 20;

uintptr_t heap_top()
{
  return reinterpret_cast<uintptr_t>(sbrk(0));
}

struct mapping {
  std::string name;      // "[heap]" for the brk heap
  std::string eligible;  // its THPeligible value
};

// The mapping in /proc/self/smaps that holds `address`.
mapping mapping_of(uintptr_t address)
{
  std::ifstream smaps("/proc/self/smaps");
  mapping m;
  bool holds = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2) {
      if (holds)
        break;
      holds = from <= address && address < to;
      if (holds && line.find('[') != std::string::npos)
        m.name = line.substr(line.find('['));
    } else if (holds && line.starts_with("THPeligible:")) {
      m.eligible = line.substr(line.find_last_of(" \t") + 1);
    }
  }
  return m;
}

TEST(huge_heap, LargeBlocksComeFromAHeapGrownAtOnceOnHugePagesUntilTheScopeEnds)
{
  uintptr_t before = heap_top();
  {
    huge_heap heap(64);
    uintptr_t grown = heap_top();
    EXPECT_GE(grown - before, 64 * mib) << "the heap did not grow by the pad";
    // A block the size of the kernel's BTF: from the heap, not a mapping of its own.
    void* volatile block = malloc(6 * mib);
    auto at = reinterpret_cast<uintptr_t>(block);
    EXPECT_EQ(mapping_of(at).name, "[heap]") << "a large block was not served from the heap";
    EXPECT_LE(at + 6 * mib, grown);
    std::string thp;
    std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), thp);
    if (thp.find("[never]") == std::string::npos) {  // with THP off there is no huge page to give
      EXPECT_EQ(mapping_of(at + 4 * mib).eligible, "1") << "the grown heap is not advised for huge pages";
    }
    free(block);
    EXPECT_EQ(heap_top(), grown) << "what was freed was trimmed inside the scope";
  }
  EXPECT_LT(heap_top(), before + 64 * mib) << "the heap was not trimmed at the end of the scope";
  // A block larger than any free part of the heap and than the threshold left (8 MiB) is mapped
  // on its own again; inside the scope (up to 32 MiB) it would have come from the heap.
  void* volatile after = malloc(16 * mib);
  EXPECT_NE(mapping_of(reinterpret_cast<uintptr_t>(after)).name, "[heap]")
      << "a 16 MiB block still came from the heap";
  free(after);
}

}  // namespace
}  // namespace dc
