#include "probe/object_keeper.h"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <span>
#include <string_view>

#include "core/fd_closer.h"
#include "datacrumbs.skel.h"
#include "probe/keeper_sockets.h"
#include "probe/object_reset.h"

extern char** environ;

namespace dc {

namespace {

constexpr size_t most_fds = 253;     // SCM_MAX_FD: what one message can carry
constexpr size_t most_links = 1024;  // handed over in the keeper's argv (a plan item is ~6 bytes)
void append_number(std::string& out, uint64_t v)
{
  out += std::to_string(v);
  out += ':';
}

// Sends `fds` with a reply line; false when the message could not go.
bool send_fds(int sock, std::string_view line, std::span<const int> fds)
{
  iovec iov{const_cast<char*>(line.data()), line.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * most_fds)];
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
}

}  // namespace

std::string kept_object_key(const datacrumbs_bpf& skel, const std::string& object_key)
{
  std::string key = object_key;
  if (key.empty())
    return key;  // the kernel's BTF unreadable: nothing is kept
  key += '|';
  bpf_map* map;
  bpf_object__for_each_map(map, skel.obj)
  {
    key += bpf_map__name(map);
    key += ':';
    for (uint64_t v : {uint64_t{bpf_map__autocreate(map)}, uint64_t{bpf_map__type(map)},
                       uint64_t{bpf_map__key_size(map)}, uint64_t{bpf_map__value_size(map)},
                       uint64_t{bpf_map__max_entries(map)}, uint64_t{bpf_map__map_flags(map)}})
      append_number(key, v);
    if (bpf_map__is_internal(map) && (bpf_map__map_flags(map) & BPF_F_RDONLY_PROG)) {
      size_t n = 0;
      const auto* image = static_cast<const unsigned char*>(bpf_map__initial_value(map, &n));
      for (size_t i = 0; image && i < n; ++i) {
        char hex[3];
        std::snprintf(hex, sizeof(hex), "%02x", image[i]);
        key += hex;
      }
    }
    key += '|';
  }
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel.obj)
  {
    key += bpf_program__name(prog);
    key += ':';
    for (uint64_t v : {uint64_t{bpf_program__autoload(prog)}, uint64_t{bpf_program__type(prog)},
                       uint64_t{bpf_program__expected_attach_type(prog)}})
      append_number(key, v);
    key += '|';
  }
  return key;
}

result<kept_object> take_kept_object(const std::string& key)
{
  int sock = connect_keeper(keeper_name(key));
  if (sock < 0)
    return fail("no object of this configuration is kept");
  std::string request = std::string(take_request) + key;
  char line[64] = {};
  iovec iov{line, sizeof(line) - 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * most_fds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = send(sock, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())
                  ? recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)
                  : -1;
  close(sock);
  std::vector<int> fds;
  for (cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&msg) : nullptr; c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      fds.resize(fds.size() + count);
      std::memcpy(fds.data() + fds.size() - count, CMSG_DATA(c), count * sizeof(int));
    }
  // "ok MAPS PROGRAMS": the counts must be what came.
  size_t maps = 0, programs = 0;
  std::string_view reply(line, n > 0 ? static_cast<size_t>(n) : 0);
  bool ok = reply.starts_with("ok ") && !(msg.msg_flags & MSG_CTRUNC);
  if (ok) {
    auto [p, ec] = std::from_chars(reply.data() + 3, reply.data() + reply.size(), maps);
    auto [q, ec2] = p < reply.data() + reply.size()
                        ? std::from_chars(p + 1, reply.data() + reply.size(), programs)
                        : std::from_chars_result{p, std::errc::invalid_argument};
    ok = ec == std::errc{} && ec2 == std::errc{} && maps + programs == fds.size();
  }
  if (!ok) {
    for (int fd : fds) close(fd);
    return fail(reply == "no" ? "the kept object is another configuration's"
                              : "the keeper did not hand its object over");
  }
  kept_object out;
  out.maps.assign(fds.begin(), fds.begin() + static_cast<std::ptrdiff_t>(maps));
  out.programs.assign(fds.begin() + static_cast<std::ptrdiff_t>(maps), fds.end());
  return out;
}

