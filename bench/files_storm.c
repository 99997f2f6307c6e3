// files_storm: time N open(2)+close(2) pairs cycling through FILES files that already exist.
//
// usage: files_storm DIR FILES OPS      (DIR holds f0000000 ... made by `files_storm DIR FILES 0`)
// prints: ns_per_op=<float> ops=<n> files=<n>
//
// With OPS 0 it makes the files and times nothing. Every open names another file until the
// files are used up, then starts again: with many files each interval of a profile sees a new
// counter per file and operation (the case a per-file counter map must hold).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long number(const char* s, const char* what)
{
  char* end = NULL;
  long n = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < 0) {
    fprintf(stderr, "files_storm: bad %s '%s'\n", what, s);
    exit(2);
  }
  return n;
}

int main(int argc, char** argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: %s DIR FILES OPS\n", argv[0]);
    return 2;
  }
  long files = number(argv[2], "FILES"), ops = number(argv[3], "OPS");
  if (files == 0) {
    fprintf(stderr, "files_storm: FILES must be positive\n");
    return 2;
  }
  char path[4096];
  if (ops == 0) {
    for (long i = 0; i < files; i++) {
      snprintf(path, sizeof(path), "%s/f%07ld", argv[1], i);
      int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0) {
        fprintf(stderr, "files_storm: cannot make %s: %s\n", path, strerror(errno));
        return 1;
      }
      close(fd);
    }
    return 0;
  }
  double t0 = now_ns();
  for (long i = 0; i < ops; i++) {
    snprintf(path, sizeof(path), "%s/f%07ld", argv[1], i % files);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      fprintf(stderr, "files_storm: cannot open %s: %s\n", path, strerror(errno));
      return 1;
    }
    close(fd);
  }
  double t1 = now_ns();
  printf("ns_per_op=%.1f ops=%ld files=%ld\n", (t1 - t0) / (double)ops, ops, files);
  return 0;
}
