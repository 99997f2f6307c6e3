/* Processes that end badly or come and go fast, each with a known number of I/O calls, for the
 * tracer's attribution and counts to be checked against (tests/runtime/storm_test.cpp):
 *   storm_workload segv FILE N          N one-byte preads of FILE, then a write through NULL
 *   storm_workload threads FILE T N HOW T threads (main included) each make N preads of FILE of
 *                                       size index+1 at offset index and print "tid INDEX TID";
 *                                       then HOW=group: the others block in a read of a pipe and
 *                                       the main thread, once they all are in it, calls
 *                                       exit_group(3); HOW=exit: every
 *                                       thread calls the exit system call (the process ends 0)
 *   storm_workload exec FILE G MAX DIR  generation G: G+1 preads of FILE (one byte, offset G),
 *                                       then, below MAX, exec of DIR/gen_<(G+1)%3> (links to
 *                                       this program, so the command name changes) with G+1
 *   storm_workload fork FILE N HOW      N children, at most 16 at a time; each makes one open, a
 *                                       one-byte pread and a close of FILE and _exit(0)s (HOW=io)
 *                                       or execs this program as "child FILE" which does the
 *                                       same and returns 0 (HOW=exec)
 *   storm_workload flood FILE N DIR     writes DIR/ready, waits for DIR/start, then forks N
 *                                       children as fast as it can (each does what a fork
 *                                       storm's io child does), reaping as it goes; once all are
 *                                       reaped, writes the number that did not exit 0 to
 *                                       DIR/stormed, waits for DIR/go and returns 0 if none
 *   storm_workload reuse DIR            forks a child that opens DIR/traced_1 and exits; writes
 *                                       its pid to DIR/old.pid; waits for DIR/go; then gets that
 *                                       pid again for a new child (ns_last_pid) which opens
 *                                       DIR/traced_2 (fopen); writes "got PID" to DIR/again (pid 0: not
 *                                       obtained in 50 tries)
 *   storm_workload collide DIR STRIDE   forks child A (waits on a pipe), then child B whose pid is
 *                                       A's +- STRIDE (ns_last_pid; the two share a slot of the
 *                                       traced set's filter), waiting too; lets A exit and reaps it,
 *                                       then lets B open DIR/collided and make 7 one-byte writes;
 *                                       writes B's pid to DIR/collide (0: not obtained in 50
 *                                       tries) */
#define _GNU_SOURCE
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char* g_file;
static int g_count;
static pthread_barrier_t g_barrier;
static int g_block[2];
static int g_exit_syscall;
static int g_threads;
static pid_t g_tids[64];

static void die(const char* what)
{
  perror(what);
  exit(100);
}

static void preads(int fd, int n, size_t size, off_t offset)
{
  char buf[256];
  for (int i = 0; i < n; ++i)
    if (pread(fd, buf, size, offset) != (ssize_t)size)
      die("pread");
}

static int open_file(void)
{
  int fd = open(g_file, O_RDONLY);
  if (fd < 0)
    die(g_file);
  return fd;
}

/* Until thread `tid` is in its read of the pipe (system call 0 on its descriptor), so that
 * exit_group interrupts every other thread mid-call. */
static void wait_in_read(pid_t tid)
{
  char path[64], text[256], expect[32];
  snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
  snprintf(expect, sizeof(expect), "0 0x%x ", g_block[0]);
  struct timespec ms = {0, 1000000};
  for (;;) {
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
    if (fd >= 0)
      close(fd);
    if (n > 0 && (text[n] = 0, strncmp(text, expect, strlen(expect)) == 0))
      return;
    nanosleep(&ms, NULL);
  }
}

static void* thread_main(void* arg)
{
  long index = (long)arg;
  int fd = open_file();
  preads(fd, g_count, (size_t)index + 1, index);
  printf("tid %ld %ld\n", index, (long)gettid());
  fflush(stdout);
  g_tids[index] = gettid();
  pthread_barrier_wait(&g_barrier);
  if (g_exit_syscall)
    syscall(SYS_exit, 0);
  if (index != 0) {
    char c;
    (void)!read(g_block[0], &c, 1); /* never returns: nothing is written */
    return NULL;
  }
  for (int i = 1; i < g_threads; ++i) wait_in_read(g_tids[i]);
  syscall(SYS_exit_group, 3);
  return NULL;
}

