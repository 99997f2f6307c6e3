#include "deploy/signing_service.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "deploy/probe_file.h"

namespace dc {

namespace {

constexpr size_t max_request = 64 << 20;

result<int> unix_socket(const std::string& path, sockaddr_un& addr)
{
  if (path.size() >= sizeof(addr.sun_path))
    return fail("socket path too long: " + path);
  std::memset(&addr, 0, sizeof(addr));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(std::string("socket: ") + std::strerror(errno));
  return fd;
}

bool read_all(int fd, std::string& out)
{
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n == 0)
      return true;
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || out.size() + static_cast<size_t>(n) > max_request)
      return false;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool write_all(int fd, const std::string& data)
{
  for (size_t at = 0; at < data.size();) {
    ssize_t n = write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// Whether uid can read path: asked of the kernel by a child that becomes uid (with its groups).
bool readable_by(uint32_t uid, const std::string& path)
{
  passwd* pw = getpwuid(uid);
  gid_t gid = pw ? pw->pw_gid : uid;
  pid_t child = fork();
  if (child == 0) {
    if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, nullptr)) != 0 || setgid(gid) != 0 ||
        setuid(uid) != 0)
      _exit(2);
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    _exit(fd >= 0 ? 0 : 1);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string answer(uint32_t uid, const std::string& request, const std::string& secret)
{
  auto probes = parse_probe_file_content(request);
  if (!probes)
    return "ERR " + probes.error().message + "\n";
  probes->uid = uid;  // whoever asked, as the kernel says: never the request's own claim
  for (const auto& t : probes->uprobes)
    if (!readable_by(uid, t.binary))
      return "ERR uid " + std::to_string(uid) + " cannot read " + t.binary + "\n";
  auto signed_bytes = sign_probe_file(*probes, secret);
  if (!signed_bytes)
    return "ERR " + signed_bytes.error().message + "\n";
  return "OK\n" + *signed_bytes;
}

}  // namespace

result<> serve_signing(const std::string& socket_path, const std::string& secret)
{
  sockaddr_un addr;
  auto fd = unix_socket(socket_path, addr);
  if (!fd)
    return std::unexpected(fd.error());
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(socket_path).parent_path(), ec);
  ::unlink(socket_path.c_str());
  if (bind(*fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      chmod(socket_path.c_str(), 0666) != 0 || listen(*fd, 16) != 0)
    return fail("cannot listen on " + socket_path + ": " + std::strerror(errno));
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  // Stop signals interrupt accept (no SA_RESTART) and end the loop.
  static volatile sig_atomic_t stopping = 0;
  struct sigaction sa {};
  sa.sa_handler = [](int) { stopping = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  while (!stopping) {
    int conn = accept4(*fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0)
      continue;
    ucred cred{};
    socklen_t len = sizeof(cred);
    std::string request;
    std::string reply = getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0
                            ? "ERR no peer credentials\n"
                        : !read_all(conn, request) ? "ERR unreadable request\n"
                                                   : answer(cred.uid, request, secret);
    write_all(conn, reply);
    close(conn);
  }
  close(*fd);
  ::unlink(socket_path.c_str());
  return {};
}

result<std::string> request_signature(const std::string& socket_path, const std::string& content)
{
  sockaddr_un addr;
  auto fd = unix_socket(socket_path, addr);
  if (!fd)
    return std::unexpected(fd.error());
  if (connect(*fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(*fd);
    return fail("cannot reach the signing service at " + socket_path + ": " + std::strerror(errno));
  }
  std::string reply;
  bool ok = write_all(*fd, content) && shutdown(*fd, SHUT_WR) == 0 && read_all(*fd, reply);
  close(*fd);
  if (!ok)
    return fail("the signing service at " + socket_path + " did not answer");
  if (reply.starts_with("OK\n"))
    return reply.substr(3);
  std::string why = reply.starts_with("ERR ") ? reply.substr(4) : reply;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return fail("the signing service refused: " + why);
}

}  // namespace dc
