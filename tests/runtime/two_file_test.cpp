// Calls that move data between two files (copy_file_range, sendfile, splice, tee, vmsplice): the
// bytes each moved are read from its input and written to its output, per file, in the trace
// (fhash: input, fhash2: output), the summary's `files` and amplification, profile mode's
// counters and `datacrumbs analyze`, against the sizes the workload moved
// (tests/runtime/two_file_calls.c), the files' sizes and the kernel's own /proc/PID/io.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

// Sizes not a multiple of the page: partial pages at the end of each file.
constexpr uint64_t cfr_bytes = 300000, sf_bytes = 200000, sock_bytes = 150000, splice_bytes = 100000;
constexpr uint64_t tee_bytes = 12288, vmsplice_bytes = 8192;  // two_file_calls.c's TEE/VMSPLICE_BYTES

struct step_counts {
  uint64_t bytes = 0;
  int64_t rchar = -1, wchar = -1;  // growth of /proc/self/io over the step's calls
};

struct flow {
  uint64_t read_bytes = 0, write_bytes = 0, reads = 0, writes = 0;
  bool operator==(const flow&) const = default;
};

void make_file(const std::string& path, uint64_t bytes)
{
  std::string data(bytes, '\0');
  for (uint64_t i = 0; i < bytes; ++i) data[i] = static_cast<char>('a' + i % 23);
  std::ofstream(path, std::ios::binary) << data;
}

// The summary's POSIX flow of one file (all zero when the file has none).
flow summary_flow(const nlohmann::json& files, const std::string& path)
{
  if (!files.contains(path) || !files[path].contains("POSIX"))
    return {};
  const auto& p = files[path]["POSIX"];
  return {p["read_bytes"], p["write_bytes"], p["reads"], p["writes"]};
}

struct two_file_run : runtime_test {
  std::map<std::string, step_counts> steps;
  traced_run run;

  void trace_workload(const std::string& tool_args)
  {
    make_file(dir / "cfr.in", cfr_bytes);
    make_file(dir / "sf.in", sf_bytes);
    make_file(dir / "sock.in", sock_bytes);
    make_file(dir / "splice.in", splice_bytes);
    std::string out = dir / "steps.txt";
    std::string workload =
        std::string(TWO_FILE_CALLS_BIN) + " " + shell_quote(dir.path) + " > " + shell_quote(out);
    run = trace_command(dir, "sh -c " + shell_quote(workload), tool_args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.summary["events"]["lost"], 0);
    std::istringstream in(read_file(out));
    std::string name;
    step_counts c;
    while (in >> name >> c.bytes >> c.rchar >> c.wchar) steps[name] = c;
    ASSERT_EQ(steps.size(), 6u) << read_file(out);
  }

  // What the workload moved, checked against the files it made and the kernel's own counts.
  void expect_ground_truth()
  {
    namespace fs = std::filesystem;
    EXPECT_EQ(fs::file_size(dir / "cfr.out"), cfr_bytes);
    EXPECT_EQ(fs::file_size(dir / "sf.out"), sf_bytes);
    EXPECT_EQ(fs::file_size(dir / "splice.out"), splice_bytes);
    EXPECT_EQ(steps["copy_file_range"].bytes, cfr_bytes);
    EXPECT_EQ(steps["sendfile_file"].bytes, sf_bytes);
    EXPECT_EQ(steps["sendfile_socket"].bytes, sock_bytes);
    EXPECT_EQ(steps["splice"].bytes, splice_bytes);
    EXPECT_EQ(steps["tee"].bytes, tee_bytes);
    EXPECT_EQ(steps["vmsplice"].bytes, vmsplice_bytes);
    // The kernel counts copy_file_range and sendfile as read and written (rchar, wchar); it does
    // not count splice, tee or vmsplice at all, so their truth is the sizes above.
    EXPECT_EQ(steps["copy_file_range"].rchar, static_cast<int64_t>(cfr_bytes));
    EXPECT_EQ(steps["copy_file_range"].wchar, static_cast<int64_t>(cfr_bytes));
    EXPECT_EQ(steps["sendfile_file"].rchar, static_cast<int64_t>(sf_bytes));
    EXPECT_EQ(steps["sendfile_file"].wchar, static_cast<int64_t>(sf_bytes));
    EXPECT_EQ(steps["sendfile_socket"].wchar, static_cast<int64_t>(sock_bytes));
  }

