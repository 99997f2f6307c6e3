// pread_storm: time N 4 KiB pread(2) calls on a page-cached file.
//
// usage: pread_storm FILE [OPS]   (OPS defaults to 1000000)
// prints: ns_per_op=<float> ops=<n>
//
// The file is read once before timing so every pread is a page-cache hit.
// The timed loop contains nothing but pread calls cycling through the
// file's 4 KiB blocks; clock_gettime brackets the whole loop.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK = 4096 };

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv)
{
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s FILE [OPS]\n", argv[0]);
    return 2;
  }
  long ops = 1000000;
  if (argc == 3) {
    char* end = NULL;
    ops = strtol(argv[2], &end, 10);
    if (*argv[2] == '\0' || *end != '\0' || ops <= 0) {
      fprintf(stderr, "pread_storm: bad OPS '%s'\n", argv[2]);
      return 2;
    }
  }

  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "pread_storm: open %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < BLOCK) {
    fprintf(stderr, "pread_storm: %s must be at least %d bytes\n", argv[1], BLOCK);
    return 1;
  }
  long blocks = (long)(st.st_size / BLOCK);

  static char buf[BLOCK];
  // Warm the page cache (and the code path) before timing.
  for (long b = 0; b < blocks; b++) {
    if (pread(fd, buf, BLOCK, (off_t)b * BLOCK) != BLOCK) {
      fprintf(stderr, "pread_storm: warm-up read failed\n");
      return 1;
    }
  }

  long short_reads = 0;
  double t0 = now_ns();
  for (long i = 0; i < ops; i++) {
    if (pread(fd, buf, BLOCK, (off_t)(i % blocks) * BLOCK) != BLOCK)
      short_reads++;
  }
  double t1 = now_ns();

  close(fd);
  if (short_reads != 0) {
    fprintf(stderr, "pread_storm: %ld short or failed reads\n", short_reads);
    return 1;
  }
  printf("ns_per_op=%.1f ops=%ld\n", (t1 - t0) / (double)ops, ops);
  return 0;
}
