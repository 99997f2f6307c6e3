// soak_load: a mixed I/O workload at a steady rate, for bench/soak.sh to trace for a long time.
//
// usage: soak_load DIR RATE SECONDS
//
// Issues about RATE I/O system calls per second for SECONDS seconds, in rounds of:
//   files:   open(O_CREAT) pwrite pread close unlink on one of 64 names in DIR, with an fsync
//            before the close every 8th round (on a disk an fsync costs milliseconds: one each
//            round would cap the rate near 3,000 calls/s, below what the tracer holds)
//   sockets: send and recv of 256 bytes, twice, over a TCP pair on 127.0.0.1
//   forks:   every 16th round, a child that opens, pwrites and closes one of 64 other names in
//            DIR and exits; the parent reaps it (waitpid)
// Names are reused so that the tracer's per-file tables stay bounded: growth it shows over a
// long run is its own, not the workload's.
// The calls are counted as issued (a child's three counted in the parent) and paced against
// CLOCK_MONOTONIC: after each round the program sleeps until the time the count is due, so a
// slow phase is caught up later and the long-run rate is RATE while the machine keeps up.
// prints at the end: calls=<n> rounds=<n> forks=<n> seconds=<float> calls_per_s=<float>
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK = 4096, MSG = 256, NAMES = 64, FORK_EVERY = 16, FSYNC_EVERY = 8 };

static void fail(const char* what)
{
  fprintf(stderr, "soak_load: %s: %s\n", what, strerror(errno));
  exit(1);
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long parse_positive(const char* text, const char* name)
{
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || v <= 0) {
    fprintf(stderr, "soak_load: %s must be a positive integer, got '%s'\n", name, text);
    exit(2);
  }
  return v;
}

// A connected TCP pair on the loopback: out[0] sends, out[1] receives.
static void tcp_pair(int out[2])
{
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  int lst = socket(AF_INET, SOCK_STREAM, 0);
  if (lst < 0 || bind(lst, (struct sockaddr*)&addr, len) != 0 || listen(lst, 1) != 0 ||
      getsockname(lst, (struct sockaddr*)&addr, &len) != 0)
    fail("listen on 127.0.0.1");
  out[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (out[0] < 0 || connect(out[0], (struct sockaddr*)&addr, len) != 0)
    fail("connect to 127.0.0.1");
  out[1] = accept(lst, NULL, NULL);
  if (out[1] < 0)
    fail("accept");
  int one = 1;
  setsockopt(out[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  close(lst);
}

static long file_round(int dir, long round, char* buf)
{
  char name[32];
  snprintf(name, sizeof name, "f%ld", round % NAMES);
  int fd = openat(dir, name, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    fail("open a scratch file");
  if (pwrite(fd, buf, BLOCK, 0) != BLOCK || pread(fd, buf, BLOCK, 0) != BLOCK)
    fail("pwrite/pread a scratch file");
  long calls = 5;
  if (round % FSYNC_EVERY == 0) {
    if (fsync(fd) != 0)
      fail("fsync a scratch file");
    calls++;
  }
  if (close(fd) != 0 || unlinkat(dir, name, 0) != 0)
    fail("close/unlink a scratch file");
  return calls;
}

static long socket_round(const int pair[2], char* buf)
{
  for (int i = 0; i < 2; i++) {
    if (send(pair[0], buf, MSG, 0) != MSG)
      fail("send");
    for (ssize_t got = 0; got < MSG;) {
      ssize_t n = recv(pair[1], buf + got, (size_t)(MSG - got), 0);
      if (n <= 0)
        fail("recv");
      got += n;
    }
  }
  return 4;
}

static long fork_round(int dir, const char* buf)
{
  pid_t pid = fork();
  if (pid < 0)
    fail("fork");
  if (pid == 0) {
    char name[32];
    snprintf(name, sizeof name, "c%d", (int)(getpid() % NAMES));
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || pwrite(fd, buf, BLOCK, 0) != BLOCK || close(fd) != 0)
      _exit(1);
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("a child's I/O");
  return 4;
}

int main(int argc, char** argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: soak_load DIR RATE SECONDS\n");
    return 2;
  }
  long rate = parse_positive(argv[2], "RATE");
  long seconds = parse_positive(argv[3], "SECONDS");
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
  if (dir < 0)
    fail(argv[1]);
  int pair[2];
  tcp_pair(pair);
  static char buf[BLOCK];
  memset(buf, 'x', sizeof buf);

  long calls = 0, rounds = 0, forks = 0;
  double start = now_s(), end = start + (double)seconds, t = start;
  while (t < end) {
    calls += file_round(dir, rounds, buf);
    calls += socket_round(pair, buf);
    if (rounds % FORK_EVERY == 0) {
      calls += fork_round(dir, buf);
      forks++;
    }
    rounds++;
    double due = start + (double)calls / (double)rate;
    t = now_s();
    if (due > t) {
      struct timespec ts = {.tv_sec = (time_t)(due - t), .tv_nsec = 0};
      ts.tv_nsec = (long)((due - t - (double)ts.tv_sec) * 1e9);
      nanosleep(&ts, NULL);
      t = now_s();
    }
  }
  for (long i = 0; i < NAMES; i++) {
    char name[32];
    snprintf(name, sizeof name, "c%ld", i);
    unlinkat(dir, name, 0);
  }
  double took = now_s() - start;
  printf("calls=%ld rounds=%ld forks=%ld seconds=%.3f calls_per_s=%.1f\n", calls, rounds, forks, took,
         (double)calls / took);
  return 0;
}
