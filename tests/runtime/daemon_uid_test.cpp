// The daemon traces processes of the signed uid only (issue 15, security), with two real users the
// test makes: user A gets a probe file from the signing service (signed for A because A asked) and
// the daemon runs on it; A, a second user B and root each run the same wrapped program (the client
// library loaded). Only A's process is traced, exactly. Figures: docs/reliability.md.
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "core/hash.h"
#include "runtime/sign_service_fixture.h"

namespace dc::test {
namespace {

struct daemon_uid_test : sign_service_test {
  std::string other;  // user B: dcother<pid>
  void TearDown() override
  {
    if (!other.empty()) {
      EXPECT_EQ(run_shell("userdel " + other + " 2>/dev/null"), 0) << "could not remove user " << other;
    }
    sign_service_test::TearDown();
  }
  // As `who` (root: as is): `command` in the shared directory, its pid written to NAME.pid first
  // (the wrapper execs the program, so the pid is the program's).
  int run_as(const std::string& who, const std::string& name, const std::string& command)
  {
    std::string as = who == "root" ? "" : "setpriv --reuid=" + who + " --regid=" + who + " --clear-groups ";
    return run_shell(as + "sh -c " +
                     shell_quote("cd " + shared + " && echo $$ > " + name + ".pid && exec " + command));
  }
  uint32_t pid_of(const std::string& name)
  {
    return std::atoi(read_file(shared + "/" + name + ".pid").c_str());
  }
};

TEST_F(daemon_uid_test, OnlyTheSignedUsersProcessesAreTraced)
{
  other = "dcother" + std::to_string(getpid());
  ASSERT_EQ(run_shell("useradd --system --no-create-home --shell /usr/sbin/nologin " + other), 0);
  ASSERT_NE(getpwnam(other.c_str()), nullptr);
  // An installed copy where both users can reach it (the build tree may be private): its daemon
  // watches its own library, the one its wrapper loads. (A library copied elsewhere would be
  // untraced for any user, and prove nothing.)
  std::string prefix = shared + "/prefix";
  ASSERT_EQ(run_shell("cmake --install " DATACRUMBS_BUILD_DIR " --prefix " + prefix + " >/dev/null && cp " +
                      shell_quote(config) + " " + shared + "/probes.yaml && chmod -R a+rX " + shared),
            0);
  // A asks the service; the file is signed for A.
  start_service();
  std::string probes_a = shared + "/a.json.gz";
  ASSERT_EQ(
      run_as(user, "configure",
             "env DATACRUMBS_SIGN_SOCKET=" + socket + " " + prefix + "/bin/datacrumbs_probe_configurator " +
                 shared + "/probes.yaml " + probes_a + " 2>" + shared + "/configure.err"),
      0)
      << read_file(shared + "/configure.err");
  EXPECT_TRUE(stop_service());

  std::string ready = dir / "run/datacrumbs-uid1.ready";
  ASSERT_EQ(run_shell(prefix + "/bin/datacrumbs " + shell_quote(probes_a) + " uid1 >/dev/null 2>" +
                      shell_quote(dir / "d.err") + " & echo $! > " + shell_quote(dir / "daemon.pid")),
            0);
  daemon = std::atoi(read_file(dir / "daemon.pid").c_str());
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(ready); })) << read_file(dir / "d.err");
  auto info = nlohmann::json::parse(read_file(ready));
  EXPECT_EQ(info["uid"], uid);

  struct run {
    std::string who, name;
    int blocks;
  };
  const std::vector<run> runs = {{user, "a", 3}, {other, "b", 5}, {"root", "root", 7}};
  for (const auto& r : runs)
    ASSERT_EQ(run_as(r.who, r.name,
                     prefix + "/bin/datacrumbs_wrap dd if=/dev/zero of=" + shared + "/" + r.name +
                         ".bin bs=4k count=" + std::to_string(r.blocks) + " status=none"),
              0)
        << r.who;
  stop_daemon("uid1");

  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  EXPECT_TRUE(trace.closed);
  std::map<std::string, int> writes;
  std::set<uint32_t> traced_pids;
  for (const auto& e : complete_events(trace)) {
    traced_pids.insert(e["pid"].get<uint32_t>());
    for (const auto& r : runs)
      writes[r.name] += e["name"] == "write" &&
                        e["args"].value("fhash", 0ull) == string_hash(shared + "/" + r.name + ".bin");
  }
  EXPECT_EQ(writes["a"], 3) << "the signed user's writes";
  EXPECT_EQ(writes["b"], 0) << "another user's program was traced";
  EXPECT_EQ(writes["root"], 0) << "root's program was traced";
  EXPECT_EQ(traced_pids, std::set<uint32_t>{pid_of("a")}) << "a process other than A's program was traced";
  if (!HasFailure())
    std::printf(
        "figure: daemon uid filter: file signed for uid %u via the service; wrapped dd of A (3 writes), B "
        "and "
        "root: %d, %d, %d writes traced, 1 process in the trace\n",
        uid, writes["a"], writes["b"], writes["root"]);
}

}  // namespace
}  // namespace dc::test
