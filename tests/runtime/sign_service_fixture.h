// The signing service's security tests' fixture (sign_service_test.cpp, secrets_test.cpp): the
// real datacrumbs_sign_probes on a socket in a directory every user can reach, a real second user
// made by the test (useradd; more with add_user) and removed at its end, and clients that run as
// a given uid in a child process.
#pragma once

#include <pwd.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/deploy_fixture.h"

namespace dc::test {

struct sign_service_test : deploy_test {
  std::string shared, socket;  // shared: mode 1777, removed at the end
  std::string user;            // the test's own user: dcsign<pid>
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t service = 0;
  std::vector<std::string> more_users;  // add_user's, removed at the end too

  void SetUp() override;
  void TearDown() override;
  // Another real user, dcsign<pid><suffix>: its uid and gid (uid 0: it could not be made).
  std::pair<uid_t, gid_t> add_user(const std::string& suffix);
  // Starts datacrumbs_sign_probes in the background (`prefix`: e.g. setpriv and its options)
  // and waits for its socket; its stderr goes to DIR/sign.err.
  void start_service(const std::string& prefix = "");
  // SIGTERM, and waits for it to exit; false when it was already gone (it died).
  bool stop_service();
  // The uid an "OK\n..." answer is signed for; -1 when it is no file that verifies.
  int64_t signed_uid_of(const std::string& answer) const;
};

// Unsigned content for the service: the syscalls and libc's fwrite, claiming `claimed_uid`.
std::string request_content(uint32_t claimed_uid,
                            const std::string& binary = "/usr/lib/x86_64-linux-gnu/libc.so.6");
// Unsigned content with `n` probes, the i-th on binaries[i % size] (a request as large as wanted).
std::string many_probes(size_t n, const std::vector<std::string>& binaries);

// Runs `body` in a child process as uid/gid (root: as is), killed after `limit_s` seconds;
// returns what body returned.
struct client {
  pid_t pid = 0;
  int out = -1;  // the read end of the pipe the child's result comes through
};
client spawn_as(uid_t uid, gid_t gid, const std::function<std::string()>& body, unsigned limit_s = 30);
std::string result_of(client& c);  // waits for the child; its result, or "child failed"

// Asks the service as uid/gid: "OK\n" and the signed bytes, or "ERR " and the error's message.
std::string ask_as(uid_t uid, gid_t gid, const std::string& socket, const std::string& content);

// Seconds from `t` to now.
double seconds_since(std::chrono::steady_clock::time_point t);

// A connected client socket (reads give up after 30 s), or -1.
int connect_to(const std::string& socket);
// Sends all of `data` (no SIGPIPE); false when the service closed or refused first.
bool send_all(int fd, const std::string& data);
// Reads until EOF or an error; what arrived.
std::string read_reply(int fd);

}  // namespace dc::test
