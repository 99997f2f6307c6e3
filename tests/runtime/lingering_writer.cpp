// A command that leaves a descendant behind: the child makes WRITES writes to FILE and then
// waits, alive, until killed; the parent exits as soon as the child has written, so a tracer
// stops while the child's last records may still wait in the kernel.
//
// usage: lingering_writer FILE WRITES PIDFILE
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv)
{
  if (argc != 4) {
    std::fprintf(stderr, "usage: lingering_writer FILE WRITES PIDFILE\n");
    return 2;
  }
  int writes = std::atoi(argv[2]);
  int ready[2];
  if (pipe(ready) != 0)
    return 1;
  pid_t child = fork();
  if (child < 0)
    return 1;
  if (child == 0) {
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < writes; ++i)
      if (fd < 0 || write(fd, "x", 1) != 1)
        _exit(1);
    // Only write-family calls without paths since the open: nothing forces them to the ring.
    if (write(ready[1], "r", 1) != 1)
      _exit(1);
    pause();
    _exit(0);
  }
  char c;
  if (read(ready[0], &c, 1) != 1)
    return 1;
  std::string pid = std::to_string(child) + "\n";
  int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || write(out, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size()))
    return 1;
  close(out);
  return 0;
}
