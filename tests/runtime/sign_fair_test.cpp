// The signing service shared between users (issue 15, security): users that together hold every
// connection slot, or keep its one thread busy with large requests, cannot starve another user.
// Real users made by the test (as one person with several uids would be). Figures:
// docs/reliability.md.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "deploy/signing_service.h"
#include "runtime/sign_service_fixture.h"

namespace dc::test {
namespace {

using clock_type = std::chrono::steady_clock;

// How many descriptors `pid` has open.
size_t open_fds(pid_t pid)
{
  std::error_code ec;
  size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end;
       !ec && it != end; it.increment(ec))
    ++n;
  return n;
}

// Holds `n` silent connections to the service until `stop` reads EOF; each one the service
// closes is read to its end and replaced at once. Returns each distinct answer the closed ones
// got, one a line: "COUNT ANSWER".
std::string hold_slots(const std::string& socket, size_t n, int stop)
{
  std::vector<int> held;
  for (size_t i = 0; i < n; ++i) held.push_back(connect_to(socket));
  std::map<std::string, int> seen;
  for (;;) {
    std::vector<pollfd> fds{{stop, POLLIN, 0}};
    for (int fd : held) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0)
      continue;
    if (fds[0].revents != 0)
      break;
    for (size_t i = 0; i < held.size(); ++i) {
      if (fds[i + 1].revents == 0)
        continue;
      std::string answer = read_reply(held[i]);
      close(held[i]);
      ++seen[answer.empty() ? "(closed without a line)\n" : answer];
      held[i] = connect_to(socket);
      if (held[i] < 0)
        ++seen["(could not connect again)\n"];
    }
  }
  for (int fd : held) close(fd);
  std::string out;
  for (const auto& [answer, count] : seen) out += std::to_string(count) + " " + answer;
  return out;
}

// Four users (made by the test, as one person with four uids would be) hold all 128
// connections, 32 each, silent, and connect again whenever one is closed. The test's own user
// asks three times meanwhile, each time once the 128 are all held again: each request is signed
// at once, by closing one of the busiest users' silent connections (with a line saying why).
TEST_F(sign_service_test, UsersHoldingEverySlotTogetherCannotStarveAnother)
{
  start_service();
  size_t idle_fds = open_fds(service);
  int stop[2];
  ASSERT_EQ(pipe(stop), 0);
  std::vector<client> attackers;
  std::vector<std::pair<uid_t, gid_t>> attacker_ids;
  for (char suffix : {'a', 'b', 'c', 'd'}) {
    auto [as, group] = add_user(std::string(1, suffix));
    ASSERT_NE(as, 0u);
    attacker_ids.emplace_back(as, group);
    attackers.push_back(spawn_as(as, group, [&] {
      close(stop[1]);
      return hold_slots(socket, 32, stop[0]);
    }));
  }
  close(stop[0]);
  constexpr int asks = 3;
  double slowest = 0;
  for (int i = 0; i < asks; ++i) {
    EXPECT_TRUE(wait_for([&] { return open_fds(service) == idle_fds + 128; }))
        << "the attackers hold " << open_fds(service) - idle_fds << " connections, not 128";
    auto asked = clock_type::now();
    std::string answer = ask_as(uid, gid, socket, request_content(0));
    double took = seconds_since(asked);
    EXPECT_EQ(signed_uid_of(answer), uid) << answer.substr(0, 200);
    EXPECT_LT(took, 2.0) << "the victim waited for the attackers' slots";
    slowest = std::max(slowest, took);
  }
  close(stop[1]);
  // What each attacker's closed connections were told: closed to make room (once per ask, in
  // all), its reconnections refused while the victim held the slot, and nothing else.
  int evicted = 0, refused = 0;
  for (size_t i = 0; i < attackers.size(); ++i) {
    std::string who = "uid " + std::to_string(attacker_ids[i].first);
    std::string seen = result_of(attackers[i]);
    for (size_t at = 0, end; (end = seen.find('\n', at)) != std::string::npos; at = end + 1) {
      std::string line = seen.substr(at, end - at);
      int count = std::atoi(line.c_str());
      std::string answer = line.substr(std::min(line.size(), line.find(' ') + 1));
      if (answer ==
          "ERR closed to make room for another user: " + who + " held 32 of the 128 connections, the most")
        evicted += count;
      else if (answer.starts_with("ERR all 128 connections are taken and " + who + " holds "))
        refused += count;
      else
        ADD_FAILURE() << who << " was told " << count << " times: " << answer;
    }
  }
  EXPECT_EQ(evicted, asks);
  // The service still serves, the attackers too once they let go.
  EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, request_content(0))), uid);
  auto [attacker, group] = attacker_ids[0];
  EXPECT_EQ(signed_uid_of(ask_as(attacker, group, socket, request_content(0))), attacker);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: 4 users holding all 128 connections (silent, reconnecting): uid %u signed %d "
        "times, the slowest in %.3f s; %d of their connections closed to make room, %d reconnections "
        "refused\n",
        uid, asks, slowest, evicted, refused);
}

