// A file descriptor closed when its owner goes: for the descriptors a function or a builder
// holds while it works (a trace read again, an index's directory and temporary file).
#pragma once

#include <unistd.h>

namespace dc {

struct fd_closer {
  int fd;
  ~fd_closer()
  {
    if (fd >= 0)
      ::close(fd);
  }
};

}  // namespace dc
