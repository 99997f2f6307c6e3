// Links planted at every path the daemon and the signing service create: at the file's own name,
// in its directory, in a directory on the way to it. None is followed, and nothing a link leads
// to is written, truncated, given away or made writable: the tool refuses with one line naming
// the path, or replaces the link itself. Planted by root here: whether a link is followed does
// not depend on who planted it. Figures: docs/reliability.md.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "config/system_config.h"
#include "deploy/trace_name.h"
#include "runtime/deploy_fixture.h"
#include "runtime/sign_service_fixture.h"

namespace dc::test {
namespace {

namespace fs = std::filesystem;

// A file a link leads to; unchanged() says whether its content, mode and owner are as made.
struct victim {
  std::string path;
  explicit victim(std::string p) : path(std::move(p))
  {
    std::ofstream(path) << "keep\n";
    ::chmod(path.c_str(), 0600);
  }
  bool unchanged() const
  {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 &&
           st.st_uid == 0 && read_file(path) == "keep\n";
  }
};

bool is(const std::string& path, mode_t type)
{
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

int stderr_lines(const std::string& err)
{
  int n = 0;
  for (char c : err) n += c == '\n';
  return n;
}

struct planted_links : deploy_test {
  // Where the daemon will put run `id`'s trace (today's name, the default pattern).
  std::string trace_path(const std::string& id)
  {
    return dir / ("traces/" + expand_trace_pattern(default_trace_pattern,
                                                   {id, short_host_name(), "root", std::time(nullptr)})
                                  .value_or("?"));
  }
  // The daemon in the foreground (a refusal ends it at once; 20 s otherwise, then killed: 124).
  std::pair<int, std::string> daemon_on(const std::string& id)
  {
    std::string err = dir / "refused.err";
    int status = run_shell("timeout 20 " + std::string(DATACRUMBS_BIN) + " " + shell_quote(probes) + " " +
                           id + " >/dev/null 2>" + shell_quote(err));
    return {status, read_file(err)};
  }
};

TEST_F(planted_links, TheDaemonNeverFollowsALinkAtItsTraceOrOnTheWayToIt)
{
  victim file(dir / "victim");
  fs::create_directories(dir / "elsewhere");
  int refused = 0;
  auto expect_refused = [&](const std::string& id, const std::string& why, const std::string& named) {
    auto [status, err] = daemon_on(id);
    EXPECT_NE(status, 0) << id;
    EXPECT_NE(status, 124) << id << ": the daemon ran instead of refusing";
    EXPECT_EQ(stderr_lines(err), 1) << err;
    EXPECT_NE(err.find(named), std::string::npos) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
    EXPECT_TRUE(file.unchanged()) << id;
    EXPECT_TRUE(fs::is_empty(dir / "elsewhere")) << id;
    refused += status != 0 && file.unchanged();
  };

  // A symbolic link at the trace's name.
  std::string t = trace_path("sym");
  fs::create_directories(fs::path(t).parent_path());
  fs::create_symlink(file.path, t);
  expect_refused("sym", "a symbolic link (never followed)", t);
  // A hard link at the trace's name: opened, it would be truncated.
  t = trace_path("hard");
  fs::create_hard_link(file.path, t);
  expect_refused("hard", "other hard links", t);
  // A dangling link at the trace's name: following it would create the file it names.
  t = trace_path("dangling");
  fs::create_symlink(dir / "elsewhere/made", t);
  expect_refused("dangling", "a symbolic link (never followed)", t);
  // A link in place of each directory of the pattern (YYYY/MM/DD) on the way to the trace.
  fs::path day = fs::path(trace_path("x")).parent_path();
  for (fs::path d : {day, day.parent_path(), day.parent_path().parent_path()}) {
    fs::remove_all(dir / "traces");
    fs::create_directories(d.parent_path());
    fs::create_directory_symlink(dir / "elsewhere", d);
    expect_refused("dir", "not a directory (a symbolic link is never followed)", d.string());
  }
  std::printf(
      "figure: planted links: daemon trace path: %d of 6 links (symbolic, hard, dangling, 3 "
      "directories) refused in one line, nothing they lead to touched\n",
      refused);
}

// The trace's directory swapped for a link while the daemon runs (its owner may rename what is
// theirs): the line index, created and at the end renamed through the directory's descriptor,
// lands beside the trace in the directory walked, and nothing is made where the link leads.
TEST_F(planted_links, TheIndexStaysBesideItsTraceWhenTheDirectoryIsSwappedForALink)
{
  auto info = start_daemon(probes, "swap");
  ASSERT_FALSE(info.is_null());
  fs::path trace = info["trace"].get<std::string>(), day = trace.parent_path(),
           moved = day.string() + ".moved";
  ASSERT_EQ(run_shell(bin_dir + "/datacrumbs_wrap dd if=/dev/zero of=" + shell_quote(dir / "w.bin") +
                      " bs=4k count=10 status=none"),
            0);
  fs::create_directories(dir / "elsewhere");
  fs::rename(day, moved);
  fs::create_directory_symlink(dir / "elsewhere", day);
  stop_daemon("swap");
  EXPECT_TRUE(fs::is_empty(dir / "elsewhere")) << "nothing made through the link";
  EXPECT_TRUE(is(moved / trace.filename(), S_IFREG));
  fs::path index = moved / (trace.filename().string() + ".zindex");
  ASSERT_TRUE(is(index, S_IFREG)) << "the index beside its trace: " << read_file(dir / "d.err");
  EXPECT_GT(fs::file_size(index), 0u);
  size_t left = 0;
  for (const auto& e : fs::directory_iterator(moved))
    left += e.path().filename().string().find(".zindex.") != std::string::npos;
  EXPECT_EQ(left, 0u) << "no temporary file left";
  std::printf(
      "figure: planted links: trace directory swapped for a link mid-run: index beside the trace, "
      "%s\n",
      fs::is_empty(dir / "elsewhere") ? "nothing through the link" : "SOMETHING through the link");
}

TEST_F(planted_links, TheDaemonReplacesLinksAtItsReadyAndLiveFilesWithoutWritingThroughThem)
{
  victim at_ready(dir / "victim_ready"), at_live(dir / "victim_live"), at_temp(dir / "victim_temp");
  fs::create_directories(dir / "run");
  std::string ready = dir / "run/datacrumbs-links.ready", live = dir / "run/datacrumbs-links.live.json";
  fs::create_symlink(at_ready.path, ready);
  fs::create_hard_link(at_live.path, live);
  fs::create_symlink(at_temp.path, live + ".tmp");
  ASSERT_EQ(run_shell(std::string(DATACRUMBS_BIN) + " " + shell_quote(probes) + " links >/dev/null 2>" +
                      shell_quote(dir / "d.err") + " & echo $! > " + shell_quote(dir / "d.pid")),
            0);
  daemon = std::atoi(read_file(dir / "d.pid").c_str());
  // The ready file and a live frame are written: in place of the links, not through them.
  ASSERT_TRUE(wait_for([&] { return is(ready, S_IFREG); })) << read_file(dir / "d.err");
  EXPECT_EQ(nlohmann::json::parse(read_file(ready))["pid"], daemon);
  ASSERT_TRUE(wait_for([&] {
    struct stat st {};
    return ::lstat(live.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
  })) << read_file(dir / "d.err");
  EXPECT_TRUE(nlohmann::json::parse(read_file(live)).is_object());
  ASSERT_EQ(kill(daemon, SIGTERM), 0);
  int status = 0;
  ASSERT_TRUE(wait_for([&] { return waitpid(daemon, &status, WNOHANG) == daemon || kill(daemon, 0) != 0; }));
  daemon = 0;
  EXPECT_FALSE(fs::exists(fs::symlink_status(ready))) << "the ready file was left";
  EXPECT_TRUE(at_ready.unchanged());
  EXPECT_TRUE(at_live.unchanged());
  EXPECT_TRUE(at_temp.unchanged());
  std::printf(
      "figure: planted links: daemon ready and live files: 3 links (symbolic at the ready file, "
      "hard at the live file, symbolic at its temporary) replaced, %d of 3 targets untouched\n",
      at_ready.unchanged() + at_live.unchanged() + at_temp.unchanged());
}

TEST_F(planted_links, TheSigningSecretIsNeverCreatedThroughALink)
{
  // The configurator makes the secret when there is none: a dangling link at its name must not
  // make it where the link leads. (Its directory is the administrator's, followed as configured,
  // like the trace and run directories themselves.)
  fs::create_directories(dir / "keys");
  fs::create_directories(dir / "elsewhere");
  fs::create_symlink(dir / "elsewhere/key", dir / "keys/key");
  int refused = 0;
  {
    std::string key = dir / "keys/key";
    std::string err = dir / "c.err";
    int status = run_shell("DATACRUMBS_SECRET_FILE=" + shell_quote(key) + " " + bin_dir +
                           "/datacrumbs_probe_configurator " + shell_quote(config) + " " +
                           shell_quote(dir / "out.json.gz") + " 2>" + shell_quote(err));
    EXPECT_NE(status, 0) << key;
    EXPECT_EQ(stderr_lines(read_file(err)), 1) << read_file(err);
    EXPECT_TRUE(fs::is_empty(dir / "elsewhere")) << key;
    EXPECT_FALSE(fs::exists(dir / "out.json.gz"));
    refused += status != 0 && fs::is_empty(dir / "elsewhere");
  }
  std::printf(
      "figure: planted links: signing secret: %d of 1 dangling link at the key refused, no key made "
      "through it\n",
      refused);
}

TEST_F(sign_service_test, TheSigningServiceReplacesALinkAtItsSocketWithoutFollowingIt)
{
  victim by_symlink(dir / "victim_sym"), by_hard_link(dir / "victim_hard");
  int kept = 0;
  for (const victim* v : {&by_symlink, &by_hard_link}) {
    if (v == &by_symlink)
      fs::create_symlink(v->path, socket);
    else
      fs::create_hard_link(v->path, socket);
    start_service();
    ASSERT_TRUE(wait_for([&] { return is(socket, S_IFSOCK); })) << read_file(dir / "sign.err");
    struct stat st {};
    ASSERT_EQ(::lstat(socket.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0666u);  // made so by bind, not by a chmod of the name
    EXPECT_EQ(signed_uid_of(ask_as(uid, gid, socket, request_content(0))), uid);
    EXPECT_TRUE(v->unchanged());
    kept += v->unchanged();
    ASSERT_TRUE(stop_service());
    ASSERT_TRUE(wait_for([&] { return !fs::exists(fs::symlink_status(socket)); }));
  }
  std::printf(
      "figure: planted links: signing socket: a symbolic and a hard link at it replaced by a "
      "0666 socket, %d of 2 targets untouched, the service signing\n",
      kept);
}

}  // namespace
}  // namespace dc::test
