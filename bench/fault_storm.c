// fault_storm: time page faults on a page-cached file: ROUNDS times, map FILE shared and
// read-only, read one byte of every page, unmap.
//
// usage: fault_storm FILE [ROUNDS]   (ROUNDS defaults to 20)
// prints: ns_per_page=<float> pages=<n> faults=<n>
//
// The file is read once before timing so every fault is a minor one (fault-around and whole
// large folios map many pages per fault: `faults` is what getrusage counted).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv)
{
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: fault_storm FILE [ROUNDS]\n");
    return 2;
  }
  long rounds = argc == 3 ? strtol(argv[2], NULL, 10) : 20;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (rounds <= 0 || fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    fprintf(stderr, "fault_storm: cannot use %s\n", argv[1]);
    return 2;
  }
  size_t size = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE);
  static char buf[1 << 20];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
  unsigned long sum = 0, pages = 0;
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  double start = now_ns();
  for (long r = 0; r < rounds; r++) {
    const volatile unsigned char* p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      perror("fault_storm: mmap");
      return 1;
    }
    for (size_t off = 0; off < size; off += page, pages++) sum += p[off];
    munmap((void*)p, size);
  }
  double ns = now_ns() - start;
  getrusage(RUSAGE_SELF, &after);
  printf("ns_per_page=%.1f pages=%lu faults=%ld sum=%lu\n", ns / (double)pages, pages,
         (after.ru_minflt - before.ru_minflt) + (after.ru_majflt - before.ru_majflt), sum);
  return 0;
}
