// A loopback TCP exchange whose byte counts are known: a forked server receives N bytes and
// sends N back; the client sends N and receives N. Prints "client=PID server=PID".
//
// usage: tcp_pair BYTES
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

bool send_all(int fd, size_t n)
{
  std::vector<char> buf(64 * 1024, 'x');
  while (n > 0) {
    ssize_t w = send(fd, buf.data(), n < buf.size() ? n : buf.size(), 0);
    if (w <= 0)
      return false;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool recv_all(int fd, size_t n)
{
  std::vector<char> buf(64 * 1024);
  while (n > 0) {
    ssize_t r = recv(fd, buf.data(), n < buf.size() ? n : buf.size(), 0);
    if (r <= 0)
      return false;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 2)
    return 2;
  size_t bytes = std::strtoull(argv[1], nullptr, 10);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 3;
  pid_t server = fork();
  if (server == 0) {
    int c = accept(listener, nullptr, nullptr);
    bool ok = c >= 0 && recv_all(c, bytes) && send_all(c, bytes);
    close(c);
    _exit(ok ? 0 : 4);
  }
  close(listener);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return 5;
  bool ok = send_all(s, bytes) && recv_all(s, bytes);
  close(s);
  int status = 0;
  waitpid(server, &status, 0);
  std::printf("client=%d server=%d\n", getpid(), server);
  return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 6;
}
