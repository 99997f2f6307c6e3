#include "cli/output_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

namespace dc {

result<pending_file> pending_file::reserve(const std::string& path)
{
  std::string temp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail("cannot create '" + path + "': " + std::strerror(errno));
  return pending_file(path, temp, fd);
}

pending_file::pending_file(pending_file&& o) noexcept
    : path_(std::move(o.path_)), temp_(std::move(o.temp_)), fd_(std::exchange(o.fd_, -1))
{
}

pending_file::~pending_file()
{
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

result<> pending_file::commit(const std::string& content)
{
  for (size_t done = 0; done < content.size();) {
    ssize_t w = ::write(fd_, content.data() + done, content.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return fail("cannot write '" + path_ + "': " + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  if (::close(std::exchange(fd_, -1)) != 0 || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    ::unlink(temp_.c_str());
    return fail("cannot write '" + path_ + "': " + std::strerror(errno));
  }
  return {};
}

std::string default_trace_path(const std::string& command)
{
  std::string base = std::filesystem::path(command).filename().string();
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return "datacrumbs-" + base + "-" + stamp + "-" + std::to_string(getpid()) + ".pfw.gz";
}

}  // namespace dc