// Asks for `content` on one connection after another until `stop` reads EOF (then the request
// under way is dropped). Returns "signed N" and each distinct refusal, one a line: "COUNT ANSWER".
std::string ask_until(const std::string& socket, const std::string& content, int stop)
{
  int signed_files = 0;
  std::map<std::string, int> refused;
  for (bool stopped = false; !stopped;) {
    int fd = connect_to(socket);
    if (fd < 0 || !send_all(fd, content) || shutdown(fd, SHUT_WR) != 0)
      ++refused["(could not send the request)\n"];
    std::vector<pollfd> fds{{stop, POLLIN, 0}, {fd, POLLIN, 0}};
    for (int ready = 0; ready <= 0;) ready = poll(fds.data(), fds.size(), -1);  // < 0: EINTR
    stopped = fds[0].revents != 0;
    std::string answer = stopped ? "" : read_reply(fd);
    if (answer.starts_with("OK\n"))
      ++signed_files;
    else if (!stopped)
      ++refused[answer.substr(0, answer.find('\n') + 1)];
    close(fd);
  }
  std::string out = "signed " + std::to_string(signed_files) + "\n";
  for (const auto& [answer, count] : refused) out += std::to_string(count) + " " + answer;
  return out;
}

// Four users (made by the test) keep 12 requests of 100,000 probes each (13 MB) in the service,
// three each, asking again as soon as one is answered: parsing and signing them takes the
// service one to a few seconds each. The test's user asks 3 times meanwhile: each time it may wait for
// the job under way (a parse or a signature) before each of its own two, not for the twelve; so
// each answer must come within twice what one large request takes alone, plus 1 s. Then it asks
// for a large one itself: its own two jobs, one under way before each, on CPUs busy with the
// others' 13 MB transfers: within four times that, plus 1 s.
TEST_F(sign_service_test, LargeRequestsOfOtherUsersDoNotQueueAheadOfAnother)
{
  start_service();
  const std::string large =
      many_probes(100000, {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"});
  // Alone (as root: its time on the worker is no part of the test's user's).
  auto asked = clock_type::now();
  EXPECT_EQ(signed_uid_of(ask_as(0, 0, socket, large)), 0);
  double alone = seconds_since(asked);
  int stop[2];
  ASSERT_EQ(pipe(stop), 0);
  std::vector<client> attackers;
  std::vector<std::pair<uid_t, gid_t>> attacker_ids;
  // They ask until the test is done: 2 x alone below, then up to 3 x (2 x alone + 1) and
  // 4 x alone + 1 (the bounds), so their limit scales with `alone` too (a slow machine's
  // 4.5 s each alone makes that ~40 s, past the 30 s of a plain client).
  const auto attacker_limit = static_cast<unsigned>(30 + 12 * alone);
  for (char suffix : {'a', 'b', 'c', 'd'}) {
    auto [as, group] = add_user(std::string(1, suffix));
    ASSERT_NE(as, 0u);
    attacker_ids.emplace_back(as, group);
    for (int i = 0; i < 3; ++i)
      attackers.push_back(spawn_as(
          as, group,
          [&] {
            close(stop[1]);
            return ask_until(socket, large, stop[0]);
          },
          attacker_limit));
  }
  close(stop[0]);
  // Their requests sent (13 MB each, read 64 KB a round of the service's loop) and being worked on.
  std::this_thread::sleep_for(std::chrono::duration<double>(2 * alone));
  constexpr int asks = 3;
  double slowest = 0;
  for (int i = 0; i < asks; ++i) {
    asked = clock_type::now();
    std::string answer = ask_as(uid, gid, socket, request_content(0));
    double took = seconds_since(asked);
    EXPECT_EQ(signed_uid_of(answer), uid) << answer.substr(0, 200);
    EXPECT_LT(took, 2 * alone + 1) << "the test's user waited for the others' large requests";
    slowest = std::max(slowest, took);
  }
  asked = clock_type::now();
  EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, large)), uid);
  double large_took = seconds_since(asked);
  EXPECT_LT(large_took, 4 * alone + 1) << "the test's user's large request waited for the others'";
  close(stop[1]);
  // The attackers were served too, in turn; what they were refused is only the deadline of
  // requests that waited for the thread longer than 10 s.
  int attacker_signed = 0;
  for (auto& attacker : attackers) {
    std::string seen = result_of(attacker);
    for (size_t at = 0, end; (end = seen.find('\n', at)) != std::string::npos; at = end + 1) {
      std::string line = seen.substr(at, end - at);
      if (line.starts_with("signed "))
        attacker_signed += std::atoi(line.c_str() + 7);
      else if (line.find("ERR request not answered within 10 s") == std::string::npos)
        ADD_FAILURE() << "an attacker was told: " << line;
    }
  }
  EXPECT_GE(attacker_signed, 1);
  EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, request_content(0))), uid);
  auto [attacker, group] = attacker_ids[0];
  EXPECT_EQ(signed_uid_of(ask_as(attacker, group, socket, request_content(0))), attacker);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: 4 users keeping 12 requests of 100000 probes in the service (%.3f s each "
        "alone): uid %u signed %d times, the slowest in %.3f s, and a request of 100000 probes in %.3f s; "
        "%d of theirs signed meanwhile\n",
        alone, uid, asks, slowest, large_took, attacker_signed);
}

}  // namespace
}  // namespace dc::test
