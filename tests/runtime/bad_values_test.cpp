// Every option of every tool with bad values: non-numbers, negatives, huge numbers, empty
// strings, paths that do not exist, directories where files are expected, files where
// directories are. Each is one line on stderr naming the problem, nothing on stdout, its exit
// code (2: a bad value; 126/127: a command that cannot run, as a shell says), and nothing
// written: the tool runs in a scratch directory whose contents must not change.
#include <filesystem>
#include <fstream>
#include <set>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

struct bad_value {
  const char* tool;  // in the build's bin/
  std::string args;  // a shell word list, run in the scratch directory
  int exit_code;
  std::string mentions;  // the line names this
  std::string env = "";  // NAME=VALUE words set for the tool
};

const std::string long_name(65, 'x');
const std::string long_socket(120, 's');

const std::vector<bad_value> cases = {
    // datacrumbs run: numbers
    {"datacrumbs", "run --ring-mb abc -- touch ran", 2, "--ring-mb: 'abc' is not a whole number"},
    {"datacrumbs", "run --ring-mb -1 -- touch ran", 2, "'-1' is not a whole number"},
    {"datacrumbs", "run --ring-mb 0 -- touch ran", 2, "'0' is out of range (1 to 2048)"},
    {"datacrumbs", "run --ring-mb 99999999999999999999999 -- touch ran", 2, "is out of range"},
    {"datacrumbs", "run --ring-mb 3 -- touch ran", 2, "'3' is not a power of two"},
    {"datacrumbs", "run --ring-mb '' -- touch ran", 2, "--ring-mb: '' is not a whole number"},
    {"datacrumbs", "run --ring-mb 1.5 -- touch ran", 2, "'1.5' is not a whole number"},
    {"datacrumbs", "run --interval-ms abc -- touch ran", 2, "--interval-ms: 'abc'"},
    {"datacrumbs", "run --interval-ms 5 -- touch ran", 2, "'5' is out of range (10 to 3600000)"},
    {"datacrumbs", "run --interval-ms 18446744073709551616 -- touch ran", 2, "is out of range"},
    {"datacrumbs", "run --keep-loaded soon -- touch ran", 2, "--keep-loaded: 'soon' is not a whole number"},
    {"datacrumbs", "run --keep-loaded -1 -- touch ran", 2, "'-1' is not a whole number"},
    {"datacrumbs", "run --keep-loaded 86401 -- touch ran", 2, "'86401' is out of range (0 to 86400)"},
    {"datacrumbs", "run --process-detail many -- touch ran", 2,
     "--process-detail: 'many' is not a whole number"},
    {"datacrumbs", "run --process-detail -5 -- touch ran", 2, "'-5' is not a whole number"},
    {"datacrumbs", "run --process-detail 1000000001 -- touch ran", 2,
     "'1000000001' is out of range (0 to 1000000000)"},
    {"datacrumbs", "run --mode '' -- touch ran", 2, "--mode"},
    {"datacrumbs", "run --mode fast -- touch ran", 2, "--mode"},
    // datacrumbs run and the daemon: the hold ring's size (an environment variable)
    {"datacrumbs", "run -- touch ran", 2,
     "DATACRUMBS_HOLD_RING_KB (the hold ring's size in KiB): 'abc' is not", "DATACRUMBS_HOLD_RING_KB=abc"},
    {"datacrumbs", "run -- touch ran", 2, "'12' is not a power of two", "DATACRUMBS_HOLD_RING_KB=12"},
    {"datacrumbs", "run -- touch ran", 2, "'2' is out of range (4 to 1048576)", "DATACRUMBS_HOLD_RING_KB=2"},
    {"datacrumbs", "run -- touch ran", 2, "'2097152' is out of range", "DATACRUMBS_HOLD_RING_KB=2097152"},
    {"datacrumbs", "run -- touch ran", 2, "'-64' is not a whole number", "DATACRUMBS_HOLD_RING_KB=-64"},
    {"datacrumbs", "run -- touch ran", 2, "' 64' is not a whole number", "DATACRUMBS_HOLD_RING_KB=' 64'"},
    {"datacrumbs", "probes.json.gz", 2, "DATACRUMBS_HOLD_RING_KB (the hold ring's size in KiB): '1.5'",
     "DATACRUMBS_HOLD_RING_KB=1.5"},
    // datacrumbs run: output paths (nothing created, not even the trace)
    {"datacrumbs", "run -o missing/t.pfw.gz -- touch ran", 2, "directory 'missing' does not exist"},
    {"datacrumbs", "run -o dir -- touch ran", 2, "--output: 'dir' is a directory"},
    {"datacrumbs", "run -o '' -- touch ran", 2, "--output: an empty path"},
    {"datacrumbs", "run -o file.txt/t.pfw.gz -- touch ran", 2, "'file.txt' is not a directory"},
    {"datacrumbs", "run --summary missing/s.json -o out.pfw.gz -- touch ran", 2, "--summary"},
    {"datacrumbs", "run --summary dir -o out.pfw.gz -- touch ran", 2, "--summary: 'dir' is a directory"},
    {"datacrumbs", "run --summary '' -o out.pfw.gz -- touch ran", 2, "--summary: an empty path"},
    // datacrumbs run: inputs
    {"datacrumbs", "run --config missing.yaml -o out.pfw.gz -- touch ran", 2,
     "'missing.yaml' does not exist"},
    {"datacrumbs", "run --config dir -o out.pfw.gz -- touch ran", 2, "--config: 'dir' is a directory"},
    {"datacrumbs", "run --config '' -o out.pfw.gz -- touch ran", 2, "--config: an empty path"},
    {"datacrumbs", "run --config bad.yaml -o out.pfw.gz -- touch ran", 2, "capture_probes[0]"},
    {"datacrumbs", "run --snapshot-dir missing -o out.pfw.gz -- touch ran", 2, "'missing' does not exist"},
    {"datacrumbs", "run --snapshot-dir file.txt -o out.pfw.gz -- touch ran", 2,
     "'file.txt' is not a directory"},
    {"datacrumbs", "run --layers '' -- touch ran", 2, "--layers"},
    {"datacrumbs", "run --layers syscall,,fs -- touch ran", 2, "has an empty name"},
    {"datacrumbs", "run --layers fs, -- touch ran", 2, "has an empty name"},
    {"datacrumbs", "run --layers nosuchlayer -- touch ran", 2, "nosuchlayer"},
    {"datacrumbs", "run --system '' -- touch ran", 2, "--system"},
    {"datacrumbs", "run --system noequals -- touch ran", 2, "LABEL=REGEX"},
    {"datacrumbs", "run --system 'X=([' -- touch ran", 2, "invalid regex"},
    {"datacrumbs", "run --bogus -- touch ran", 2, "--bogus"},
    {"datacrumbs", "run", 2, "command"},
    {"datacrumbs", "run -o out.pfw.gz -- ''", 2, "empty command name"},
    {"datacrumbs", "run -o out.pfw.gz -- ./missing-command", 127, "command not found"},
    {"datacrumbs", "run -o out.pfw.gz -- ./file.txt", 126, "command not executable"},
    {"datacrumbs", "run -o out.pfw.gz -- ./dir", 126, "command not executable"},
    // datacrumbs run: the live views (nothing printed, nothing traced)
    {"datacrumbs", "run --print --print-file missing/p.txt -- touch ran", 2,
     "directory 'missing' does not exist"},
    {"datacrumbs", "run --print --print-file dir -- touch ran", 2, "--print-file: 'dir' is a directory"},
    {"datacrumbs", "run --print --print-file '' -- touch ran", 2, "--print-file: an empty path"},
    {"datacrumbs", "run --print-file p.txt -- touch ran", 2, "--print-file requires --print"},
    {"datacrumbs", "run --print-filter POSIX -- touch ran", 2, "--print-filter requires --print"},
    {"datacrumbs", "run --print --print-filter NOPE -- touch ran", 2, "--print-filter: no layer 'NOPE'"},
    {"datacrumbs", "run --print --print-filter '' -- touch ran", 2, "--print-filter: no layer ''"},
    {"datacrumbs", "run --print --mode profile -- touch ran", 2, "profile mode writes counters"},
    {"datacrumbs", "run --live --print -- touch ran", 2, "--print and --live both write to stdout"},
    // datacrumbs live RUN-ID
    {"datacrumbs", "live", 2, "run-id is required"},
    {"datacrumbs", "live --once", 2, "run-id is required"},
    {"datacrumbs", "live ''", 2, "invalid run id ''"},
    {"datacrumbs", "live ../up", 2, "invalid run id '../up'"},
    {"datacrumbs", "live " + long_name, 2, "invalid run id"},
    {"datacrumbs", "live a b", 2, "not expected: b"},
    {"datacrumbs", "frobnicate", 2, "unknown command 'frobnicate'"},
    // datacrumbs analyze
    {"datacrumbs", "analyze missing.pfw.gz", 2, "'missing.pfw.gz' does not exist"},
    {"datacrumbs", "analyze ''", 2, "an empty path"},
    {"datacrumbs", "analyze", 2, "paths"},
    {"datacrumbs", "analyze --threads 0 dir", 2, "--threads: '0' is out of range (1 to 4096)"},
    {"datacrumbs", "analyze --threads abc dir", 2, "--threads: 'abc' is not a whole number"},
    {"datacrumbs", "analyze --threads 99999999999 dir", 2, "is out of range"},
    {"datacrumbs", "analyze --bin-ms -5 dir", 2, "--bin-ms: '-5' is not a whole number"},
    {"datacrumbs", "analyze --bin-ms 0 dir", 2, "--bin-ms: '0' is out of range"},
    {"datacrumbs", "analyze --clock-skew-us -1 dir", 2, "--clock-skew-us: '-1' is not a whole number"},
    {"datacrumbs", "analyze --clock-skew-us 99999999999999 dir", 2,
     "--clock-skew-us: '99999999999999' is out of range"},
    {"datacrumbs", "analyze --json missing/r.json dir", 2, "--json"},
    {"datacrumbs", "analyze --json dir dir", 2, "--json: 'dir' is a directory"},
    {"datacrumbs", "analyze --html '' dir", 2, "--html: an empty path"},
    {"datacrumbs", "analyze --partial file.txt/p.json dir", 2, "--partial"},
    {"datacrumbs", "analyze --csv file.txt dir", 2, "--csv: 'file.txt' exists and is not a directory"},
    {"datacrumbs", "analyze --csv file.txt/sub dir", 2, "'file.txt' is not a directory"},
    {"datacrumbs", "analyze --csv '' dir", 2, "--csv: an empty path"},
    {"datacrumbs", "analyze --merge missing.json", 2, "does not exist"},
    {"datacrumbs", "analyze --merge dir", 2, "'dir' is a directory"},
    {"datacrumbs", "analyze --merge --partial p.json dir", 2, "--partial takes traces"},
    // datacrumbs explore, layers
    {"datacrumbs", "explore ''", 2, "target: an empty value"},
    {"datacrumbs", "explore", 2, "explore takes"},
    {"datacrumbs", "explore nosuchlibrary.so", 2, "cannot find 'nosuchlibrary.so'"},
    {"datacrumbs", "explore ./missing", 2, "'./missing' does not exist"},
    {"datacrumbs", "explore ./dir", 2, "'./dir' is not a file"},
    {"datacrumbs", "explore ./file.txt", 2, "not an ELF file"},
    {"datacrumbs", "explore libc.so.6 --regex '('", 2, "--regex"},
    {"datacrumbs", "explore --kernel libc.so.6", 2, "explore takes"},
    {"datacrumbs", "layers extra", 2, "extra"},
    {"datacrumbs", "layers --bogus", 2, "--bogus"},
    // the daemon: datacrumbs SIGNED-PROBES.json.gz [RUN-ID]
    {"datacrumbs", "missing.json.gz", 2, "probe file 'missing.json.gz' does not exist"},
    {"datacrumbs", "dir.json.gz", 2, "'dir.json.gz' is a directory"},
    {"datacrumbs", "probes.json.gz ''", 2, "invalid run id ''"},
    {"datacrumbs", "probes.json.gz ../up", 2, "invalid run id '../up'"},
    {"datacrumbs", "probes.json.gz ..", 2, "invalid run id '..'"},
    {"datacrumbs", "probes.json.gz " + long_name, 2, "invalid run id"},
    {"datacrumbs", "probes.json.gz \"$(printf 'a\\nb')\"", 2, "invalid run id 'a\\nb'"},
    {"datacrumbs", "probes.json.gz a b", 2, "usage"},
    // datacrumbs_probe_configurator
    {"datacrumbs_probe_configurator", "", 2, "config is required"},
    {"datacrumbs_probe_configurator", "missing.yaml out.json.gz", 2, "'missing.yaml' does not exist"},
    {"datacrumbs_probe_configurator", "dir out.json.gz", 2, "'dir' is a directory"},
    {"datacrumbs_probe_configurator", "config.yaml missing/out.json.gz", 2,
     "directory 'missing' does not exist"},
    {"datacrumbs_probe_configurator", "config.yaml dir", 2, "'dir' is a directory"},
    {"datacrumbs_probe_configurator", "config.yaml ''", 2, "an empty path"},
    {"datacrumbs_probe_configurator", "--user '' config.yaml out.json.gz", 2, "--user: an empty value"},
    {"datacrumbs_probe_configurator", "--user nosuchuser123 config.yaml out.json.gz", 2, "unknown user"},
    {"datacrumbs_probe_configurator", "--user 99999999999 config.yaml out.json.gz", 2, "is out of range"},
    {"datacrumbs_probe_configurator", "--user -1 config.yaml out.json.gz", 2, "unknown user '-1'"},
    {"datacrumbs_probe_configurator", "bad.yaml out.json.gz", 2, "capture_probes[0]"},
    // datacrumbs_sign_probes (root; refused before it listens)
    {"datacrumbs_sign_probes", "--socket ''", 2, "--socket: an empty path"},
    {"datacrumbs_sign_probes", "--socket dir", 2, "'dir' is a directory"},
    {"datacrumbs_sign_probes", "--socket file.txt/sign.sock", 2, "'file.txt' exists and is not a directory"},
    {"datacrumbs_sign_probes", "--socket " + long_socket, 2, "longer than a UNIX socket path can be"},
    {"datacrumbs_sign_probes", "extra", 2, "extra"},
    // datacrumbs_track / datacrumbs_untrack
    {"datacrumbs_track", "", 2, "--executable is required"},
    {"datacrumbs_track", "--executable ''", 2, "an empty path"},
    {"datacrumbs_track", "--executable missing", 2, "'missing' does not exist"},
    {"datacrumbs_track", "--executable dir", 2, "'dir' is a directory"},
    {"datacrumbs_track", "--executable file.txt", 2, "not an ELF file"},
    {"datacrumbs_track", "--executable " STATIC_APP_BIN, 2, "statically linked"},
    {"datacrumbs_untrack", "--executable missing", 2, "'missing' does not exist"},
    {"datacrumbs_untrack", "--executable file.txt", 2, "not an ELF file"},
    // datacrumbs_job_metadata (any text is a job's comment: only a malformed request is an error)
    {"datacrumbs_job_metadata", "", 2, "usage"},
    {"datacrumbs_job_metadata", "--at a.b", 2, "usage"},
    {"datacrumbs_job_metadata", "a b", 2, "usage"},
    {"datacrumbs_job_metadata", "'{\"datacrumbs\":1}'", 2, "is not an object"},
    {"datacrumbs_job_metadata", "'{\"datacrumbs\":{\"enable\":\"maybe\"}}'", 2, "\"enable\" must be"},
    {"datacrumbs_job_metadata", "'{\"datacrumbs\":{\"enable\":\"yes\",\"probe_file\":\"rel\"}}'", 2,
     "absolute path"},
    {"datacrumbs_job_metadata", "'{\"datacrumbs\":{\"enable\":\"yes\",\"x\":1}}'", 2,
     "unknown datacrumbs setting"},
    {"datacrumbs_job_metadata", "'{\"datacrumbs\":'", 2, "not valid JSON"},
    // datacrumbs-dask
    {"datacrumbs-dask", "missing.pfw.gz", 2, "'missing.pfw.gz' does not exist"},
    {"datacrumbs-dask", "''", 2, "an empty path"},
    {"datacrumbs-dask", "", 2, "PATH"},
    {"datacrumbs-dask", "--workers abc dir", 2, "--workers: 'abc' is not a whole number"},
    {"datacrumbs-dask", "--workers 0 dir", 2, "--workers: '0' is out of range"},
    {"datacrumbs-dask", "--workers 99999999 dir", 2, "is out of range"},
    {"datacrumbs-dask", "--parts -1 dir", 2, "--parts"},
    {"datacrumbs-dask", "--threads 0 dir", 2, "--threads: '0' is out of range"},
    {"datacrumbs-dask", "--bin-ms x dir", 2, "--bin-ms: 'x' is not a whole number"},
    {"datacrumbs-dask", "--clock-skew-us 1.5 dir", 2, "--clock-skew-us: '1.5' is not a whole number"},
    {"datacrumbs-dask", "--json missing/r.json dir", 2, "directory 'missing' does not exist"},
    {"datacrumbs-dask", "--json dir dir", 2, "'dir' is a directory"},
    {"datacrumbs-dask", "--html '' dir", 2, "--html: an empty path"},
    {"datacrumbs-dask", "--csv file.txt dir", 2, "'file.txt' exists and is not a directory"},
    {"datacrumbs-dask", "--datacrumbs missing dir", 2, "'missing' is not an executable file"},
    {"datacrumbs-dask", "--datacrumbs dir dir", 2, "'dir' is not an executable file"},
    {"datacrumbs-dask", "--scheduler '' dir", 2, "--scheduler: an empty value"},
    {"datacrumbs-dask", "--scheduler abc dir", 2, "--scheduler: missing port number"},
    {"datacrumbs-dask", "--scheduler tcp://localhost:1 --workers 2 dir", 2, "not with --scheduler"},
    {"datacrumbs-dask", "--bogus dir", 2, "--bogus"},
    // datacrumbs_wrap
    {"datacrumbs_wrap", "", 2, "usage"},
    {"datacrumbs_wrap", "''", 2, "empty command name"},
    {"datacrumbs_wrap", "./missing", 127, "command not found: ./missing"},
    {"datacrumbs_wrap", "missing-command-xyz", 127, "command not found: missing-command-xyz"},
    {"datacrumbs_wrap", "./dir", 126, "command not executable: ./dir"},
    {"datacrumbs_wrap", "./file.txt", 126, "command not executable: ./file.txt"},
};

