#include "runtime/sign_service_fixture.h"

#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "deploy/probe_file.h"
#include "deploy/signing_service.h"

namespace dc::test {
namespace {

// A system user with no home and no login shell: its uid and gid, uid 0 when it could not be made.
std::pair<uid_t, gid_t> make_user(const std::string& name)
{
  if (run_shell("useradd --system --no-create-home --shell /usr/sbin/nologin " + name) != 0)
    return {0, 0};
  passwd* pw = getpwnam(name.c_str());
  return pw ? std::pair(pw->pw_uid, pw->pw_gid) : std::pair<uid_t, gid_t>(0, 0);
}

}  // namespace

void sign_service_test::SetUp()
{
  deploy_test::SetUp();  // makes the secret (the configurator signs its probes as root)
  shared = "/tmp/dc-sign-" + std::to_string(getpid());
  socket = shared + "/sign.sock";
  std::filesystem::create_directories(shared);
  std::filesystem::permissions(shared, std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  user = "dcsign" + std::to_string(getpid());
  std::tie(uid, gid) = make_user(user);
  ASSERT_NE(uid, 0u) << "cannot make user " << user;
}

std::pair<uid_t, gid_t> sign_service_test::add_user(const std::string& suffix)
{
  more_users.push_back(user + suffix);
  return make_user(more_users.back());
}

void sign_service_test::TearDown()
{
  if (service > 0)
    stop_service();
  if (!user.empty()) {
    EXPECT_EQ(run_shell("userdel " + user + " 2>/dev/null"), 0) << "could not remove user " << user;
  }
  for (const auto& name : more_users)
    EXPECT_EQ(run_shell("userdel " + name + " 2>/dev/null"), 0) << "could not remove user " << name;
  std::filesystem::remove_all(shared);
  deploy_test::TearDown();
}

void sign_service_test::start_service(const std::string& prefix)
{
  std::string pid_file = dir / "sign.pid";
  ASSERT_EQ(run_shell("DATACRUMBS_SIGN_SOCKET=" + socket + " " + prefix + " " + bin_dir +
                      "/datacrumbs_sign_probes >" + shell_quote(dir / "sign.out") + " 2>" +
                      shell_quote(dir / "sign.err") + " & echo $! > " + shell_quote(pid_file)),
            0);
  service = std::atoi(read_file(pid_file).c_str());
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(socket); })) << read_file(dir / "sign.err");
}

bool sign_service_test::stop_service()
{
  pid_t pid = service;
  service = 0;
  if (kill(pid, SIGTERM) != 0)
    return false;
  if (!wait_for([&] { return kill(pid, 0) != 0; })) {
    kill(pid, SIGKILL);
    ADD_FAILURE() << "the signing service did not stop on SIGTERM";
  }
  return true;
}

int64_t sign_service_test::signed_uid_of(const std::string& answer) const
{
  auto key = load_secret(secret, false);
  if (!answer.starts_with("OK\n") || !key)
    return -1;
  auto verified = verify_probe_file(answer.substr(3), *key);
  return verified ? static_cast<int64_t>(verified->uid) : -1;
}

std::string request_content(uint32_t claimed_uid, const std::string& binary)
{
  probe_file p;
  p.uid = claimed_uid;
  p.kernel_layers = {"syscall"};
  p.uprobes = {{"STDIO", "fwrite", binary, 4096}};
  return probe_file_content(p);
}

std::string many_probes(size_t n, const std::vector<std::string>& binaries)
{
  probe_file p;
  p.kernel_layers = {"syscall"};
  for (size_t i = 0; i < n; ++i)
    p.uprobes.push_back(
        {"STDIO", std::string("f").append(std::to_string(i)), binaries[i % binaries.size()], 4096 + i});
  return probe_file_content(p);
}

client spawn_as(uid_t uid, gid_t gid, const std::function<std::string()>& body, unsigned limit_s)
{
  int p[2];
  if (pipe(p) != 0)
    return {};
  pid_t child = fork();
  if (child == 0) {
    close(p[0]);
    alarm(limit_s);  // a service that never answers fails the test instead of hanging it
    if (uid != 0 && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0))
      _exit(10);
    std::string out = body();
    for (size_t at = 0; at < out.size();) {
      ssize_t n = write(p[1], out.data() + at, out.size() - at);
      if (n <= 0)
        _exit(11);
      at += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(p[1]);
  return {child, p[0]};
}

std::string result_of(client& c)
{
  std::string out = read_reply(c.out);
  close(c.out);
  int status = 0;
  if (waitpid(c.pid, &status, 0) != c.pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "child failed (status " + std::to_string(status) + ")";
  return out;
}

std::string ask_as(uid_t uid, gid_t gid, const std::string& socket, const std::string& content)
{
  client c = spawn_as(uid, gid, [&] {
    auto got = request_signature(socket, content);
    return got ? "OK\n" + *got : "ERR " + got.error().message;
  });
  return result_of(c);
}

double seconds_since(std::chrono::steady_clock::time_point t)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int connect_to(const std::string& socket)
{
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket.c_str(), sizeof(addr.sun_path) - 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval limit{30, 0};  // a service that never answers fails the test instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  return fd;
}

bool send_all(int fd, const std::string& data)
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

std::string read_reply(int fd)
{
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace dc::test
