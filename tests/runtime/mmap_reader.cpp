// Reads one byte of every page of FILE through a shared read-only mapping and writes what the
// kernel counted for its threads across the loop (getrusage: major and minor faults) to
// RESULT as JSON, with the sum of the bytes (so the reads cannot be optimised away). With
// THREADS, that many threads each read their own contiguous part of the mapping at once (the
// process's RSS counters then change on several CPUs together).
//
// usage: mmap_reader FILE RESULT [THREADS]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv)
{
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: mmap_reader FILE RESULT [THREADS]\n");
    return 2;
  }
  size_t threads = argc == 4 ? std::strtoul(argv[3], nullptr, 10) : 1;
  if (threads < 1 || threads > 64)
    return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
    return 3;
  size_t size = static_cast<size_t>(st.st_size);
  auto* p = static_cast<const volatile unsigned char*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
  if (p == MAP_FAILED)
    return 4;
  // Pages stay where the faults put them (locked as they are faulted in, nothing faulted now):
  // proactive reclaim (this machine's DAMON pages out cold pages) would otherwise unmap some
  // between their fault-around and their touch, and the touch would map them a second time.
  if (mlock2(const_cast<const unsigned char*>(p), size, MLOCK_ONFAULT) != 0)
    return 6;
  long page = sysconf(_SC_PAGESIZE);
  // Each thread counts its own faults across its loop only (RUSAGE_THREAD), so the start of the
  // threads (their stacks) is not counted.
  size_t pages = (size + page - 1) / page, part = (pages + threads - 1) / threads;
  std::vector<unsigned long> sums(threads);
  std::vector<rusage> before(threads), after(threads);
  // The threads fault on the mapping only, all together: none starts before all are ready, and
  // none goes on to exit (whose code faults in pages of libc) before all are done. getrusage's
  // own page of libc is mapped here, first. (Faults on other files at the same moment are the
  // fault layer's documented limit: two folds of the RSS counter at once go to one fault.)
  std::atomic<size_t> ready{0}, done{0};
  rusage warm{};
  getrusage(RUSAGE_THREAD, &warm);
  auto read_part = [&](size_t t) {
    ready.fetch_add(1);
    while (ready.load() < threads) {
    }
    getrusage(RUSAGE_THREAD, &before[t]);
    unsigned long sum = 0;
    for (size_t i = t * part; i < pages && i < (t + 1) * part; ++i) sum += p[i * page];
    getrusage(RUSAGE_THREAD, &after[t]);
    sums[t] = sum;
    done.fetch_add(1);
    while (done.load() < threads) {
    }
  };
  std::vector<std::thread> others;
  for (size_t t = 1; t < threads; ++t) others.emplace_back(read_part, t);
  read_part(0);
  for (auto& t : others) t.join();
  long major = 0, minor = 0;
  unsigned long sum = 0;
  for (size_t t = 0; t < threads; ++t) {
    major += after[t].ru_majflt - before[t].ru_majflt;
    minor += after[t].ru_minflt - before[t].ru_minflt;
    sum += sums[t];
  }
  std::string json = "{\"major\":" + std::to_string(major) + ",\"minor\":" + std::to_string(minor) +
                     ",\"pages\":" + std::to_string(pages) + ",\"sum\":" + std::to_string(sum) + "}\n";
  FILE* out = std::fopen(argv[2], "w");
  if (!out || std::fputs(json.c_str(), out) < 0 || std::fclose(out) != 0)
    return 5;
  return 0;
}
