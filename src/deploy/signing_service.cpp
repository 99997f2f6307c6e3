#include "deploy/signing_service.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <list>
#include <optional>
#include <set>
#include <vector>

#include "deploy/probe_file.h"
#include "deploy/readable_check.h"
#include "deploy/sign_slots.h"

namespace dc {

namespace {

// A request is one probe file's content: far below this even for a config probing thousands of
// functions. With max_connections, it bounds what clients can make the service hold.
constexpr size_t max_request = 16 << 20;
constexpr size_t max_connections = 128;
// One user cannot take every slot: past this, its new connections are refused at once (which
// also drains its queued ones from the listen backlog quickly, ahead of other users'). Several
// users together can fill them: then a new one's uid gets a slot as sign_slots.h decides.
constexpr size_t max_per_uid = 32;
// Connections accepted (or refused) per round: clients that connect again and again cannot keep
// the loop from reading those it holds, or take every slot between a new client's accept and
// the read of its request (a slot is displaced oldest first: 127 others go before it).
constexpr size_t max_accepts_per_round = 32;
// From accept to the last byte of the reply. A local client writes its request at once; one that
// trickles or stalls is cut off, so it cannot hold a slot (or the service) for long.
constexpr auto connection_deadline = std::chrono::seconds(10);

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

// Until EOF; false on an error or a reply over max_request. What arrived is kept either way.
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

// MSG_NOSIGNAL: a peer that went away is an error here, not a SIGPIPE that ends the process.
bool write_all(int fd, const std::string& data)
{
  for (size_t at = 0; at < data.size();) {
    ssize_t n = send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// One client: its request coming in, then its reply going out, all before its deadline.
struct connection {
  int fd = -1;
  std::optional<uint32_t> uid;  // SO_PEERCRED, taken at accept
  std::string request, reply;
  size_t sent = 0;
  bool replying = false;
  std::chrono::steady_clock::time_point deadline;
  // Between the request and the reply: the request's probes while their binaries are checked.
  bool checking = false;
  probe_file probes;
  readable_check check;
};

void start_reply(connection& c, std::string reply)
{
  c.reply = std::move(reply);
  c.replying = true;
}

// The check is done: the signed file, or why not.
void finish_answer(connection& c, const std::string& secret)
{
  c.checking = false;
  if (auto unreadable = finish_readable_check(c.check))
    return start_reply(c, "ERR uid " + std::to_string(c.probes.uid) + " cannot read " + *unreadable + "\n");
  auto signed_bytes = sign_probe_file(c.probes, secret);
  start_reply(c, signed_bytes ? "OK\n" + *signed_bytes : "ERR " + signed_bytes.error().message + "\n");
}

// The whole request is in: parsed, then its binaries checked (each distinct one once, by one
// child beside the other clients: one fork per probe made 10,000 probes hold the service 10 s).
void begin_answer(connection& c, const std::string& secret)
{
  if (!c.uid)
    return start_reply(c, "ERR no peer credentials\n");
  auto probes = parse_probe_file_content(c.request);
  std::string().swap(c.request);
  if (!probes)
    return start_reply(c, "ERR " + probes.error().message + "\n");
  c.probes = std::move(*probes);
  c.probes.uid = *c.uid;  // whoever asked, as the kernel says: never the request's own claim
  std::set<std::string> distinct;
  std::vector<std::string> binaries;
  for (const auto& t : c.probes.uprobes)
    if (distinct.insert(t.binary).second)
      binaries.push_back(t.binary);
  c.check = start_readable_check(*c.uid, std::move(binaries));
  c.checking = c.check.fd >= 0;
  if (!c.checking)
    finish_answer(c, secret);
}

// Reads what is there; at EOF the request is answered, past the limit it is refused.
void take_input(connection& c, const std::string& secret)
{
  char buf[65536];
  ssize_t n = read(c.fd, buf, sizeof(buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n < 0) {
    start_reply(c, "");  // the client is gone: nothing to say, the connection just ends
    return;
  }
  if (n == 0) {
    begin_answer(c, secret);
    return;
  }
  if (c.request.size() + static_cast<size_t>(n) > max_request) {
    start_reply(c, "ERR request larger than the limit of " + std::to_string(max_request) + " bytes\n");
    return;
  }
  c.request.append(buf, static_cast<size_t>(n));
}

// Sends what the socket takes; true when the connection is done (all sent, or the client gone).
bool give_output(connection& c)
{
  while (c.sent < c.reply.size()) {
    ssize_t n = send(c.fd, c.reply.data() + c.sent, c.reply.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return false;
    if (n <= 0)
      return true;
    c.sent += static_cast<size_t>(n);
  }
  return true;
}

// Ends a connection before its answer: one try to say why (unless a reply is already going out:
// a line inside it would only corrupt it); a client that cannot take it is dropped anyway.
void end_early(connection& c, std::string why)
{
  if (c.checking) {
    c.checking = false;
    (void)abandon_readable_check(c.check);
  }
  if (!c.replying) {
    start_reply(c, std::move(why));
    (void)give_output(c);
  }
  close(c.fd);
}

std::string uid_text(std::optional<uint32_t> uid)
{
  return "uid " + (uid ? std::to_string(*uid) : std::string("unknown"));
}

// A new client, if its uid may have a slot: past its uid's limit it is refused; when every slot
// is taken, a busier uid's connection makes room for it, or it is refused.
void admit(std::list<connection>& clients, int fd)
{
  connection c;
  c.fd = fd;
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
    c.uid = cred.uid;
  if (c.uid && static_cast<size_t>(std::ranges::count(clients, c.uid, &connection::uid)) >= max_per_uid)
    return end_early(c, "ERR " + uid_text(c.uid) + " has " + std::to_string(max_per_uid) +
                            " requests open already, the most one user may have\n");
  if (clients.size() >= max_connections) {
    std::vector<slot_holder> held;
    for (const auto& o : clients) held.push_back({o.uid, o.checking || o.replying});
    auto choice = choose_slot(held, c.uid);
    std::string all = std::to_string(max_connections) + " connections";
    if (!choice.displace)
      return end_early(c, "ERR all " + all + " are taken and " + uid_text(c.uid) + " holds " +
                              std::to_string(choice.own) +
                              " of them, within one of the most any user holds: try again\n");
    auto busiest = std::next(clients.begin(), static_cast<std::ptrdiff_t>(*choice.displace));
    end_early(*busiest, "ERR closed to make room for another user: " + uid_text(busiest->uid) + " held " +
                            std::to_string(choice.most) + " of the " + all + ", the most\n");
    clients.erase(busiest);
  }
  c.deadline = std::chrono::steady_clock::now() + connection_deadline;
  clients.push_back(std::move(c));
}

volatile sig_atomic_t stopping = 0;

}  // namespace

// One thread, every client multiplexed with ppoll: a slow or silent client costs a slot until its
// deadline, never the others' turn. Answering (parse, a readability check per binary, the HMAC)
// is done inline; it does not wait on the client.
result<> serve_signing(const std::string& socket_path, const std::string& secret)
{
  sockaddr_un addr;
  auto fd = unix_socket(socket_path, addr);
  if (!fd)
    return std::unexpected(fd.error());
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(socket_path).parent_path(), ec);
  ::unlink(socket_path.c_str());
  // The socket is made 0666 by bind itself (under a umask of 0111), not chmod-ed by name after:
  // a link swapped in at that name in between would have its target made writable by anyone.
  mode_t umask_was = ::umask(0111);
  int bound = bind(*fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::umask(umask_was);
  if (bound != 0 || listen(*fd, SOMAXCONN) != 0 || fcntl(*fd, F_SETFL, O_NONBLOCK) != 0) {
    int saved = errno;
    close(*fd);
    return fail("cannot listen on " + socket_path + ": " + std::strerror(saved));
  }
  // Stop signals are blocked except inside ppoll, so one that arrives is never missed.
  sigset_t stop, waiting;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop, &waiting);
  sigdelset(&waiting, SIGINT);
  sigdelset(&waiting, SIGTERM);
  struct sigaction sa {};
  sa.sa_handler = [](int) { stopping = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::list<connection> clients;
  std::vector<pollfd> fds;
  while (!stopping) {
    using clock = std::chrono::steady_clock;
    auto now = clock::now();
    for (auto it = clients.begin(); it != clients.end();) {
      if (now < it->deadline) {
        ++it;
        continue;
      }
      std::string limit = std::to_string(connection_deadline.count()) + " s";
      std::string why = "ERR request not complete within " + limit + "\n";
      if (it->checking) {  // an open that does not return: FUSE or NFS not answering
        it->checking = false;
        why = "ERR cannot tell whether uid " + std::to_string(it->probes.uid) + " can read " +
              abandon_readable_check(it->check) + ": opening it did not return within " + limit + "\n";
      }
      end_early(*it, std::move(why));
      it = clients.erase(it);
    }
    // Accepting even when every slot is taken: a new client's uid may be owed one (admit).
    fds.assign(1, pollfd{*fd, POLLIN, 0});
    auto next = now + connection_deadline;
    for (const auto& c : clients) {
      fds.push_back({c.checking ? c.check.fd : c.fd, static_cast<short>(c.replying ? POLLOUT : POLLIN), 0});
      next = std::min(next, c.deadline);
    }
    auto wait =
        std::chrono::duration_cast<std::chrono::nanoseconds>(next - now) + std::chrono::milliseconds(1);
    timespec ts{static_cast<time_t>(wait.count() / 1000000000), static_cast<long>(wait.count() % 1000000000)};
    if (ppoll(fds.data(), fds.size(), &ts, &waiting) < 0)
      continue;  // EINTR: a stop signal, or another to ignore
    size_t i = 1;
    for (auto it = clients.begin(); it != clients.end(); ++i) {
      bool done = false;
      if (fds[i].revents != 0 && it->checking) {
        if (pump_readable_check(it->check))
          finish_answer(*it, secret);
      } else if (fds[i].revents != 0 && !it->replying) {
        take_input(*it, secret);
      }
      if (it->replying && (fds[i].revents != 0 || it->sent == 0))
        done = give_output(*it);
      if (done) {
        close(it->fd);
        it = clients.erase(it);
      } else {
        ++it;
      }
    }
    for (size_t accepted = 0; fds[0].revents != 0 && accepted < max_accepts_per_round; ++accepted) {
      int conn = accept4(*fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (conn < 0)
        break;
      admit(clients, conn);
    }
  }
  for (auto& c : clients) {
    if (c.checking)
      (void)abandon_readable_check(c.check);
    close(c.fd);
  }
  close(*fd);
  ::unlink(socket_path.c_str());
  sigprocmask(SIG_UNBLOCK, &stop, nullptr);
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
  // The reply is read even when sending failed: a refusal (a request over the limit) can come
  // before the whole request went out.
  std::string reply;
  bool sent = write_all(*fd, content) && shutdown(*fd, SHUT_WR) == 0;
  bool ok = read_all(*fd, reply) && sent;
  close(*fd);
  if (reply.starts_with("ERR "))
    ok = true;
  if (!ok)
    return fail("the signing service at " + socket_path + " did not answer");
  if (reply.starts_with("OK\n"))
    return reply.substr(3);
  std::string why = reply.starts_with("ERR ") ? reply.substr(4) : reply;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return fail("the signing service refused: " + why);
}

}  // namespace dc
