// Reads one byte of every page of FILE through a shared read-only mapping and writes what the
// kernel counted for this process across the loop (getrusage: major and minor faults) to
// RESULT as JSON, with the sum of the bytes (so the reads cannot be optimised away).
//
// usage: mmap_reader FILE RESULT
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv)
{
  if (argc != 3) {
    std::fprintf(stderr, "usage: mmap_reader FILE RESULT\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
    return 3;
  size_t size = static_cast<size_t>(st.st_size);
  auto* p = static_cast<const volatile unsigned char*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
  if (p == MAP_FAILED)
    return 4;
  long page = sysconf(_SC_PAGESIZE);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  unsigned long sum = 0;
  for (size_t off = 0; off < size; off += static_cast<size_t>(page)) sum += p[off];
  getrusage(RUSAGE_SELF, &after);
  std::string json = "{\"major\":" + std::to_string(after.ru_majflt - before.ru_majflt) +
                     ",\"minor\":" + std::to_string(after.ru_minflt - before.ru_minflt) +
                     ",\"pages\":" + std::to_string((size + page - 1) / page) +
                     ",\"sum\":" + std::to_string(sum) + "}\n";
  FILE* out = std::fopen(argv[2], "w");
  if (!out || std::fputs(json.c_str(), out) < 0 || std::fclose(out) != 0)
    return 5;
  return 0;
}
