#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sink/summary.h"
#include "unit/test_events.h"

namespace dc {
namespace {

using test::io_event;

TEST(Summary, AddsCountsBytesAndTimePerLayerAndProcess)
{
  summary_builder s;
  s.add(io_event("read", 1, 100, 2));
  s.add(io_event("read", 1, 50, 3));
  s.add(io_event("read", 2, 7, 1));
  s.add(io_event("write", 2, 0, 4));
  const auto& r = s.totals().ops.at("POSIX").at("read");
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.bytes, 157u);
  EXPECT_EQ(r.time_us, 6u);
  EXPECT_EQ(s.per_process().at(1).ops.at("POSIX").at("read").count, 2u);
  EXPECT_EQ(s.per_process().at(2).ops.at("POSIX").at("write").time_us, 4u);

  process_table procs;
  procs[1] = {1, 0, "a b", "a", 0, {}};
  procs[2] = {2, 1, "a b", "a", 0, {}};
  run_facts facts{{"a", "b"}, 3, 4, 0, {1, 0}, "t.pfw.gz", 0, 0.5};
  auto j = summary_json(s, procs, name_table{}, facts);
  EXPECT_EQ(j["elapsed_s"], 0.5);
  EXPECT_EQ(j["events"]["written_per_s"], 8.0);  // 4 events in half a second
  EXPECT_EQ(j["events"]["counters_per_s"], 0.0);
  EXPECT_EQ(j["command"], nlohmann::json({"a", "b"}));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["events"]["written"], 4);
  EXPECT_EQ(j["events"]["lost"], 1);
  EXPECT_EQ(j["layers"]["POSIX"]["read"]["bytes"], 157);
  EXPECT_EQ(j["processes"]["2"]["parent"], 1);
  EXPECT_EQ(j["processes"]["2"]["layers"]["POSIX"]["write"]["count"], 1);
  std::string text = summary_text(s, procs, facts);
  EXPECT_NE(text.find("events lost: 1"), std::string::npos);
  EXPECT_NE(text.find("events written: 4 (8/s over 0.500 s)"), std::string::npos) << text;
  EXPECT_NE(text.find("t.pfw.gz"), std::string::npos);
}

// More (process, layer, operation)s than the builder remembers, in turn and as names that do
// not outlive the call: each lands where it belongs, with the bytes each way of its layer.
TEST(Summary, ManyOperationsInTurnAreEachCountedWhereTheyBelong)
{
  summary_builder s;
  const std::vector<std::string> layers = {"POSIX", "FS", "STDIO"};
  for (int round = 1; round <= 5; ++round)
    for (uint32_t pid = 1; pid <= 3; ++pid)
      for (int op = 0; op < 8; ++op) {
        std::string name = op == 0 ? "read" : op == 1 ? "write" : "op" + std::to_string(op);
        s.add(io_event(name, pid, 10 * pid + static_cast<uint64_t>(op), 1, layers[op % 3]));
      }
  for (uint32_t pid = 1; pid <= 3; ++pid)
    for (int op = 0; op < 8; ++op) {
      std::string name = op == 0 ? "read" : op == 1 ? "write" : "op" + std::to_string(op);
      const op_stats& o = s.per_process().at(pid).ops.at(layers[op % 3]).at(name);
      EXPECT_EQ(o.count, 5u) << pid << name;
      EXPECT_EQ(o.bytes, 5 * (10 * pid + static_cast<uint64_t>(op))) << pid << name;
      EXPECT_EQ(s.totals().ops.at(layers[op % 3]).at(name).count, 15u) << name;
    }
  EXPECT_EQ(flow_of(s.totals(), "POSIX").read_bytes, 5u * (10 + 20 + 30));
  EXPECT_EQ(flow_of(s.totals(), "FS").write_bytes, 5u * (11 + 21 + 31));
  EXPECT_EQ(flow_of(s.per_process().at(2), "FS").write_bytes, 5u * 21);
  EXPECT_EQ(flow_of(s.totals(), "STDIO").read_bytes, 0u);
  EXPECT_EQ(s.totals().flows.count("STDIO"), 0u);  // it moved nothing: no flow of its own
}

