#include "collect/heap_report.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dc {

result<heap_report> heap_report::from_environment()
{
  heap_report r;
  const char* path = std::getenv("DATACRUMBS_MALLOC_INFO");
  if (!path || !*path)
    return r;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(std::string("DATACRUMBS_MALLOC_INFO: cannot create '") + path + "': " + std::strerror(errno));
  r.file_.reset(::fdopen(fd, "w"));
  if (!r.file_) {
    ::close(fd);
    return fail(std::string("DATACRUMBS_MALLOC_INFO: cannot open '") + path + "': " + std::strerror(errno));
  }
  return r;
}

void heap_report::sample()
{
  if (!file_)
    return;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - opened_);
  std::fprintf(file_.get(), "<sample ms=\"%lld\">\n", static_cast<long long>(ms.count()));
  ::malloc_info(0, file_.get());
  std::fputs("</sample>\n", file_.get());
  std::fflush(file_.get());
}

}  // namespace dc
