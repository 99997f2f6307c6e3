/* A controlled POSIX workload whose Darshan counters are known in advance (the runtime test
 * states them): sequential, consecutive, strided and random reads and writes of known sizes,
 * seeks, stats, an mmap, fsync and fdatasync, a dup, and appends. Usage: darshan_workload DIR
 * (an absolute directory). Exits non-zero if any call fails, so a wrong count is never the
 * workload's fault. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void check(int ok, const char* what)
{
  if (!ok) {
    perror(what);
    exit(1);
  }
}

static void write_all(int fd, const char* buf, size_t n)
{
  check(write(fd, buf, n) == (ssize_t)n, "write");
}

int main(int argc, char** argv)
{
  check(argc == 2 && argv[1][0] == '/', "usage: darshan_workload ABSOLUTE_DIR");
  static char buf[4096];
  memset(buf, 'x', sizeof(buf));
  char path[4096], append_path[4096];
  snprintf(path, sizeof(path), "%s/counters.dat", argv[1]);
  snprintf(append_path, sizeof(append_path), "%s/append.dat", argv[1]);

  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  check(fd >= 0, "open");
  for (int i = 0; i < 4; ++i) write_all(fd, buf, 4096); /* sequential, consecutive: 0..16383 */
  check(fsync(fd) == 0, "fsync");
  check(lseek(fd, 0, SEEK_SET) == 0, "lseek");
  for (int i = 0; i < 4; ++i) check(read(fd, buf, 1000) == 1000, "read"); /* 0, 1000, 2000, 3000 */
  static const off_t strided[] = {8000, 9000, 10000};
  for (int i = 0; i < 3; ++i) check(pread(fd, buf, 100, strided[i]) == 100, "pread strided");
  static const off_t scattered[] = {12000, 2000, 14000};
  for (int i = 0; i < 3; ++i) check(pread(fd, buf, 512, scattered[i]) == 512, "pread random");
  check(pwrite(fd, buf, 100, 20000) == 100, "pwrite");
  check(fdatasync(fd) == 0, "fdatasync");
  struct stat st;
  check(syscall(SYS_fstat, fd, &st) == 0, "fstat");
  void* map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  check(map != MAP_FAILED, "mmap");
  check(munmap(map, 4096) == 0, "munmap");
  int fd2 = dup(fd);
  check(fd2 >= 0, "dup");
  check(read(fd2, buf, 10) == 10, "read through the dup"); /* the shared position: 4000 */
  check(close(fd2) == 0, "close dup");
  check(close(fd) == 0, "close");
  check(stat(path, &st) == 0 && st.st_size == 20100, "stat");

  int afd = open(append_path, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
  check(afd >= 0, "open append");
  for (int i = 0; i < 3; ++i) write_all(afd, buf, 50);
  check(close(afd) == 0, "close append");
  return 0;
}