static int threads(int count)
{
  pthread_t t[64];
  if (count > 64 || pipe(g_block) != 0)
    die("threads");
  g_threads = count;
  pthread_barrier_init(&g_barrier, NULL, (unsigned)count);
  for (long i = 1; i < count; ++i)
    if (pthread_create(&t[i], NULL, thread_main, (void*)i) != 0)
      die("pthread_create");
  thread_main((void*)0);
  return 0;
}

static void child_io(void)
{
  int fd = open_file();
  preads(fd, 1, 1, 0);
  close(fd);
}

static int fork_storm(const char* self, int n, int exec_children)
{
  int running = 0;
  for (int i = 0; i < n; ++i) {
    if (running == 16) {
      if (wait(NULL) < 0)
        die("wait");
      --running;
    }
    pid_t pid = fork();
    if (pid < 0)
      die("fork");
    if (pid == 0) {
      if (exec_children)
        execl(self, "child", g_file, (char*)NULL);
      else
        child_io();
      _exit(exec_children ? 101 : 0);
    }
    ++running;
  }
  for (; running > 0; --running)
    if (wait(NULL) < 0)
      die("wait");
  return 0;
}

static void write_text(const char* dir, const char* name, long value)
{
  char path[4096], tmp[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  if (!f || fprintf(f, "%ld\n", value) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
    die(path);
}

static void wait_for_file(const char* dir, const char* name)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  struct timespec ms = {0, 1000000};
  while (access(path, F_OK) != 0) nanosleep(&ms, NULL);
}

/* Children of a status other than 0. */
static int bad_status(int status)
{
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* Forks without waiting for the children between forks: with user-space probes each new child
 * is held until its probes attach, so the holds pile up faster than the tracer takes them and
 * fill its hold ring; the children it continues then exit while the ring is still full. */
static int flood(int n, const char* dir)
{
  write_text(dir, "ready", (long)getpid());
  wait_for_file(dir, "start");
  int running = 0, bad = 0, status;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid < 0)
      die("fork");
    if (pid == 0) {
      child_io();
      _exit(0);
    }
    ++running;
    while (waitpid(-1, &status, WNOHANG) > 0) {
      --running;
      bad += bad_status(status);
    }
  }
  for (; running > 0; --running) {
    if (wait(&status) < 0)
      die("wait");
    bad += bad_status(status);
  }
  write_text(dir, "stormed", bad);
  wait_for_file(dir, "go");
  return bad ? 1 : 0;
}

/* The next fork gets pid `want` if it is free and no other process forks first (ns_last_pid). */
static void next_pid_is(pid_t want)
{
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
  char text[32];
  int len = snprintf(text, sizeof(text), "%d", want - 1);
  if (fd < 0 || write(fd, text, (size_t)len) != len)
    die("ns_last_pid");
  close(fd);
}

/* Forks a child that opens DIR/NAME if its pid is `want` (any pid when want is 0); returns the
 * child's pid once it has exited, or 0 when it did not get `want`. */
