#include "probe/keeper_sockets.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "core/hash.h"

namespace dc {

namespace {

// This user's names begin so. Anyone may bind an abstract name, so each side checks the other
// is this user before trusting it, and a taker checks every fd it is given against its object.
std::string user_prefix()
{
  return "datacrumbs-keeper-" + std::to_string(geteuid()) + "-";
}

// A socket (-1 on failure) and the abstract address of `name` in `a`, `len`.
int keeper_socket(std::string_view name, sockaddr_un& a, socklen_t& len)
{
  a = {};
  a.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(a.sun_path))
    return -1;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
}

// When the keeper on `name` was started (CLOCK_MONOTONIC ns): 0 for a keeper that answers
// otherwise (an older build's: the first to go); nullopt for none reached, or none that answered
// in time (one still resetting its object is not told to go for that).
std::optional<uint64_t> started_at(const std::string& name)
{
  int sock = connect_keeper(name, 500);
  if (sock < 0)
    return std::nullopt;
  char reply[64] = {};
  ssize_t n = send(sock, age_request.data(), age_request.size(), MSG_NOSIGNAL) ==
                      static_cast<ssize_t>(age_request.size())
                  ? recv(sock, reply, sizeof(reply) - 1, 0)
                  : -1;
  close(sock);
  if (n <= 0)
    return std::nullopt;
  std::string_view r(reply, static_cast<size_t>(n));
  uint64_t ns = 0;
  if (r.starts_with("age "))
    std::from_chars(r.data() + 4, r.data() + r.size(), ns);
  return ns;
}

}  // namespace

std::string keeper_name(std::string_view key)
{
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(string_hash(key)));
  return user_prefix() + hex;
}

bool peer_is_this_user(int sock)
{
  ucred cred{};
  socklen_t len = sizeof(cred);
  return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

void set_timeout(int sock, int ms)
{
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int connect_keeper(std::string_view name, int timeout_ms)
{
  socklen_t len = 0;
  sockaddr_un a{};
  int sock = keeper_socket(name, a, len);
  if (sock < 0)
    return -1;
  set_timeout(sock, timeout_ms);
  if (connect(sock, reinterpret_cast<sockaddr*>(&a), len) != 0 || !peer_is_this_user(sock)) {
    close(sock);
    return -1;
  }
  return sock;
}

int listen_as_keeper(std::string_view name)
{
  socklen_t len = 0;
  sockaddr_un a{};
  int sock = keeper_socket(name, a, len);
  if (sock < 0)
    return -1;
  for (int tries = 0; tries < 40; ++tries) {
    if (bind(sock, reinterpret_cast<sockaddr*>(&a), len) == 0)
      return listen(sock, 16) == 0 ? sock : (close(sock), -1);
    if (errno != EADDRINUSE)
      break;
    if (int last = tries == 0 ? connect_keeper(name) : -1; last >= 0) {
      (void)send(last, quit_request.data(), quit_request.size(), MSG_NOSIGNAL);
      close(last);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  close(sock);
  return -1;
}

std::vector<std::string> keepers_listening(std::string_view except)
{
  // "Num RefCount Protocol Flags Type St Inode Path": a listening socket has __SO_ACCEPTCON
  // (00010000) in its flags; its accepted connections carry its name too, without that flag.
  std::ifstream in("/proc/net/unix");
  // Appended, not "@" + user_prefix(): GCC 12 at -O3 warns falsely (-Wrestrict) on that form.
  std::string line, prefix(1, '@');
  prefix += user_prefix();
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string num, refs, protocol, flags, type, state, inode, path;
    if (!(fields >> num >> refs >> protocol >> flags >> type >> state >> inode >> path))
      continue;
    if (flags != "00010000" || !path.starts_with(prefix) || std::string_view(path).substr(1) == except)
      continue;
    if (std::ranges::find(names, path.substr(1)) == names.end())
      names.push_back(path.substr(1));
  }
  return names;
}

size_t make_room_for(std::string_view own)
{
  std::vector<std::pair<uint64_t, std::string>> others;
  for (std::string& name : keepers_listening(own))
    if (auto at = started_at(name))
      others.emplace_back(*at, std::move(name));
  if (others.size() < most_keepers)
    return 0;
  std::ranges::sort(others);
  size_t told = 0;
  for (size_t i = 0; i + most_keepers <= others.size(); ++i) {
    if (int sock = connect_keeper(others[i].second, 500); sock >= 0) {
      told += send(sock, quit_request.data(), quit_request.size(), MSG_NOSIGNAL) ==
              static_cast<ssize_t>(quit_request.size());
      close(sock);
    }
  }
  return told;
}

}  // namespace dc
