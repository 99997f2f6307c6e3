// paced_storm: 4 KiB pread(2) calls on a page-cached file at a set rate, for a set time, from a
// set number of threads: a load the tracer must keep up with for as long as it lasts, at a rate
// chosen by the caller (pread_storm runs as fast as it can, which measures the traced call's cost
// instead).
//
// usage: paced_storm FILE CALLS_PER_S SECONDS [THREADS]   (THREADS defaults to 1)
// prints: calls=<n> seconds=<wall> rate=<calls/s> cpu_s=<this process's user+system CPU>
//         behind_ms=<how far behind its schedule the slowest thread ended>
//
// Each thread owes its share of the rate from its start and pays it in 1 ms ticks: it sleeps to
// the next tick (clock_nanosleep, absolute), then makes every call it owes by then. A thread
// that cannot keep up (the traced call costs more than the rate allows, or no CPU is free) falls
// behind, and behind_ms says so: the rate printed is what was done, not what was asked.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK = 4096 };

struct worker {
  pthread_t thread;
  int fd;
  off_t blocks;
  double rate;     // calls per second, this thread's share
  double seconds;  // how long it runs
  unsigned long long calls;
  double behind_ns;
  int failed;
};

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void sleep_until(double t_ns)
{
  struct timespec ts = {(time_t)(t_ns / 1e9), (long)(t_ns - (double)(time_t)(t_ns / 1e9) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static void* run_worker(void* arg)
{
  struct worker* w = arg;
  char buf[BLOCK];
  const double start = now_ns(), end = start + w->seconds * 1e9;
  off_t block = 0;
  for (double tick = start + 1e6;; tick += 1e6) {
    sleep_until(tick < end ? tick : end);
    double t = now_ns();
    if (t > end)
      t = end;
    unsigned long long owed = (unsigned long long)((t - start) * w->rate / 1e9);
    while (w->calls < owed) {
      if (pread(w->fd, buf, BLOCK, block * BLOCK) != BLOCK) {
        w->failed = errno ? errno : EIO;
        return NULL;
      }
      block = (block + 1) % w->blocks;
      w->calls++;
    }
    if (t >= end)
      break;
  }
  // How long after its end the thread paid the last call it owed.
  w->behind_ns = now_ns() - end;
  return NULL;
}

int main(int argc, char** argv)
{
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: %s FILE CALLS_PER_S SECONDS [THREADS]\n", argv[0]);
    return 2;
  }
  double rate = strtod(argv[2], NULL), seconds = strtod(argv[3], NULL);
  long threads = argc == 5 ? strtol(argv[4], NULL, 10) : 1;
  if (!(rate > 0) || !(seconds > 0) || threads < 1 || threads > 256) {
    fprintf(stderr, "paced_storm: CALLS_PER_S and SECONDS must be > 0, THREADS 1-256\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < BLOCK) {
    fprintf(stderr, "paced_storm: %s: %s\n", argv[1], fd < 0 ? strerror(errno) : "smaller than 4 KiB");
    return 1;
  }
  struct worker* workers = calloc((size_t)threads, sizeof(*workers));
  if (!workers)
    return 1;
  char buf[BLOCK];
  for (off_t b = 0; b < st.st_size / BLOCK; b++)  // into the page cache before the clock starts
    if (pread(fd, buf, BLOCK, b * BLOCK) != BLOCK)
      return 1;
  double t0 = now_ns();
  for (long i = 0; i < threads; i++) {
    workers[i] =
        (struct worker){.fd = fd, .blocks = st.st_size / BLOCK, .rate = rate / threads, .seconds = seconds};
    if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0) {
      fprintf(stderr, "paced_storm: cannot start thread %ld\n", i);
      return 1;
    }
  }
  unsigned long long calls = 0;
  double behind = 0;
  int failed = 0;
  for (long i = 0; i < threads; i++) {
    pthread_join(workers[i].thread, NULL);
    calls += workers[i].calls;
    behind = workers[i].behind_ns > behind ? workers[i].behind_ns : behind;
    failed = failed ? failed : workers[i].failed;
  }
  double wall = (now_ns() - t0) / 1e9;
  if (failed) {
    fprintf(stderr, "paced_storm: pread: %s\n", strerror(failed));
    return 1;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  printf("calls=%llu seconds=%.3f rate=%.0f cpu_s=%.3f behind_ms=%.1f\n", calls, wall, (double)calls / wall,
         cpu, behind / 1e6);
  free(workers);
  return 0;
}
