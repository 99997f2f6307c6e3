// Snapshots in a real trace hold the machine's, the command's and the directory's true state,
// compared with what independent tools (nproc, uname, lsblk, findmnt, stat) say.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/deploy_fixture.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

// A shell command's output without its trailing newline.
std::string output_of(const scratch_dir& dir, const std::string& command)
{
  std::string out = dir / "out.txt";
  EXPECT_EQ(run_shell(command + " >" + shell_quote(out)), 0) << command;
  std::string s = read_file(out);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// The snapshot lines of a kind, with args.value parsed.
std::vector<nlohmann::json> snapshots(const parsed_trace& t, const std::string& name)
{
  std::vector<nlohmann::json> out;
  for (const auto& j : t.lines)
    if (j["ph"] == "M" && j["name"] == name) {
      EXPECT_EQ(j["cat"], "dftracer");
      EXPECT_TRUE(j.contains("ts") && j["ts"].get<int64_t>() > 0) << j.dump();
      out.push_back(nlohmann::json::parse(j["args"]["value"].get<std::string>()));
    }
  return out;
}

// path -> entry of the `when` snapshot of `dir`, checking its lines add up to its total.
std::map<std::string, nlohmann::json> files_at(const parsed_trace& t, const std::string& dir,
                                               const std::string& when)
{
  std::map<std::string, nlohmann::json> files;
  size_t total = 0;
  for (const auto& s : snapshots(t, "snapshot_files"))
    if (s["dir"] == dir && s["when"] == when) {
      EXPECT_EQ(s["first"].get<size_t>(), files.size());
      total = s["total"];
      for (const auto& e : s["entries"]) files[e["path"]] = e;
    }
  EXPECT_EQ(files.size(), total);
  return files;
}

struct env_var {
  std::string key;
  env_var(std::string k, const char* v) : key(std::move(k)) { setenv(key.c_str(), v, 1); }
  ~env_var() { unsetenv(key.c_str()); }
};

TEST_F(runtime_test, SnapshotsHoldTheTrueSystemCommandAndDirectory)
{
  std::string d = dir / "data";
  std::filesystem::create_directory(d);
  ASSERT_EQ(run_shell("printf hello > " + shell_quote(d + "/before.txt")), 0);
  std::string script = "head -c 12345 /dev/zero > " + d + "/a.bin; mkdir " + d +
                       "/sub; head -c 7 /dev/zero > " + d + "/sub/b.bin; rm " + d + "/before.txt";
  env_var rank("SLURM_PROCID", "5"), job("SLURM_JOB_ID", "777"), secret("NOT_KEPT_TOKEN", "x");
  auto run = trace_command(dir, "sh -c " + shell_quote(script), "--snapshot-dir " + shell_quote(d));
  ASSERT_EQ(run.exit_code, 0) << run.err;

  // The system spec.
  auto systems = snapshots(run.trace, "snapshot_system");
  ASSERT_EQ(systems.size(), 1u);
  const nlohmann::json& sys = systems[0];
  EXPECT_EQ(sys["cpus_usable"].get<uint64_t>(), std::stoull(output_of(dir, "nproc")));
  EXPECT_EQ(sys["cpu_count"].get<uint64_t>(),
            std::stoull(output_of(dir, "grep -c ^processor /proc/cpuinfo")));
  EXPECT_EQ(sys["kernel"], output_of(dir, "uname -r"));
  EXPECT_EQ(sys["machine"], output_of(dir, "uname -m"));
  EXPECT_EQ(sys["hostname"], output_of(dir, "uname -n"));
  EXPECT_EQ(sys["os"], output_of(dir, ". /etc/os-release && echo \"$PRETTY_NAME\""));
  struct sysinfo si {};
  ASSERT_EQ(sysinfo(&si), 0);
  EXPECT_EQ(sys["memory_bytes"].get<uint64_t>(), static_cast<uint64_t>(si.totalram) * si.mem_unit);
  // Every disk lsblk lists (with a size) is there with its size and rotational flag.
  std::map<std::string, nlohmann::json> devices;
  for (const auto& b : sys["block_devices"]) devices[b["name"]] = b;
  std::istringstream lsblk(output_of(dir, "lsblk -dnb -o NAME,SIZE,ROTA"));
  std::string name;
  uint64_t size = 0;
  int rota = 0;
  size_t listed = 0;
  while (lsblk >> name >> size >> rota) {
    if (size == 0)
      continue;
    ++listed;
    ASSERT_TRUE(devices.count(name)) << name;
    EXPECT_EQ(devices[name]["size_bytes"].get<uint64_t>(), size) << name;
    EXPECT_EQ(devices[name]["rotational"].get<bool>(), rota == 1) << name;
  }
  EXPECT_EQ(devices.size(), listed);
  // The mount the scratch directory lives on, as findmnt sees it.
  std::string target = output_of(dir, "findmnt -n -o TARGET -T " + shell_quote(d));
  std::string fstype = output_of(dir, "findmnt -n -o FSTYPE -T " + shell_quote(d));
  bool found = false;
  for (const auto& m : sys["mounts"]) found |= m["mount_point"] == target && m["fs_type"] == fstype;
  EXPECT_TRUE(found) << target << " " << fstype;

  // The command, snapshotted before its exec with what it ran with.
  uint64_t root_pid = 0;
  for (const auto& j : run.trace.lines)
    if (j["ph"] == "M" && j["name"] == "HH")
      root_pid = j["pid"];
  auto processes = snapshots(run.trace, "snapshot_process");
  const nlohmann::json* root = nullptr;
  for (const auto& p : processes)
    if (p["pid"] == root_pid)
      root = &p;
  ASSERT_NE(root, nullptr) << "no snapshot of the command";
  EXPECT_EQ((*root)["argv"], (std::vector<std::string>{"sh", "-c", script}));
  EXPECT_EQ((*root)["command"], "sh -c " + script);
  EXPECT_EQ((*root)["exe"], std::filesystem::canonical("/bin/sh").string());
  EXPECT_EQ((*root)["cwd"], std::filesystem::current_path().string());
  EXPECT_EQ((*root)["uid"], getuid());
  EXPECT_EQ((*root)["gid"], getgid());
  EXPECT_GT((*root)["ppid"].get<int64_t>(), 1);  // the tool that started it
  EXPECT_EQ((*root)["env"], (nlohmann::json{{"SLURM_PROCID", "5"}, {"SLURM_JOB_ID", "777"}}));
  EXPECT_EQ((*root)["rank"], 5);
  EXPECT_EQ((*root)["cgroup"], output_of(dir, "sed -n 's/^0:://p' /proc/self/cgroup"));
  // Its children are snapshotted when the trace first names them, with the command they ran.
  size_t heads = 0;
  for (const auto& p : processes) heads += p["command"] == "head -c 12345 /dev/zero" && p["ppid"] == root_pid;
  EXPECT_EQ(heads, 1u);

  // The directory at start and at end, each entry as stat(2) sees it.
  auto start = files_at(run.trace, d, "start");
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start[d + "/before.txt"]["size"], 5);
  auto end = files_at(run.trace, d, "end");
  ASSERT_EQ(end.size(), 3u);
  EXPECT_EQ(end[d + "/a.bin"]["size"], 12345);
  EXPECT_EQ(end[d + "/a.bin"]["type"], "file");
  EXPECT_EQ(end[d + "/sub"]["type"], "dir");
  EXPECT_EQ(end[d + "/sub/b.bin"]["size"], 7);
  for (const auto& [path, e] : end) {
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(e["mtime_us"].get<int64_t>(), st.st_mtim.tv_sec * 1000000ll + st.st_mtim.tv_nsec / 1000)
        << path;
    EXPECT_GE(e["mtime_us"].get<int64_t>() + 10000, static_cast<int64_t>(run.start_us)) << path;
  }
}

