#include "cli/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
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

result<int> open_directory_beneath(const std::string& root, const std::string& relative)
{
  int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return fail("cannot open the directory '" + root + "': " + std::strerror(errno));
  std::string walked = root;
  for (const auto& part : std::filesystem::path(relative)) {
    std::string name = part.string();
    if (name.empty() || name == ".")
      continue;
    walked += "/" + name;
    int saved = 0;
    int next = -1;
    if (name == "..")
      saved = EPERM;
    else if (::mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST)
      saved = errno;
    else if (next = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); next < 0)
      saved = errno;
    ::close(dir);
    if (saved != 0)
      return fail("cannot use the directory '" + walked + "': " +
                  (saved == ELOOP || saved == ENOTDIR
                       ? std::string("not a directory (a symbolic link is never followed)")
                       : std::strerror(saved)));
    dir = next;
  }
  return dir;
}

}  // namespace dc