  // Per file: each input read once per call, each output written, nothing charged the other way.
  void expect_files(const nlohmann::json& files, const std::map<std::string, uint64_t>& calls)
  {
    auto expect = [&](const std::string& name, flow want) {
      EXPECT_EQ(summary_flow(files, dir / name), want) << name << ": " << files.dump();
    };
    expect("cfr.in", {cfr_bytes, 0, calls.at("copy_file_range"), 0});
    expect("cfr.out", {0, cfr_bytes, 0, calls.at("copy_file_range")});
    expect("sf.in", {sf_bytes, 0, calls.at("sendfile_file"), 0});
    expect("sf.out", {0, sf_bytes, 0, calls.at("sendfile_file")});
    expect("sock.in", {sock_bytes, 0, calls.at("sendfile_socket"), 0});  // the socket is no file data
    expect("splice.in", {splice_bytes, 0, calls.at("splice_in"), 0});
    expect("splice.out", {0, splice_bytes, 0, calls.at("splice_out")});
    for (const auto& [path, f] : files.items())
      EXPECT_FALSE(path.starts_with("pipe:[") || path.starts_with("socket:[")) << path << " is not file data";
  }

  // datacrumbs analyze on the trace: Darshan's POSIX bytes (trace mode) and the amplification
  // table per file equal the summary's.
  void expect_analyze(bool darshan)
  {
    std::string cmd = std::string(DATACRUMBS_BIN) + " analyze " + shell_quote(dir / "trace.pfw.gz") +
                      " --json " + shell_quote(dir / "report.json") + " --no-progress > /dev/null";
    ASSERT_EQ(run_shell(cmd), 0) << cmd;
    auto report = nlohmann::json::parse(read_file(dir / "report.json"));
    for (const char* name : {"cfr.in", "cfr.out", "sf.in", "sf.out", "sock.in", "splice.in", "splice.out"}) {
      std::string path = dir / name;
      flow want = summary_flow(run.summary["files"], path);
      const nlohmann::json* amp = nullptr;
      for (const auto& f : report["amplification"]["files"])
        if (f["file"] == path)
          amp = &f;
      ASSERT_NE(amp, nullptr) << name << " missing from analyze's amplification";
      const auto& p = (*amp)["POSIX"];
      EXPECT_EQ((flow{p["read_bytes"], p["write_bytes"], p["reads"], p["writes"]}), want) << name;
      if (!darshan)
        continue;
      const nlohmann::json* rec = nullptr;
      for (const auto& f : report["files"])
        if (f["file"] == path)
          rec = &f;
      ASSERT_NE(rec, nullptr) << name << " missing from analyze's file counters";
      EXPECT_EQ((*rec)["counters"]["POSIX_BYTES_READ"], want.read_bytes) << name;
      EXPECT_EQ((*rec)["counters"]["POSIX_BYTES_WRITTEN"], want.write_bytes) << name;
      EXPECT_EQ((*rec)["counters"]["POSIX_READS"], want.reads) << name;
      EXPECT_EQ((*rec)["counters"]["POSIX_WRITES"], want.writes) << name;
    }
  }
};

