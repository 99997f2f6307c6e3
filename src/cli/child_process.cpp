#include "cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace dc {

namespace {

volatile sig_atomic_t g_child = 0;

void forward(int sig, siginfo_t* info, void*)
{
  if (g_child <= 0)
    return;
  bool from_terminal = sig == SIGINT && info && info->si_code == SI_KERNEL;
  if (!from_terminal)
    kill(g_child, sig);
}

bool executable_file(const std::string& path)
{
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

result<std::string> resolve_command(const std::string& name)
{
  if (name.empty())
    return fail("no command given (an empty command name)", 2);
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    if (stat(name.c_str(), &st) != 0)
      return fail("command not found: " + name, 127);
    if (!executable_file(name))
      return fail("command not executable: " + name, 126);
    return name;
  }
  const char* path_env = std::getenv("PATH");
  std::istringstream dirs(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable_file(candidate))
      return candidate;
  }
  return fail("command not found: " + name, 127);
}

result<paused_child> spawn_paused(const std::string& executable, const std::vector<std::string>& argv)
{
  // `go` is a socket pair: release() sends on it with MSG_NOSIGNAL, and a child already gone
  // (killed by a forwarded signal) makes that an error, not a SIGPIPE that ends this process.
  int go[2], err[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0)
    return fail(std::string("socketpair: ") + std::strerror(errno));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return fail(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0)
    return fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    close(go[1]);
    close(err[0]);
    char c;
    ssize_t got;
    while ((got = read(go[0], &c, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1)
      _exit(125);  // never released: the tool died while it loaded its probes
    execv(executable.c_str(), args.data());
    int e = errno;
    (void)!write(err[1], &e, sizeof(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  close(go[0]);
  close(err[1]);
  return paused_child{pid, go[1], err[0]};
}

result<> release(paused_child& child, const std::string& name)
{
  const char go = 1;
  while (send(child.go_fd, &go, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
  close(child.go_fd);
  child.go_fd = -1;
  int e = 0;
  ssize_t n;
  while ((n = read(child.error_fd, &e, sizeof(e))) < 0 && errno == EINTR) {
  }
  close(child.error_fd);
  child.error_fd = -1;
  if (n == sizeof(e))
    return fail("cannot run '" + name + "': " + std::strerror(e), e == ENOENT ? 127 : 126);
  return {};
}

void forward_signals_to(pid_t child)
{
  g_child = child;
  struct sigaction sa {};
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
}

int wait_for_exit(pid_t child)
{
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR)
      return 1;
  }
  g_child = 0;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace dc
