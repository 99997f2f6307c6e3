/* Each system call that moves data between two files, with known sizes, for the tracer's
 * per-file counts to be checked against (tests/runtime/two_file_test.cpp):
 *   two_file_calls DIR
 * reads DIR/cfr.in, DIR/sf.in, DIR/sock.in and DIR/splice.in (made by the test) and
 *   - copy_file_range: cfr.in -> cfr.out
 *   - sendfile: sf.in -> sf.out (file to file), sock.in -> a UNIX socket (a thread drains it)
 *   - splice: splice.in -> a pipe -> splice.out
 *   - tee: TEE_BYTES written into pipe 1, tee'd into pipe 2 (both drained with read)
 *   - vmsplice: VMSPLICE_BYTES of user memory into a pipe (drained with read)
 * Each step prints "STEP BYTES RCHAR WCHAR": the bytes the step moved (splice: into the pipe), and what
 * /proc/self/io's rchar and wchar grew by over the calls alone (the kernel's own count). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define TEE_BYTES 12288
#define VMSPLICE_BYTES 8192
#define STEPS 6

struct io_counts {
  long long rchar, wchar;
};

/* rchar and wchar now; `after_this`: once this read of /proc/self/io is counted too (it is counted
 * when the read returns, after the text was made), for the start of a step. */
static struct io_counts read_io(int fd, int after_this)
{
  char buf[512];
  struct io_counts c = {-1, -1};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0)
    return c;
  buf[n] = 0;
  char* at = strstr(buf, "rchar:");
  if (at)
    c.rchar = atoll(at + 6) + (after_this ? n : 0);
  at = strstr(buf, "wchar:");
  if (at)
    c.wchar = atoll(at + 6);
  return c;
}

static void die(const char* what)
{
  fprintf(stderr, "two_file_calls: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int open_or_die(const char* dir, const char* name, int flags)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int fd = open(path, flags, 0644);
  if (fd < 0)
    die(path);
  return fd;
}

static long long file_size(int fd)
{
  off_t end = lseek(fd, 0, SEEK_END);
  lseek(fd, 0, SEEK_SET);
  return end;
}

static void* drain(void* arg)
{
  int fd = *(int*)arg;
  char buf[65536];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
  return NULL;
}

static void drain_pipe(int fd, long long bytes)
{
  char buf[65536];
  while (bytes > 0) {
    ssize_t n = read(fd, buf, sizeof(buf) < (size_t)bytes ? sizeof(buf) : (size_t)bytes);
    if (n <= 0)
      die("read pipe");
    bytes -= n;
  }
}

struct step {
  const char* name;
  long long bytes;
  struct io_counts before, after;
};

int main(int argc, char** argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: two_file_calls DIR\n");
    return 2;
  }
  const char* dir = argv[1];
  int io = open("/proc/self/io", O_RDONLY);
  if (io < 0)
    die("/proc/self/io");
  struct step steps[STEPS] = {
      {.name = "copy_file_range"}, {.name = "sendfile_file"}, {.name = "sendfile_socket"},
      {.name = "splice"},          {.name = "tee"},           {.name = "vmsplice"}};
  struct step* s = steps;

  int in = open_or_die(dir, "cfr.in", O_RDONLY),
      out = open_or_die(dir, "cfr.out", O_WRONLY | O_CREAT | O_TRUNC);
  long long left = file_size(in);
  s->before = read_io(io, 1);
  while (left > 0) {
    ssize_t n = copy_file_range(in, NULL, out, NULL, left, 0);
    if (n <= 0)
      die("copy_file_range");
    left -= n;
    s->bytes += n;
  }
  s->after = read_io(io, 0);
  close(in);
  close(out);

  s++;
  in = open_or_die(dir, "sf.in", O_RDONLY);
  out = open_or_die(dir, "sf.out", O_WRONLY | O_CREAT | O_TRUNC);
  left = file_size(in);
  s->before = read_io(io, 1);
  while (left > 0) {
    ssize_t n = sendfile(out, in, NULL, left);
    if (n <= 0)
      die("sendfile to a file");
    left -= n;
    s->bytes += n;
  }
  s->after = read_io(io, 0);
  close(in);
  close(out);

  s++;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    die("socketpair");
  pthread_t reader;
  if (pthread_create(&reader, NULL, drain, &sv[1]) != 0)
    die("pthread_create");
  in = open_or_die(dir, "sock.in", O_RDONLY);
  left = file_size(in);
  s->before = read_io(io, 1);
  while (left > 0) {
    ssize_t n = sendfile(sv[0], in, NULL, left);
    if (n <= 0)
      die("sendfile to a socket");
    left -= n;
    s->bytes += n;
  }
  s->after = read_io(io, 0); /* the reader's reads are the process's too: rchar is not compared */
  close(sv[0]);
  pthread_join(reader, NULL);
  close(sv[1]);
  close(in);

  s++;
  int p[2];
  if (pipe(p) != 0)
    die("pipe");
  in = open_or_die(dir, "splice.in", O_RDONLY);
  out = open_or_die(dir, "splice.out", O_WRONLY | O_CREAT | O_TRUNC);
  left = file_size(in);
  s->before = read_io(io, 1);
  while (left > 0) {
    ssize_t n = splice(in, NULL, p[1], NULL, left, 0);
    if (n <= 0)
      die("splice from a file");
    left -= n;
    s->bytes += n;
    for (ssize_t moved = 0; moved < n;) {
      ssize_t m = splice(p[0], NULL, out, NULL, n - moved, 0);
      if (m <= 0)
        die("splice to a file");
      moved += m;
    }
  }
  s->after = read_io(io, 0);
  close(in);
  close(out);

  s++;
  int q[2];
  if (pipe(q) != 0)
    die("pipe");
  static char buf[TEE_BYTES > VMSPLICE_BYTES ? TEE_BYTES : VMSPLICE_BYTES];
  memset(buf, 'x', sizeof(buf));
  if (write(p[1], buf, TEE_BYTES) != TEE_BYTES)
    die("write pipe");
  s->before = read_io(io, 1);
  for (long long moved = 0; moved < TEE_BYTES;) {
    ssize_t n = tee(p[0], q[1], TEE_BYTES - moved, 0);
    if (n <= 0)
      die("tee");
    moved += n;
    s->bytes += n;
  }
  s->after = read_io(io, 0);
  drain_pipe(p[0], TEE_BYTES);
  drain_pipe(q[0], TEE_BYTES);

  s++;
  s->before = read_io(io, 1);
  for (long long moved = 0; moved < VMSPLICE_BYTES;) {
    struct iovec iov = {buf + moved, VMSPLICE_BYTES - moved};
    ssize_t n = vmsplice(p[1], &iov, 1, 0);
    if (n <= 0)
      die("vmsplice");
    moved += n;
    s->bytes += n;
  }
  s->after = read_io(io, 0);
  drain_pipe(p[0], VMSPLICE_BYTES);

  for (int i = 0; i < STEPS; i++)
    printf("%s %lld %lld %lld\n", steps[i].name, steps[i].bytes, steps[i].after.rchar - steps[i].before.rchar,
           steps[i].after.wchar - steps[i].before.wchar);
  return 0;
}