TEST_F(two_file_run, TraceChargesEachTwoFileCallToItsInputAndOutput)
{
  trace_workload("");
  expect_ground_truth();
  auto names = file_names(run.trace);
  auto named = [&](const nlohmann::json& args, const char* key) {
    return args.contains(key) ? names[args[key].get<uint64_t>()] : std::string();
  };
  // Per call: its input and output, by name, and the bytes it returned.
  std::map<std::string, uint64_t> calls, bytes;
  for (const auto& e : complete_events(run.trace)) {
    if (e["cat"] != "POSIX")
      continue;
    std::string name = e["name"];
    if (name != "copy_file_range" && name != "sendfile" && name != "splice" && name != "tee" &&
        name != "vmsplice")
      continue;
    const auto& args = e["args"];
    ASSERT_GT(args["ret"].get<int64_t>(), 0) << e.dump();
    std::string in = named(args, "fhash"), out = named(args, "fhash2");
    std::string step = name;
    if (name == "copy_file_range") {
      EXPECT_EQ(in, dir / "cfr.in");
      EXPECT_EQ(out, dir / "cfr.out");
    } else if (name == "sendfile") {
      EXPECT_TRUE(in == dir / "sf.in" || in == dir / "sock.in") << in;
      step = in == dir / "sf.in" ? "sendfile_file" : "sendfile_socket";
      EXPECT_EQ(out, step == "sendfile_file" ? dir / "sf.out" : out);
      if (step == "sendfile_socket") {
        EXPECT_TRUE(out.starts_with("socket:[")) << out;
      }
    } else if (name == "splice") {
      step = in == dir / "splice.in" ? "splice_in" : "splice_out";
      EXPECT_TRUE(step == "splice_in" ? out.starts_with("pipe:[") : in.starts_with("pipe:["))
          << in << " " << out;
      if (step == "splice_out") {
        EXPECT_EQ(out, dir / "splice.out");
      }
    } else if (name == "tee") {
      EXPECT_TRUE(in.starts_with("pipe:[") && out.starts_with("pipe:[") && in != out) << in << " " << out;
    } else {
      EXPECT_TRUE(in.starts_with("pipe:[")) << in;
      EXPECT_FALSE(args.contains("fhash2"));
    }
    EXPECT_TRUE(args.contains("fd") && (name == "vmsplice" || args.contains("out_fd"))) << e.dump();
    ++calls[step];
    bytes[step] += args["ret"].get<uint64_t>();
  }
  EXPECT_EQ(bytes["copy_file_range"], cfr_bytes);
  EXPECT_EQ(bytes["sendfile_file"], sf_bytes);
  EXPECT_EQ(bytes["sendfile_socket"], sock_bytes);
  EXPECT_EQ(bytes["splice_in"], splice_bytes);
  EXPECT_EQ(bytes["splice_out"], splice_bytes);
  EXPECT_EQ(bytes["tee"], tee_bytes);
  EXPECT_EQ(bytes["vmsplice"], vmsplice_bytes);
  expect_files(run.summary["files"], calls);
  // The POSIX layer read and wrote every file byte the copies moved.
  const auto& layer = run.summary["layers"]["POSIX"];
  EXPECT_EQ(layer["copy_file_range"]["bytes"], cfr_bytes);
  EXPECT_EQ(layer["sendfile"]["bytes"], sf_bytes + sock_bytes);
  EXPECT_EQ(layer["splice"]["bytes"], 2 * splice_bytes);
  EXPECT_EQ(layer["tee"]["bytes"], tee_bytes);
  EXPECT_EQ(layer["vmsplice"]["bytes"], vmsplice_bytes);
  expect_analyze(true);
}

TEST_F(two_file_run, ProfileCountersChargeBothFilesOfEachCopy)
{
  trace_workload("--mode profile --interval-ms 50");
  expect_ground_truth();
  auto names = file_names(run.trace);
  // Per call name and (input, output): calls and bytes summed over the intervals.
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<uint64_t, uint64_t>> sums;
  for (const auto& e : run.trace.lines) {
    if (e["ph"] != "C" || e["cat"] != "POSIX")
      continue;
    auto& s = sums[{e["name"], names[e.value("fhash", 0ull)], names[e.value("fhash2", 0ull)]}];
    s.first += e["args"]["count"].get<uint64_t>();
    s.second += e["args"]["bytes"].get<uint64_t>();
  }
  auto bytes_of = [&](const std::string& name, const std::string& in, const std::string& out) {
    auto it = sums.find({name, in, out});
    return it == sums.end() ? 0 : it->second.second;
  };
  EXPECT_EQ(bytes_of("copy_file_range", dir / "cfr.in", dir / "cfr.out"), cfr_bytes);
  EXPECT_EQ(bytes_of("sendfile", dir / "sf.in", dir / "sf.out"), sf_bytes);
  std::map<std::string, uint64_t> calls;
  uint64_t sock = 0, splice_in = 0, splice_out = 0, tee = 0, vmsplice = 0;
  for (const auto& [key, s] : sums) {
    const auto& [name, in, out] = key;
    if (name == "sendfile" && in == dir / "sock.in" && out.starts_with("socket:["))
      sock += s.second, calls["sendfile_socket"] += s.first;
    if (name == "splice" && in == dir / "splice.in" && out.starts_with("pipe:["))
      splice_in += s.second, calls["splice_in"] += s.first;
    if (name == "splice" && in.starts_with("pipe:[") && out == dir / "splice.out")
      splice_out += s.second, calls["splice_out"] += s.first;
    if (name == "tee" && in.starts_with("pipe:[") && out.starts_with("pipe:[") && in != out)
      tee += s.second;
    if (name == "vmsplice" && in.starts_with("pipe:[") && out.empty())
      vmsplice += s.second;
    if (name == "copy_file_range")
      calls["copy_file_range"] += s.first;
    if (name == "sendfile" && in == dir / "sf.in")
      calls["sendfile_file"] += s.first;
  }
  EXPECT_EQ(sock, sock_bytes);
  EXPECT_EQ(splice_in, splice_bytes);
  EXPECT_EQ(splice_out, splice_bytes);
  EXPECT_EQ(tee, tee_bytes);
  EXPECT_EQ(vmsplice, vmsplice_bytes);
  expect_files(run.summary["files"], calls);
  expect_analyze(false);  // Darshan's counters come from spans; profile mode has none
}

