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
#include <vector>

#include "deploy/readable_check.h"
#include "deploy/sign_connection.h"
#include "deploy/sign_slots.h"
#include "deploy/sign_turns.h"
#include "deploy/sign_worker.h"

namespace dc {

namespace {

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

std::string uid_text(std::optional<uint32_t> uid)
{
  return "uid " + (uid ? std::to_string(*uid) : std::string("unknown"));
}

// A new client, if its uid may have a slot: past its uid's limit it is refused; when every slot
// is taken, a busier uid's connection makes room for it, or it is refused.
void admit(std::list<connection>& clients, int fd, uint64_t id)
{
  connection c;
  c.id = id;
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
    for (const auto& o : clients) held.push_back({o.uid, o.at != stage::reading});
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

// Those past their deadline are told why (if they can still be) and closed.
void expire(std::list<connection>& clients, std::chrono::steady_clock::time_point now)
{
  for (auto it = clients.begin(); it != clients.end();) {
    if (now < it->deadline) {
      ++it;
      continue;
    }
    end_early(*it, expiry_reason(*it, now, connection_deadline));
    it = clients.erase(it);
  }
}

// What each connection waits for: its request, its check's child, room for its reply; while the
// worker has it or it waits for the worker, only its client hanging up (POLLHUP, always
// reported): a client that gave up costs no parse or signature.
pollfd watch(const connection& c)
{
  switch (c.at) {
    case stage::reading: return {c.fd, POLLIN, 0};
    case stage::checking: return {c.check.fd, POLLIN, 0};
    case stage::replying: return {c.fd, POLLOUT, 0};
    default: return {c.fd, 0, 0};
  }
}

// The worker's job is done: its time is charged to its uid, and it goes to its connection, unless
// that is gone. The worker's thread has ended here, and the next job starts after (give_job), so
// the readability check forked here (job_done) never forks while another thread holds a lock.
void take_job(std::list<connection>& clients, sign_worker& worker, turn_ledger& turns)
{
  sign_job job = worker.finish();
  turns.charge(job.uid, job.took, std::chrono::steady_clock::now());
  auto it = std::ranges::find(clients, job.id, &connection::id);
  if (it != clients.end())
    job_done(*it, std::move(job));
}

// An idle worker gets the waiting job whose uid used it least lately (sign_turns.h).
void give_job(std::list<connection>& clients, sign_worker& worker, const turn_ledger& turns)
{
  if (worker.busy())
    return;
  std::vector<connection*> waiting;
  std::vector<uint32_t> uids;
  for (auto& c : clients)
    if (c.at == stage::queued) {
      waiting.push_back(&c);
      uids.push_back(c.uid.value_or(0));
    }
  if (!waiting.empty())
    worker.start(job_for(*waiting[turns.next(uids, std::chrono::steady_clock::now())]));
}

volatile sig_atomic_t stopping = 0;

}  // namespace

// One thread multiplexes every client with ppoll: a slow or silent client costs a slot until its
// deadline, never the others' turn. Parsing and signing, about a second each for a large request,
// are the worker's, one request at a time, so reads, replies and accepts go on meanwhile; the
// readability check is a child's.
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
  sign_worker worker(secret);
  if (auto opened = worker.open(); !opened) {
    close(*fd);
    return opened;
  }
  // Stop signals are blocked except inside ppoll, so one that arrives is never missed (the
  // worker's thread, started later, keeps them blocked).
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
  turn_ledger turns;
  uint64_t accepted_ever = 0;
  std::vector<pollfd> fds;
  while (!stopping) {
    auto now = std::chrono::steady_clock::now();
    expire(clients, now);
    // Accepting even when every slot is taken: a new client's uid may be owed one (admit).
    fds.assign({{*fd, POLLIN, 0}, {worker.busy() ? worker.fd() : -1, POLLIN, 0}});
    auto next = now + connection_deadline;
    for (const auto& c : clients) {
      fds.push_back(watch(c));
      next = std::min(next, c.deadline);
    }
    auto wait =
        std::chrono::duration_cast<std::chrono::nanoseconds>(next - now) + std::chrono::milliseconds(1);
    timespec ts{static_cast<time_t>(wait.count() / 1000000000), static_cast<long>(wait.count() % 1000000000)};
    if (ppoll(fds.data(), fds.size(), &ts, &waiting) < 0)
      continue;  // EINTR: a stop signal, or another to ignore
    size_t i = 2;
    for (auto it = clients.begin(); it != clients.end(); ++i) {
      if (fds[i].revents != 0 && it->at == stage::checking && pump_readable_check(it->check))
        check_done(*it);
      else if (fds[i].revents != 0 && it->at == stage::reading)
        take_input(*it);
      // Watched for a hang-up only (waiting for the worker, or with it) and hung up.
      bool gone = fds[i].events == 0 && (fds[i].revents & (POLLHUP | POLLERR)) != 0;
      if (gone || (it->at == stage::replying && (fds[i].revents != 0 || it->sent == 0) && give_output(*it))) {
        close(it->fd);
        it = clients.erase(it);
      } else {
        ++it;
      }
    }
    if (fds[1].revents != 0)
      take_job(clients, worker, turns);
    give_job(clients, worker, turns);
    for (size_t accepted = 0; fds[0].revents != 0 && accepted < max_accepts_per_round; ++accepted) {
      int conn = accept4(*fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (conn < 0)
        break;
      admit(clients, conn, ++accepted_ever);
    }
  }
  for (auto& c : clients) {
    if (c.at == stage::checking)
      abandon_readable_check(c.check);
    close(c.fd);
  }
  close(*fd);
  ::unlink(socket_path.c_str());
  sigprocmask(SIG_UNBLOCK, &stop, nullptr);
  return {};  // the worker's job under way, if any, is waited for (about a second at most)
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