TEST_F(runtime_test, SnapshotOfAMissingDirectorySaysSo)
{
  // A directory that is not there at the start is a bad option value (one line, exit 2, nothing
  // run: bad_values_test); one the traced job removes, or replaces with a file, is recorded as
  // missing at the end.
  std::string gone = dir / "removed-by-the-job", replaced = dir / "replaced-by-a-file";
  std::filesystem::create_directory(gone);
  std::filesystem::create_directory(replaced);
  auto run =
      trace_command(dir,
                    "sh -c " + shell_quote("rmdir " + shell_quote(gone) + " && rmdir " +
                                           shell_quote(replaced) + " && echo x > " + shell_quote(replaced)),
                    "--snapshot-dir " + shell_quote(gone) + " --snapshot-dir " + shell_quote(replaced));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, std::vector<nlohmann::json>> by_dir;
  for (const auto& s : snapshots(run.trace, "snapshot_files"))
    by_dir[s["dir"].get<std::string>()].push_back(s);
  ASSERT_EQ(by_dir[gone].size(), 2u);  // start and end
  ASSERT_EQ(by_dir[replaced].size(), 2u);
  for (const auto& [d, lines] : by_dir) {
    EXPECT_FALSE(lines[0].contains("error")) << d << ": " << lines[0];  // there at the start
    EXPECT_EQ(lines[1]["total"], 0) << d;
  }
  EXPECT_EQ(by_dir[gone][1]["error"], "no such file or directory");
  EXPECT_EQ(by_dir[replaced][1]["error"], "not a directory");
}

// The daemon records the system at start and every registering process when the trace first
// names it, read from its /proc while it runs.
TEST_F(deploy_test, TheDaemonSnapshotsTheSystemAndEachRegisteredProcess)
{
  auto info = start_daemon(probes, "snap1");
  ASSERT_FALSE(info.is_null());
  std::string work = dir / "work";
  std::filesystem::create_directory(work);
  std::string script = "sleep 0.5; echo done > out.txt";
  ASSERT_EQ(run_shell("cd " + shell_quote(work) + " && env PMIX_RANK=2 SLURM_JOB_ID=99 " + bin_dir +
                      "/datacrumbs_wrap sh -c " + shell_quote(script)),
            0);
  stop_daemon("snap1");

  auto trace = parse_trace_text(read_gzip_members(info["trace"]).text);
  auto systems = snapshots(trace, "snapshot_system");
  ASSERT_EQ(systems.size(), 1u);
  EXPECT_EQ(systems[0]["kernel"], output_of(dir, "uname -r"));
  auto processes = snapshots(trace, "snapshot_process");
  const nlohmann::json* sh = nullptr;
  for (const auto& p : processes)
    if (p["command"] == "sh -c " + script)
      sh = &p;
  ASSERT_NE(sh, nullptr) << "no snapshot of the registered process";
  EXPECT_EQ((*sh)["argv"], (std::vector<std::string>{"sh", "-c", script}));
  EXPECT_EQ((*sh)["cwd"], work);
  EXPECT_EQ((*sh)["uid"], getuid());
  EXPECT_EQ((*sh)["env"]["PMIX_RANK"], "2");
  EXPECT_EQ((*sh)["env"]["SLURM_JOB_ID"], "99");
  EXPECT_EQ((*sh)["rank"], 2);
  EXPECT_EQ((*sh)["exe"], std::filesystem::canonical("/bin/sh").string());
}

}  // namespace
}  // namespace dc::test