TEST_F(two_file_run, CpChargesTheSourceReadAndTheCopyWritten)
{
  constexpr uint64_t size = 1000000;
  make_file(dir / "a", size);
  run = trace_command(dir, "cp " + shell_quote(dir / "a") + " " + shell_quote(dir / "b"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(std::filesystem::file_size(dir / "b"), size);
  uint64_t copied = 0;
  for (const auto& e : complete_events(run.trace))
    if (e["name"] == "copy_file_range" && e["args"]["ret"].get<int64_t>() > 0)
      copied += e["args"]["ret"].get<uint64_t>();
  EXPECT_EQ(copied, size) << "cp copies with copy_file_range here";
  flow a = summary_flow(run.summary["files"], dir / "a"), b = summary_flow(run.summary["files"], dir / "b");
  EXPECT_EQ(a.read_bytes, size);
  EXPECT_EQ(a.write_bytes, 0u);
  EXPECT_EQ(b.write_bytes, size);
  EXPECT_EQ(b.read_bytes, 0u);
  EXPECT_EQ(run.summary["amplification"]["bytes"]["POSIX"]["read"].get<uint64_t>() >= size, true);
  EXPECT_EQ(run.summary["amplification"]["bytes"]["POSIX"]["write"].get<uint64_t>() >= size, true);
}

// The copy's amplification per file on a disk of its own: from a cold cache, the input's data
// is read from the device once and the output's written once (sync inside the run), whole 4 KiB
// blocks of each; /proc/diskstats holds at least that (and the journal's and metadata's too).
TEST_F(two_file_run, CopysAmplificationPerFileIsItsBlocksOverItsBytes)
{
  constexpr uint64_t size = 1000000, on_disk = (size + 4095) / 4096 * 4096;
  loop_fs disk(dir.path, "ext4");
  std::string a = disk.mount_point() + "/a", b = disk.mount_point() + "/b";
  make_file(a, size);
  disk.drop_caches();
  disk_counters before = disk.counters();
  run =
      trace_command(dir, "sh -c " + shell_quote("cp " + shell_quote(a) + " " + shell_quote(b) + " && sync"));
  disk_counters after = disk.counters();
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto& files = run.summary["files"];
  ASSERT_TRUE(files.contains(a) && files.contains(b)) << files.dump(1);
  EXPECT_EQ(summary_flow(files, a), (flow{size, 0, 1, 0}));
  EXPECT_EQ(summary_flow(files, b), (flow{0, size, 0, 1}));
  EXPECT_EQ(files[a]["BLOCK"]["read_bytes"].get<uint64_t>(), on_disk) << files[a].dump();
  EXPECT_EQ(files[a]["BLOCK"]["write_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(files[b]["BLOCK"]["write_bytes"].get<uint64_t>(), on_disk) << files[b].dump();
  EXPECT_EQ(files[b]["BLOCK"]["read_bytes"].get<uint64_t>(), 0u);
  EXPECT_DOUBLE_EQ(files[a]["amplification"]["read"].get<double>(), double(on_disk) / size);
  EXPECT_DOUBLE_EQ(files[b]["amplification"]["write"].get<double>(), double(on_disk) / size);
  EXPECT_TRUE(files[a]["amplification"]["write"].is_null()) << "nothing written to the input";
  EXPECT_TRUE(files[b]["amplification"]["read"].is_null()) << "nothing read from the output";
  EXPECT_GE((after.sectors_read - before.sectors_read) * 512, on_disk);
  EXPECT_GE((after.sectors_written - before.sectors_written) * 512, on_disk);
}

}  // namespace
}  // namespace dc::test