result<> keep_object(const datacrumbs_bpf& skel, const std::vector<int>& programs, const std::string& key,
                     const std::string& exe, unsigned idle_seconds, const std::vector<int>& links)
{
  if (key.empty() || idle_seconds == 0)
    return fail("objects are not kept");
  auto plan = reset_plan(skel, programs);
  if (!plan)
    return std::unexpected(plan.error());
  if (plan->size() > most_fds)
    return fail("the object has more fds than one message carries");
  if (links.size() > most_links)
    return fail("too many links to hand over");
  for (int fd : links) plan->push_back({reset_step::kind::link, fd});
  // The name is bound here, before the keeper starts: a run that begins while the keeper still
  // resets the object waits in the queue for it, instead of finding no keeper and loading.
  int listener = listen_as_keeper(keeper_name(key));
  if (listener < 0)
    return fail("another keeper holds on to its name");
  std::string idle = std::to_string(idle_seconds), steps = plan_text(*plan),
              listening = std::to_string(listener);
  std::vector<char*> argv{const_cast<char*>(exe.c_str()),
                          const_cast<char*>(keeper_argument),
                          idle.data(),
                          steps.data(),
                          const_cast<char*>(key.c_str()),
                          listening.data(),
                          nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd < 3; ++fd)
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
  for (const auto& s : *plan) posix_spawn_file_actions_adddup2(&actions, s.fd, s.fd);  // clears CLOEXEC
  posix_spawn_file_actions_adddup2(&actions, listener, listener);
  posix_spawn_file_actions_addchdir_np(&actions, "/");  // no mount held busy
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int err = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(listener);  // the keeper's now; a run queued on it meets a closed socket if none started
  if (err)
    return fail(std::string("cannot start the object's keeper: ") + std::strerror(err));
  return {};
}

int keeper_main(int argc, char** argv)
{
  unsigned idle = 0;
  int sock = -1;
  if (argc != 6 || std::from_chars(argv[2], argv[2] + std::strlen(argv[2]), idle).ec != std::errc{} ||
      !idle || std::from_chars(argv[5], argv[5] + std::strlen(argv[5]), sock).ec != std::errc{} || sock < 3)
    return 2;
  auto plan = parse_plan(argv[3]);
  std::string key = argv[4];
  if (!plan)
    return 2;
  prctl(PR_SET_NAME, "dc-keeper");
  // When this configuration was last used: the keepers of others make room by it (make_room_for).
  std::string age = "age " + std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now().time_since_epoch())
                                                .count());
  // Nothing but the object and the standard streams (on /dev/null) stays open.
  std::vector<int> kept{0, 1, 2, sock};
  for (const auto& s : *plan) kept.push_back(s.fd);
  std::ranges::sort(kept);
  for (size_t i = 0; i < kept.size(); ++i) {
    unsigned from = static_cast<unsigned>(kept[i]) + 1, to = i + 1 < kept.size() ? kept[i + 1] - 1 : ~0U;
    if (from <= to)
      close_range(from, to, 0);
  }
  for (const auto& s : *plan)
    if (fcntl(s.fd, F_GETFD) < 0)
      return 3;
  // The run's links (inert: their processes ended) are released while the object is served:
  // their releases took 50-140 ms of grace periods before it could go. Joined at exit, after the
  // name is given up (`listening` goes first): the next keeper binds it meanwhile.
  link_closer releasing;
  fd_closer listening{sock};
  // Non-blocking: a client that left before its accept must not hold the keeper past its idle time.
  if (fcntl(sock, F_SETFD, FD_CLOEXEC) != 0 || fcntl(sock, F_SETFL, O_NONBLOCK) != 0 ||
      !reset_object(*plan, &releasing))
    return 4;  // a run queued meanwhile finds the socket closed, and loads
  std::vector<int> fds;
  size_t maps = 0;
  for (const auto& s : *plan) {
    if (s.what == reset_step::kind::link)
      continue;  // closed by the reset
    fds.push_back(s.fd);
    bool program = s.what == reset_step::kind::program || s.what == reset_step::kind::forget_task;
    maps += program ? 0 : 1;
  }
  // Beside the run queued on this name, if any: the reset is done, the object can be served.
  (void)make_room_for(keeper_name(key));
  std::string ok = "ok " + std::to_string(maps) + " " + std::to_string(fds.size() - maps);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(idle);
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{sock, POLLIN, 0};
    int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready == 0 || (ready < 0 && errno != EINTR))
      return 0;  // idle (or unable to wait): the kernel frees the object with this process's fds
    int client = ready > 0 ? accept4(sock, nullptr, nullptr, SOCK_CLOEXEC) : -1;
    if (client < 0)
      continue;  // interrupted, or the client left before its accept
    // The accepted socket does not inherit O_NONBLOCK; its timeouts bound the exchange.
    set_timeout(client, 1000);
    std::string request(take_request.size() + key.size() + 1, '\0');
    ssize_t n = peer_is_this_user(client) ? recv(client, request.data(), request.size(), 0) : -1;
    request.resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (request == quit_request) {
      close(client);
      return 0;
    }
    if (request == age_request) {
      (void)send(client, age.data(), age.size(), MSG_NOSIGNAL);
      close(client);
      continue;
    }
    if (request.size() == take_request.size() + key.size() && request.starts_with(take_request) &&
        std::string_view(request).substr(take_request.size()) == key) {
      if (send_fds(client, ok, fds))
        return 0;  // handed over: the object is the taker's now
    } else if (n > 0) {
      (void)send(client, "no", 2, MSG_NOSIGNAL);
    }
    close(client);
  }
}

}  // namespace dc
