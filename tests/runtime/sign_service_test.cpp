// The signing service under hostile clients (issue 15, security): a request over its limit, a
// client sending one byte a second and one sending nothing, 64 clients at once, clients that go
// away mid-request; each time the others are served, and every file is signed for the uid the
// kernel reports for the connection (SO_PEERCRED), whatever uid the request claims. Probes on a
// binary the asking user cannot read (or that is not a regular file) are refused, for a real
// user the test makes. Users sharing the service: sign_fair_test.cpp. Figures:
// docs/reliability.md.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "deploy/probe_file.h"
#include "deploy/signing_service.h"
#include "runtime/sign_service_fixture.h"

namespace dc::test {
namespace {

using clock_type = std::chrono::steady_clock;

TEST_F(sign_service_test, ARequestOverTheLimitIsRefusedAndTheServiceKeepsServing)
{
  start_service();
  // 16 MiB + 1 byte: the library's client reads the refusal even though sending failed.
  std::string huge(16u * 1024 * 1024 + 1, ' ');
  auto refused = request_signature(socket, huge);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "the signing service refused: request larger than the limit of 16777216 bytes");
  // Exactly the limit is read in full and judged as a request (not JSON here).
  auto at_limit = request_signature(socket, std::string(16u * 1024 * 1024, ' '));
  ASSERT_FALSE(at_limit);
  EXPECT_NE(at_limit.error().message.find("malformed probe file"), std::string::npos)
      << at_limit.error().message;
  EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, request_content(0))), uid);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: a 16 MiB + 1 byte request refused with one line, the next client signed\n");
}

TEST_F(sign_service_test, ASlowOrSilentClientDoesNotDelayOthersAndIsCutOffAtItsDeadline)
{
  start_service();
  std::string content = request_content(0);
  std::atomic<int> slow_sent{0};
  std::atomic<bool> slow_done{false}, silent_done{false};
  std::string slow_reply, silent_reply;
  double slow_ended = 0, silent_ended = 0;
  auto start = clock_type::now();
  // One byte a second, as long as the service lets it (up to 20); then the reply it got.
  std::thread slow([&] {
    int fd = connect_to(socket);
    for (size_t i = 0; fd >= 0 && i < 20; ++i) {
      if (send(fd, &content[i], 1, MSG_NOSIGNAL) != 1)
        break;
      ++slow_sent;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    shutdown(fd, SHUT_WR);
    slow_reply = read_reply(fd);
    slow_ended = seconds_since(start);
    slow_done = true;
    close(fd);
  });
  std::thread silent([&] {
    int fd = connect_to(socket);
    silent_reply = read_reply(fd);
    silent_ended = seconds_since(start);
    silent_done = true;
    close(fd);
  });
  while (slow_sent < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Two other clients, one after the other, while both are connected.
  for (uid_t who : {uid, static_cast<uid_t>(0)}) {
    auto asked = clock_type::now();
    std::string answer = ask_as(who, gid, socket, content);
    double took = seconds_since(asked);
    EXPECT_EQ(signed_uid_of(answer), who) << answer;
    EXPECT_LT(took, 3.0) << "a client waited behind the slow one";
    EXPECT_FALSE(slow_done || silent_done) << "the slow clients were not still connected";
    if (!HasFailure())
      std::printf(
          "figure: sign service: uid %u signed in %.3f s while a 1 byte/s and a silent client were "
          "connected\n",
          who, took);
  }
  slow.join();
  silent.join();
  const std::string cut = "ERR request not complete within 10 s\n";
  EXPECT_EQ(slow_reply, cut);
  EXPECT_EQ(silent_reply, cut);
  EXPECT_GE(slow_ended, 9.5);
  EXPECT_LT(slow_ended, 14.0);
  EXPECT_GE(silent_ended, 9.5);
  EXPECT_LT(silent_ended, 14.0);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: slow client cut off after %.1f s (%d bytes sent), silent one after %.1f s\n",
        slow_ended, slow_sent.load(), silent_ended);
}

// 64 clients connect, then all send at once; half are root, half the test's user, each claiming
// the other's uid. Each file is signed for the uid of its own connection.
TEST_F(sign_service_test, SixtyFourClientsAtOnceAreEachSignedForTheirOwnUid)
{
  start_service();
  constexpr int clients = 64;
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  std::vector<client> running;
  std::vector<uid_t> who;
  for (int i = 0; i < clients; ++i) {
    uid_t as = i % 2 ? uid : 0;
    std::string content = request_content(as == 0 ? uid : 0);
    running.push_back(spawn_as(as, gid, [&, content] {
      close(go[1]);
      int fd = connect_to(socket);
      char byte = fd >= 0 ? 'r' : 'x';
      if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 0)  // EOF: go
        return std::string("no go");
      if (!send_all(fd, content))
        return std::string("send failed");
      shutdown(fd, SHUT_WR);
      return read_reply(fd);
    }));
    who.push_back(as);
  }
  close(ready[1]);
  close(go[0]);
  int connected = 0;
  char byte = 0;
  pollfd wait_ready{ready[0], POLLIN, 0};
  while (connected < clients && poll(&wait_ready, 1, 20000) == 1 && read(ready[0], &byte, 1) == 1)
    connected += byte == 'r';
  auto start = clock_type::now();
  close(go[1]);  // all go at once (those not connected too: they are failures, not hangs)
  EXPECT_EQ(connected, clients) << "not all clients could connect at once";
  int as_root = 0, as_user = 0;
  for (int i = 0; i < clients; ++i) {
    std::string answer = result_of(running[i]);
    EXPECT_EQ(signed_uid_of(answer), who[i]) << "client " << i << ": " << answer.substr(0, 200);
    (who[i] == 0 ? as_root : as_user) += signed_uid_of(answer) == who[i];
  }
  double took = seconds_since(start);
  close(ready[0]);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: %d concurrent clients, %d signed for root and %d for uid %u (each claimed the "
        "other), all in %.3f s\n",
        clients, as_root, as_user, uid, took);
}