// Every path under root with its size: what a refused command must leave as it was.
std::set<std::string> contents(const std::string& root)
{
  std::set<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    // Appended, not `" " + std::to_string(...)`: GCC 12 at -O3 reports a false -Wrestrict there.
    std::string entry = e.path().string();
    if (e.is_regular_file())
      entry.append(" ").append(std::to_string(e.file_size()));
    else
      entry.append("/");
    out.insert(entry);
  }
  return out;
}

TEST_F(runtime_test, EveryOptionsBadValueIsOneLineAndNothingWritten)
{
  // What the options point at: a file, a directory, configs, a probe file's name.
  std::filesystem::create_directory(dir / "dir");
  std::filesystem::create_directory(dir / "dir.json.gz");
  std::ofstream(dir / "file.txt") << "not a program\n";
  std::ofstream(dir / "probes.json.gz") << "not checked before the run id\n";
  std::ofstream(dir / "config.yaml") << "capture_probes:\n  - name: POSIX\n    probe: syscalls\n";
  std::ofstream(dir / "bad.yaml") << "capture_probes:\n  - name: X\n    probe: uprobe\n    file: libc.so.6\n"
                                     "    regex: '(['\n";
  const auto before = contents(dir.path);
  scratch_dir out;  // stdout and stderr, outside the directory watched
  const std::string bin = std::string(DATACRUMBS_BUILD_DIR) + "/bin/";
  for (const bad_value& c : cases) {
    std::string line = std::string(c.tool) + " " + c.args;
    SCOPED_TRACE(c.env + " " + line);
    int got = run_shell("cd " + shell_quote(dir.path) + " && " + c.env + " " + bin + line + " >" +
                        shell_quote(out / "out") + " 2>" + shell_quote(out / "err") + " </dev/null");
    std::string err = read_file(out / "err");
    EXPECT_EQ(got, c.exit_code) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find(c.mentions), std::string::npos) << err;
    EXPECT_EQ(read_file(out / "out"), "");
    EXPECT_EQ(contents(dir.path), before) << "something was written";
  }
}

}  // namespace
}  // namespace dc::test