// Profile counters lost for want of room in the kernel's map are named, with what to do.
TEST(Summary, ProfileCountersWithNoRoomAreNamedWithTheirRemedy)
{
  loss_counts lost;
  lost.kernel[DC_LOSS_PROFILE_FULL] = 7;
  run_facts facts{{"a"}, 0, 0, 2, lost, "t.pfw.gz", 1000, 0.5};
  std::string text = summary_text(summary_builder{}, process_table{}, facts);
  EXPECT_NE(text.find("events lost: 7 (profile_full 7)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("profile counters with no room in the kernel's map: 7 ("), std::string::npos) << text;
  EXPECT_NE(text.find("--interval-ms"), std::string::npos) << text;
}

// Records that are no event are not events lost, nor is a block request traced without its end
// (said in a line of the text); one not seen to end when tracing stopped may still have been in
// flight, so it is named apart (in the JSON and in a line of the text) and not summed.
TEST(Summary, OnlyEventsMissingFromTheTracedWindowAreEventsLost)
{
  loss_counts lost;
  lost.kernel[DC_LOSS_RING_FULL] = 32;
  lost.kernel[DC_LOSS_RECORD_RING_FULL] = 3;  // names and process records: no event missing
  lost.kernel[DC_LOSS_BLOCK_END_UNSEEN] = 4;  // traced without their end: not lost
  lost.skipped = 1;
  lost.block_unended = 5;
  EXPECT_EQ(lost.total(), 33u);
  run_facts facts{{"a"}, 0, 4, 0, lost, "t.pfw.gz", 0, 0.5};
  auto j = summary_json(summary_builder{}, process_table{}, name_table{}, facts);
  EXPECT_EQ(j["events"]["lost"], 33);
  EXPECT_EQ(j["events"]["lost_record_ring_full"], 3);
  EXPECT_EQ(j["events"]["lost_block_unended"], 5);
  EXPECT_EQ(j["events"]["lost_block_end_unseen"], 4);
  std::string text = summary_text(summary_builder{}, process_table{}, facts);
  // By kind, the kinds that count events (the 3 name records and the 4 untimed ones are not).
  EXPECT_NE(text.find("events lost: 33 (ring_full 32, skipped 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("not seen to end when tracing stopped (in flight, or ended unseen): 5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("block requests traced without their end (the kernel ran no tracing program for "
                      "their completion): 4\n"),
            std::string::npos)
      << text;
  facts.lost.block_unended = 0;
  facts.lost.kernel[DC_LOSS_BLOCK_END_UNSEEN] = 0;
  text = summary_text(summary_builder{}, process_table{}, facts);
  EXPECT_EQ(text.find("not seen to end"), std::string::npos);
  EXPECT_EQ(text.find("without their end"), std::string::npos);
}

// Device latencies go to the sketch analyze uses (core/latency_sketch.h): nearest rank, exact
// below 1024 us.
TEST(Summary, BlockLatencyPercentilesAreNearestRank)
{
  summary_builder s;
  for (uint64_t d : {10, 20, 30, 40}) s.add(io_event("write", 1, 4096, d, "BLOCK"));
  s.add(io_event("write", 1, 4096, 7));  // POSIX: no latency list
  process_table procs;
  auto j = summary_json(s, procs, name_table{}, run_facts{});
  EXPECT_TRUE(j["events"]["written_per_s"].is_null()) << "no rate over no time";
  EXPECT_EQ(j["layers"]["BLOCK"]["write"]["latency_us"]["p50"], 20);
  EXPECT_EQ(j["layers"]["BLOCK"]["write"]["latency_us"]["max"], 40);
  EXPECT_FALSE(j["layers"]["POSIX"]["write"].contains("latency_us"));

  // 100 reads of 100 .. 1 us (unsorted), and a million more of 5000 us: exact below 1024 us,
  // within 1 % above, in the memory of a few hundred buckets however many requests there were.
  summary_builder many;
  for (uint64_t d = 100; d >= 1; --d) many.add(io_event("read", 1, 4096, d, "BLOCK"));
  auto small = summary_json(many, procs, name_table{}, run_facts{})["layers"]["BLOCK"]["read"]["latency_us"];
  EXPECT_EQ(small["p50"], 50);
  EXPECT_EQ(small["p99"], 99);
  EXPECT_EQ(small["max"], 100);
  for (int i = 0; i < 1'000'000; ++i) many.add(io_event("read", 1, 4096, 5000, "BLOCK"));
  auto large = summary_json(many, procs, name_table{}, run_facts{})["layers"]["BLOCK"]["read"]["latency_us"];
  EXPECT_NEAR(large["p50"].get<double>(), 5000, 50);
  EXPECT_EQ(large["max"], 5000);
  EXPECT_LT(many.totals().ops.at("BLOCK").at("read").latency.buckets.size(), 2048u);
}

TEST(Summary, AmplificationIsDeviceBytesOverApplicationBytes)
{
  summary_builder s;
  s.add(io_event("write", 1, 4096, 1));
  s.add(io_event("write", 1, 4096, 1));
  s.add(io_event("write", 1, 12288, 5, "BLOCK"));  // 8 KiB written by the app, 12 KiB by the device
  s.add(io_event("read", 2, 100, 1));              // read from page cache: no device read
  auto j = amplification_json(s.totals());
  EXPECT_DOUBLE_EQ(j["write"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["read"].get<double>(), 0.0);
  EXPECT_EQ(j["bytes"]["BLOCK"]["write"], 12288);
  EXPECT_EQ(j["bytes"]["POSIX"]["read"], 100);
  EXPECT_TRUE(amplification_json(s.per_process().at(2))["write"].is_null());
  std::string text = summary_text(s, {}, {});
  EXPECT_NE(text.find("write 1.50x (12288 / 8192)"), std::string::npos) << text;
}

// Bytes per file, each layer side by side: the run's sum over processes, and each process's own.
TEST(Summary, BytesPerFileAreKeptPerLayerForTheRunAndEachProcess)
{
  name_table names;
  uint64_t data = names.add("/d/data.bin"), log = names.add("/d/log");
  summary_builder s;
  auto on = [](trace_event ev, uint64_t fhash) {
    ev.fhash = fhash;
    return ev;
  };
  s.add(on(io_event("write", 1, 4096, 1), data));
  s.add(on(io_event("write", 2, 4096, 1), data));
  s.add(on(io_event("write", 1, 16384, 1, "BLOCK"), data));  // writeback charged to pid 1
  s.add(on(io_event("read", 2, 10, 1), log));
  s.add(on(io_event("fsync", 1, 0, 1), data));  // moves no data: not a file's bytes
  nlohmann::json j = s.files().json(names);
  EXPECT_EQ(j["/d/data.bin"]["POSIX"]["write_bytes"], 8192);
  EXPECT_EQ(j["/d/data.bin"]["POSIX"]["writes"], 2);
  EXPECT_EQ(j["/d/data.bin"]["BLOCK"]["write_bytes"], 16384);
  EXPECT_DOUBLE_EQ(j["/d/data.bin"]["amplification"]["write"].get<double>(), 2.0);
  EXPECT_TRUE(j["/d/data.bin"]["amplification"]["read"].is_null());
  EXPECT_EQ(j["/d/log"]["POSIX"]["read_bytes"], 10);
  nlohmann::json p2 = s.files().process_json(2, names);
  EXPECT_EQ(p2["/d/data.bin"]["POSIX"]["write_bytes"], 4096);
  EXPECT_FALSE(p2["/d/data.bin"].contains("BLOCK"));
  std::string top = s.files().top_text(names, 1);
  EXPECT_EQ(top, "file /d/data.bin: app read 0 wrote 8192, device read 0 wrote 16384\n");
}

// Calls and their FS parts in turn, over more (process, file, layer)s than the tally keeps at
// hand, with layer names that do not outlive the call, and a process folded into another
// between them: every byte lands on its own file, layer and process.
TEST(Summary, BytesOfFilesInTurnAreEachTalliedWhereTheyBelong)
{
  name_table names;
  std::vector<uint64_t> files = {names.add("/a"), names.add("/b"), names.add("/c")};
  summary_builder s;
  auto add = [&s](uint32_t pid, uint64_t fhash, std::string layer, uint64_t bytes) {
    trace_event ev = io_event("read", pid, bytes, 1, layer);
    ev.fhash = fhash;
    s.add(ev);
  };
  for (int round = 0; round < 3; ++round)
    for (uint32_t pid = 1; pid <= 2; ++pid)
      for (size_t f = 0; f < files.size(); ++f) {
        add(pid, files[f], "POSIX", 100 * pid + f);
        add(pid, files[f], "FS", 10 * pid + f);
      }
  s.fold(2, 3);                  // process 2's bytes now count as 3's
  add(2, files[2], "POSIX", 7);  // a new process 2, after the fold, on the file last added to
  add(2, files[2], "FS", 5);
  nlohmann::json p1 = s.files().process_json(1, names), p2 = s.files().process_json(2, names),
                 p3 = s.files().process_json(3, names), all = s.files().json(names);
  for (size_t f = 0; f < files.size(); ++f) {
    std::string path = *names.find(files[f]);
    EXPECT_EQ(p1[path]["POSIX"]["read_bytes"], 3 * (100 + f)) << path;
    EXPECT_EQ(p1[path]["FS"]["read_bytes"], 3 * (10 + f)) << path;
    EXPECT_EQ(p3[path]["POSIX"]["read_bytes"], 3 * (200 + f)) << path;
    EXPECT_EQ(p3[path]["FS"]["reads"], 3) << path;
    EXPECT_EQ(all[path]["FS"]["read_bytes"], 3 * (30 + 2 * f) + (f == 2 ? 5 : 0)) << path;
  }
  EXPECT_EQ(p2.size(), 1u);
  EXPECT_EQ(p2["/c"]["POSIX"]["read_bytes"], 7);
  EXPECT_EQ(p2["/c"]["FS"]["read_bytes"], 5);
  EXPECT_EQ(p2["/c"]["FS"]["reads"], 1);
}

// The builder sums events of one key before it adds them (sink/event_sums.h). A storm's calls
// and their folded FS parts in turn, over more keys than it sums at once (4), with profile
// counters, timed and untimed device requests, and reads, a fold and kernel counts between them:
// every count, byte, time, page and latency sample is what adding them one by one gives,
// computed here by hand.
TEST(Summary, EventsSummedBeforeTheyAreAddedCountAsAddedOneByOne)
{
  summary_builder s;
  std::map<std::string, uint64_t> count, bytes, time;  // "pid layer op"
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> pages;
  auto add = [&](trace_event ev, uint64_t pages_read) {
    std::string key = std::to_string(ev.pid) + " " + std::string(ev.category) + " " + std::string(ev.name);
    count[key] += ev.count;
    bytes[key] += ev.bytes;
    time[key] += ev.dur_us;
    pages[{ev.pid, ev.fhash}] += pages_read;
    s.add(ev);
  };
  auto pread = [](uint32_t pid, uint64_t fhash, uint64_t n, int64_t offset, std::string_view layer) {
    trace_event ev = io_event("read", pid, n, 1 + n % 3, layer);
    ev.fhash = fhash;
    if (layer == "POSIX")
      ev.add_arg("offset", offset);
    return ev;
  };
  uint64_t moved_before_fold = 0, posix_of_3 = 0;
  for (int i = 0; i < 600; ++i) {
    uint32_t pid = 1 + i % 3;
    uint64_t fhash = 100 + (i / 7) % 3, n = 4096 + static_cast<uint64_t>(i % 5) * 1000;
    int64_t offset = i * 3000;
    add(pread(pid, fhash, n, offset, "POSIX"), (offset + n - 1) / 4096 - offset / 4096 + 1);
    add(pread(pid, fhash, n, offset, "FS"), 0);
    if (i % 50 == 0) {  // a profile counter: many reads, their pages summed by the kernel
      trace_event c = pread(pid, fhash, 3 * n, -1, "POSIX");
      c.counter = true;
      c.count = 3;
      c.add_arg("pages", 7);
      add(c, 7);
    }
    if (i % 40 == 0) {  // a device request: a latency sample; and one whose end ran no program
      trace_event b = io_event("read", pid, 8192, 10 + i % 7, "BLOCK");
      add(b, 0);
      b.untimed = true;
      b.dur_us = 0;
      add(b, 0);
    }
    if (i == 300) {
      moved_before_fold = s.moved_bytes(3);
      for (const auto& [key, b] : bytes) posix_of_3 += key.starts_with("3 POSIX") ? b : 0;
      s.page_cache().add_kernel_counts(1, 100, {.added = 5});
    }
  }
  EXPECT_EQ(moved_before_fold, posix_of_3) << "what was summed by then counts";
  for (const auto& [key, n] : count) {
    std::istringstream in(key);
    uint32_t pid = 0;
    std::string layer, op;
    in >> pid >> layer >> op;
    const op_stats& o = s.per_process().at(pid).ops.at(layer).at(op);
    EXPECT_EQ(o.count, n) << key;
    EXPECT_EQ(o.bytes, bytes[key]) << key;
    EXPECT_EQ(o.time_us, time[key]) << key;
    if (layer == "BLOCK") {
      EXPECT_EQ(o.latency.count, n / 2) << key << ": the timed requests, each a sample";
    }
  }
  for (const auto& [key, n] : pages) {
    if (key.second) {
      EXPECT_EQ(s.page_cache().by_file().at({key.first, key.second}).pages_read, n)
          << key.first << " " << key.second;
    }
  }
  EXPECT_EQ(s.page_cache().by_file().at({1, 100}).added, 5u);
  s.fold(3, 1);
  uint64_t posix_of_1 = 0;
  for (const auto& [key, b] : bytes)
    if (key.starts_with("1 POSIX") || key.starts_with("3 POSIX"))
      posix_of_1 += b;
  EXPECT_EQ(s.moved_bytes(1), posix_of_1);
  EXPECT_EQ(flow_of(s.per_process().at(1), "FS").read_ops, count["1 FS read"] + count["3 FS read"]);
}

}  // namespace
}  // namespace dc

namespace dc {
namespace {

trace_event read_of(uint32_t pid, uint64_t fhash, uint64_t bytes, int64_t offset = -1)
{
  trace_event ev;
  ev.name = offset >= 0 ? "pread64" : "read";
  ev.category = "POSIX";
  ev.pid = pid;
  ev.fhash = fhash;
  ev.bytes = bytes;
  ev.dir = io_dir::read;
  if (offset >= 0)
    ev.add_arg("offset", offset);
  return ev;
}

TEST(PageCache, PagesTouchedFollowTheByteRange)
{
  EXPECT_EQ(pages_touched(read_of(1, 9, 4096)), 1u);
  EXPECT_EQ(pages_touched(read_of(1, 9, 4097)), 2u);
  EXPECT_EQ(pages_touched(read_of(1, 9, 100, 4090)), 2u);  // crosses a page boundary
  EXPECT_EQ(pages_touched(read_of(1, 9, 0)), 0u);
}

TEST(PageCache, HitsArePagesReadMinusMissesPerProcessAndFile)
{
  page_cache_tally t;
  for (int i = 0; i < 10; ++i) t.add_read(read_of(1, 7, 4096));
  t.add_kernel_counts(1, 7, {.added = 4});                  // 4 of 10 pages brought in: 6 hits
  t.add_kernel_counts(2, 8, {.added = 16, .dirtied = 16});  // pid 2 only wrote: added == dirtied, no misses
  auto all = t.totals_json();
  EXPECT_EQ(all["hits"], 6);
  EXPECT_EQ(all["misses"], 4);
  EXPECT_DOUBLE_EQ(all["hit_ratio"].get<double>(), 0.6);
  EXPECT_TRUE(t.process_json(2)["hit_ratio"].is_null());
  name_table names;
  names.add("/f");
  EXPECT_EQ(t.files_json(names).size(), 2u);
}

// The tally keeps the entry of the last read: reads of files in turn, and a process folded away
// (its entries erased) and then seen again, each land where they belong.
TEST(PageCache, ReadsOfFilesInTurnAndAfterAFoldAreEachCountedWhereTheyBelong)
{
  page_cache_tally t;
  for (int i = 0; i < 3; ++i) {
    t.add_read(read_of(1, 8, 8192));
    t.add_read(read_of(1, 7, 4096));
  }
  t.fold(1, 2);  // erases the entry of the last read, (1, 7)
  t.add_read(read_of(1, 7, 4096));
  const auto& by_file = t.by_file();
  ASSERT_EQ(by_file.size(), 3u);
  EXPECT_EQ(by_file.at({2, 7}).pages_read, 3u);
  EXPECT_EQ(by_file.at({2, 8}).pages_read, 6u);
  EXPECT_EQ(by_file.at({1, 7}).pages_read, 1u);
}

}  // namespace
}  // namespace dc