// The test's user holds 32 connections open and silent: its 33rd is refused at once, root is still
// signed meanwhile, and once the 32 are closed the user is signed again.
TEST_F(sign_service_test, OneUserCannotTakeEverySlot)
{
  start_service();
  std::string content = request_content(0);
  int held[2], go[2];
  ASSERT_EQ(pipe(held), 0);
  ASSERT_EQ(pipe(go), 0);
  client hog = spawn_as(uid, gid, [&] {
    close(held[0]);
    close(go[1]);
    std::vector<int> open_fds;
    for (int i = 0; i < 32; ++i) open_fds.push_back(connect_to(socket));
    int extra = connect_to(socket);
    (void)!send(extra, content.data(), content.size(), MSG_NOSIGNAL);
    shutdown(extra, SHUT_WR);
    std::string reply = read_reply(extra);
    char byte = 'h';
    if (write(held[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 0)
      return std::string("no go");
    for (int fd : open_fds) close(fd);
    return reply;
  });
  close(held[1]);
  close(go[0]);
  pollfd wait_held{held[0], POLLIN, 0};
  char byte = 0;
  bool holding = poll(&wait_held, 1, 20000) == 1 && read(held[0], &byte, 1) == 1;
  EXPECT_TRUE(holding);
  auto asked = clock_type::now();
  EXPECT_EQ(signed_uid_of(ask_as(0, 0, socket, content)), 0) << "another uid was not served";
  double took = seconds_since(asked);
  close(go[1]);
  close(held[0]);
  EXPECT_EQ(result_of(hog),
            "ERR uid " + std::to_string(uid) + " has 32 requests open already, the most one user may have\n");
  int64_t again = -1;
  EXPECT_TRUE(wait_for([&] { return (again = signed_uid_of(ask_as(uid, gid, socket, content))) == uid; }))
      << "the user was not served again after closing its connections";
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: uid %u holding 32 silent connections: its 33rd refused at once, root signed "
        "in "
        "%.3f s meanwhile\n",
        uid, took);
}

TEST_F(sign_service_test, ClientsThatGoAwayMidRequestLeaveTheServiceServing)
{
  start_service();
  std::string content = request_content(0);
  constexpr int each = 16;
  for (int i = 0; i < each; ++i) {
    // Half a request, then gone.
    int fd = connect_to(socket);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, content.data(), content.size() / 2, MSG_NOSIGNAL),
              static_cast<ssize_t>(content.size() / 2));
    close(fd);
    // A whole request, gone before the reply (the service's send meets a closed socket).
    fd = connect_to(socket);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, content.data(), content.size(), MSG_NOSIGNAL), static_cast<ssize_t>(content.size()));
    shutdown(fd, SHUT_WR);
    close(fd);
    // Connected and gone at once.
    fd = connect_to(socket);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(kill(service, 0), 0) << "the service died: " << read_file(dir / "sign.err");
  EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, content)), uid);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: %d clients gone mid-request, before the reply or at once; the next one "
        "signed\n",
        3 * each);
}