static pid_t child_opening(const char* dir, const char* name, pid_t want)
{
  if (want)
    next_pid_is(want);
  pid_t pid = fork();
  if (pid < 0)
    die("fork");
  if (pid == 0) {
    if (want && getpid() != want)
      _exit(0);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE* f = fopen(path, "w"); /* stdio: the user-space probes of the pid must be there */
    _exit(f && fclose(f) == 0 ? 0 : 100);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("child");
  return !want || pid == want ? pid : 0;
}

static int reuse(const char* dir)
{
  pid_t old = child_opening(dir, "traced_1", 0);
  write_text(dir, "old.pid", old);
  wait_for_file(dir, "go");
  pid_t again = 0;
  for (int i = 0; i < 50 && !again; ++i) again = child_opening(dir, "traced_2", old);
  write_text(dir, "again", again);
  return 0;
}

/* A child (with pid `want`, when it is not 0 and free) that waits until `gate` closes, then, if
 * it got `want` and `dir` is given, opens DIR/collided and writes 7 bytes one at a time. It
 * closes `other_gate` (an earlier child's, when not -1). Returns its pid. */
static pid_t waiting_child(int* gate, const char* dir, pid_t want, int other_gate)
{
  if (pipe(gate) != 0)
    die("pipe");
  if (want)
    next_pid_is(want);
  pid_t pid = fork();
  if (pid < 0)
    die("fork");
  if (pid == 0) {
    close(gate[1]);
    if (other_gate >= 0) /* the other child's gate must close when the parent closes it */
      close(other_gate);
    char c;
    while (read(gate[0], &c, 1) > 0) {
    }
    if (!dir || (want && getpid() != want))
      _exit(0);
    char path[4096];
    snprintf(path, sizeof(path), "%s/collided", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; fd >= 0 && i < 7; ++i)
      if (write(fd, "x", 1) != 1)
        _exit(1);
    _exit(fd >= 0 && close(fd) == 0 ? 0 : 1);
  }
  close(gate[0]);
  return pid;
}

static void let_go(int* gate, pid_t pid)
{
  close(gate[1]);
  int status;
  if (waitpid(pid, &status, 0) != pid || bad_status(status))
    die("child");
}

static int collide(const char* dir, pid_t stride)
{
  int gate_a[2], gate_b[2];
  FILE* f = fopen("/proc/sys/kernel/pid_max", "r");
  long pid_max = 0;
  if (!f || fscanf(f, "%ld", &pid_max) != 1)
    die("pid_max");
  fclose(f);
  pid_t b = 0;
  /* A new A each try: its partner pid may be held by another process, or be none (A's pid just
   * above STRIDE, whose partners are below 300 or past pid_max); after the first, A is asked
   * for a pid low enough that its partner is above it, each time another. */
  for (int i = 0; i < 50 && !b; ++i) {
    pid_t a = waiting_child(gate_a, NULL, i ? 301 + i * 97 : 0, -1);
    pid_t want = a + stride < pid_max ? a + stride : a - stride; /* pids below 300 are not reused */
    if (want > 300) {
      pid_t got = waiting_child(gate_b, dir, want, gate_a[1]);
      if (got == want)
        b = got;
      else /* another process took the pid first: this child exits without I/O */
        let_go(gate_b, got);
    }
    let_go(gate_a, a);
  }
  if (b)
    let_go(gate_b, b);
  write_text(dir, "collide", b);
  return 0;
}

int main(int argc, char** argv)
{
  if (argc == 2 && strcmp(argv[0], "child") == 0) {
    g_file = argv[1];
    child_io();
    return 0;
  }
  if (argc < 3)
    return 2;
  g_file = argv[2];
  if (strcmp(argv[1], "segv") == 0 && argc == 4) {
    int fd = open_file();
    preads(fd, atoi(argv[3]), 1, 0);
    *(volatile int*)NULL = 1;
    return 0;
  }
  if (strcmp(argv[1], "threads") == 0 && argc == 6) {
    g_count = atoi(argv[4]);
    g_exit_syscall = strcmp(argv[5], "exit") == 0;
    return threads(atoi(argv[3]));
  }
  if (strcmp(argv[1], "exec") == 0 && argc == 6) {
    int generation = atoi(argv[3]), max = atoi(argv[4]);
    int fd = open_file();
    preads(fd, generation + 1, 1, generation);
    close(fd);
    if (generation >= max)
      return 0;
    char next[4096], gen[16];
    snprintf(next, sizeof(next), "%s/gen_%d", argv[5], (generation + 1) % 3);
    snprintf(gen, sizeof(gen), "%d", generation + 1);
    execl(next, next, "exec", g_file, gen, argv[4], argv[5], (char*)NULL);
    die(next);
  }
  if (strcmp(argv[1], "fork") == 0 && argc == 5)
    return fork_storm("/proc/self/exe", atoi(argv[3]), strcmp(argv[4], "exec") == 0);
  if (strcmp(argv[1], "flood") == 0 && argc == 5)
    return flood(atoi(argv[3]), argv[4]);
  if (strcmp(argv[1], "reuse") == 0)
    return reuse(argv[2]);
  if (strcmp(argv[1], "collide") == 0 && argc == 4)
    return collide(argv[2], atoi(argv[3]));
  return 2;
}