// Readability is checked once per distinct binary, in one child: a request naming 100,000
// functions (14 MB) does not hold the service for long (one fork each took 10 s for 10,000).
TEST_F(sign_service_test, ARequestNamingManyFunctionsIsAnsweredQuickly)
{
  start_service();
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6",
                    libm = "/usr/lib/x86_64-linux-gnu/libm.so.6";
  std::string content = many_probes(100000, {libc, libm});
  auto asked = clock_type::now();
  std::string answer = ask_as(uid, gid, socket, content);
  double took = seconds_since(asked);
  EXPECT_EQ(signed_uid_of(answer), uid) << answer.substr(0, 200);
  EXPECT_LT(took, 5.0);
  auto key = load_secret(secret, false);
  ASSERT_TRUE(key);
  auto verified = verify_probe_file(answer.substr(std::min<size_t>(3, answer.size())), *key);
  ASSERT_TRUE(verified);
  EXPECT_EQ(verified->uprobes.size(), 100000u);
  // The one the user cannot read, among readable ones, is the one named.
  std::string root_only = shared + "/root_only.so";
  std::filesystem::copy_file(STATIC_APP_BIN, root_only);
  ASSERT_EQ(chmod(root_only.c_str(), 0600), 0);
  EXPECT_EQ(ask_as(uid, gid, socket, many_probes(1000, {libc, libm, root_only})),
            "ERR the signing service refused: uid " + std::to_string(uid) + " cannot read " + root_only);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf("figure: sign service: %zu-byte request with 100000 probes on 2 binaries signed in %.3f s\n",
                content.size(), took);
}

// The test's user asks for probes on binaries it cannot read (mode 0600, root's; a readable file
// in a directory it cannot enter), one it can read only through its group, and a FIFO of its own
// named as a binary (the service must not wait for a writer).
TEST_F(sign_service_test, ProbesOnABinaryTheUserCannotReadAreRefused)
{
  start_service();
  std::string root_only = shared + "/root_only.so", closed_dir = shared + "/closed",
              in_closed = closed_dir + "/lib.so", group_readable = shared + "/group.so",
              fifo = shared + "/fifo.so";
  std::filesystem::copy_file(STATIC_APP_BIN, root_only);
  ASSERT_EQ(chmod(root_only.c_str(), 0600), 0);
  std::filesystem::create_directories(closed_dir);
  ASSERT_EQ(chmod(closed_dir.c_str(), 0700), 0);
  std::filesystem::copy_file(STATIC_APP_BIN, in_closed);
  ASSERT_EQ(chmod(in_closed.c_str(), 0644), 0);
  std::filesystem::copy_file(STATIC_APP_BIN, group_readable);
  ASSERT_EQ(chown(group_readable.c_str(), 0, gid), 0);
  ASSERT_EQ(chmod(group_readable.c_str(), 0640), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(chown(fifo.c_str(), uid, gid), 0);

  for (const std::string& binary : {root_only, in_closed, fifo}) {
    auto asked = clock_type::now();
    std::string answer = ask_as(uid, gid, socket, request_content(uid, binary));
    EXPECT_EQ(answer,
              "ERR the signing service refused: uid " + std::to_string(uid) + " cannot read " + binary);
    EXPECT_LT(seconds_since(asked), 3.0) << binary;
  }
  EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, request_content(uid, group_readable))), uid);
  // Root may read all of them: the refusal is the asking user's, not the file's.
  EXPECT_EQ(signed_uid_of(ask_as(0, 0, socket, request_content(0, root_only))), 0);
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: 3 unreadable targets (mode 0600, closed directory, FIFO) refused for uid %u, "
        "a group-readable one signed\n",
        uid);
}

}  // namespace
}  // namespace dc::test
