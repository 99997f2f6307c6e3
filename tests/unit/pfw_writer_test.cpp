#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <set>
#include <vector>

#include "core/hash.h"
#include "sink/pfw_writer.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

struct writer_fixture : ::testing::Test {
  std::string path =
      (std::filesystem::temp_directory_path() / ("w." + std::to_string(getpid()) + ".pfw.gz")).string();
  name_table names;
  process_table processes;
  void TearDown() override { std::filesystem::remove(path); }

  trace_event pread_event(uint32_t tid, uint64_t fhash)
  {
    trace_event ev;
    ev.name = "pread64";
    ev.category = "POSIX";
    ev.pid = 100;
    ev.tid = tid;
    ev.ts_us = 1'700'000'000'000'000;
    ev.dur_us = 3;
    ev.fhash = fhash;
    ev.add_arg("fd", 3);
    ev.add_arg("count", 4096);
    ev.add_arg("ret", 4096);
    return ev;
  }
};

TEST_F(writer_fixture, WritesDftracerLinesWithMetadataBeforeFirstUse)
{
  processes[100] = {100, 1, "app --flag", "app", -1, {{100, {"app"}}, {101, {"worker"}}}};
  uint64_t f = names.add("/data/file \"quoted\"");
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    pfw_writer w(std::move(*out), "node1", 100);
    w.write_event(pread_event(100, f), {names, processes});
    w.write_event(pread_event(101, f), {names, processes});
    ASSERT_TRUE(w.finish({2, 1}));
    EXPECT_EQ(w.events_written(), 2u);
  }
  auto t = test::parse_trace_text(test::read_gzip_members(path).text);
  EXPECT_TRUE(t.opened);
  EXPECT_TRUE(t.closed);
  std::set<uint64_t> ids;
  std::set<uint64_t> defined;
  int fh = 0, events = 0;
  for (const auto& j : t.lines) {
    EXPECT_TRUE(ids.insert(j["id"].get<uint64_t>()).second) << j;
    if (j["ph"] == "M" && j["name"] == "FH") {
      ++fh;
      defined.insert(j["args"]["value"].get<uint64_t>());
      EXPECT_EQ(j["args"]["name"], "/data/file \"quoted\"");
    }
    if (j["ph"] == "X") {
      ++events;
      EXPECT_TRUE(defined.count(j["args"]["fhash"].get<uint64_t>())) << "fhash used before its FH line";
      EXPECT_EQ(j["pid"], 100);
      EXPECT_EQ(j["cat"], "POSIX");
      EXPECT_EQ(j["args"]["count"], 4096);
      EXPECT_EQ(j["ts"], 1'700'000'000'000'000u);
    }
    if (j["name"] == "thread_name" && j["tid"] == 101) {
      EXPECT_EQ(j["args"]["name"], "worker");
    }
    if (j["name"] == "process_name") {
      EXPECT_EQ(j["args"]["name"], "app");
      EXPECT_EQ(j["args"]["ppid"], 1);
      EXPECT_EQ(j["args"]["cmd_hash"], string_hash("app --flag"));
    }
    if (j["name"] == "SH") {
      EXPECT_EQ(j["args"]["name"], "app --flag");
    }
    if (j["name"] == "end") {
      EXPECT_EQ(j["args"]["events_lost"], 3);
      EXPECT_EQ(j["args"]["events_written"], 2);
    }
  }
  EXPECT_EQ(fh, 1);
  EXPECT_EQ(events, 2);
  EXPECT_EQ(t.lines.front()["name"], "HH");
}

// The writer keeps the text of a line's name, layer, pid and tid from the lines before: each line
// still has its own, whichever of them changes.
TEST_F(writer_fixture, EachSpanHasItsOwnNameLayerPidAndTidWhateverRepeats)
{
  struct who {
    std::string name, category;
    uint32_t pid, tid;
    bool operator==(const who&) const = default;
  };
  std::vector<who> sent{{"pread64", "POSIX", 100, 100}, {"pread64", "POSIX", 100, 101},
                        {"pread64", "POSIX", 200, 101}, {"pread64", "POSIX", 100, 100},
                        {"pread64", "STDIO", 100, 100}, {"read", "STDIO", 100, 100},
                        {"read", "STDIO", 100, 100},    {"pread64", "POSIX", 200, 101}};
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    pfw_writer w(std::move(*out), "node1", 100);
    for (const who& s : sent) {
      trace_event ev = pread_event(s.tid, 0);
      ev.name = s.name;
      ev.category = s.category;
      ev.pid = s.pid;
      w.write_event(ev, {names, processes});
    }
    ASSERT_TRUE(w.finish({}));
  }
  std::vector<who> written;
  for (const auto& j : test::parse_trace_text(test::read_gzip_members(path).text).lines)
    if (j["ph"] == "X")
      written.push_back({j["name"], j["cat"], j["pid"], j["tid"]});
  EXPECT_TRUE(written == sent);
}

// The writer keeps its last pid's and tid's entries: a thread renamed between two of its events,
// and a pid forgotten and then another process's, are each named again.
// String args: a fixed text (static storage) that needs no escape is copied as it is once seen
// so, one that needs escapes is escaped every time (twice in a row here), and an owned text
// always.
TEST_F(writer_fixture, StringArgsAreEscapedWhereTheyNeedItFixedOrOwned)
{
  static constexpr std::string_view plain = "buffered_read", quoted = "a \"b\"\\c";
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    pfw_writer w(std::move(*out), "node1", 100);
    for (int i = 0; i < 3; ++i) {
      trace_event ev = pread_event(100, 0);
      ev.add_fixed_text("q", quoted);
      ev.add_fixed_text("again", quoted);
      ev.add_text("owned", "line\n" + std::to_string(i));
      ev.add_fixed_text("fs", plain);
      w.write_event(ev, {names, processes});
    }
    ASSERT_TRUE(w.finish({}));
  }
  auto t = test::parse_trace_text(test::read_gzip_members(path).text);
  int spans = 0;
  for (const auto& j : t.lines) {
    if (j["ph"] != "X")
      continue;
    EXPECT_EQ(j["args"]["fs"], plain);
    EXPECT_EQ(j["args"]["q"], quoted);
    EXPECT_EQ(j["args"]["owned"], "line\n" + std::to_string(spans));
    EXPECT_EQ(j["args"]["again"], quoted);
    ++spans;
  }
  EXPECT_EQ(spans, 3);
}

TEST_F(writer_fixture, ARenamedThreadAndAReusedPidAreNamedAgain)
{
  processes[100] = {100, 1, "app", "app", -1, {{100, {"app"}}}};
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    pfw_writer w(std::move(*out), "node1", 100);
    w.write_event(pread_event(100, 0), {names, processes});
    processes[100].threads[100].comm = "renamed";
    w.write_event(pread_event(100, 0), {names, processes});
    uint32_t tids[] = {100};
    w.forget_process(100, 100, tids);
    processes[100] = {100, 1, "other --x", "other", -1, {{100, {"other"}}}};
    w.write_event(pread_event(100, 0), {names, processes});
    ASSERT_TRUE(w.finish({}));
  }
  std::vector<std::string> threads, procs;
  for (const auto& j : test::parse_trace_text(test::read_gzip_members(path).text).lines) {
    if (j["name"] == "thread_name")
      threads.push_back(j["args"]["name"]);
    if (j["name"] == "process_name")
      procs.push_back(j["args"]["name"]);
  }
  EXPECT_EQ(threads, (std::vector<std::string>{"app", "renamed", "other"}));
  EXPECT_EQ(procs, (std::vector<std::string>{"app", "other"}));
}

TEST_F(writer_fixture, ClosesAMemberWhenOldEnough)
{
  auto out = gzip_member_writer::create(path);
  ASSERT_TRUE(out);
  pfw_writer w(std::move(*out), "node1", 100);
  auto start = std::chrono::steady_clock::now();
  w.write_event(pread_event(100, 0), {names, processes});
  ASSERT_TRUE(w.maybe_flush(start));
  EXPECT_EQ(test::read_gzip_members(path).complete_members, 0u);
  ASSERT_TRUE(w.maybe_flush(start + pfw_writer::member_age + std::chrono::milliseconds(1)));
  auto got = test::read_gzip_members(path);
  EXPECT_EQ(got.complete_members, 1u);
  auto t = test::parse_trace_text(got.text);  // a readable prefix: "[" and whole lines
  EXPECT_TRUE(t.opened);
  EXPECT_FALSE(t.closed);
  ASSERT_TRUE(w.finish({}));
}

// A burst (many events between two of the collector's maybe_flush calls) still makes members
// of at most member_bytes of text: the buffer a member is built in never grows past it (it used
// to reach twice the size, and kept it, in the soak's bursts).
TEST_F(writer_fixture, AMemberNeverHoldsMoreThanMemberBytesOfText)
{
  auto out = gzip_member_writer::create(path);
  ASSERT_TRUE(out);
  pfw_writer w(std::move(*out), "node1", 100);
  size_t events = 0;
  for (; events < 40000; ++events) w.write_event(pread_event(100 + events % 3, 0), {names, processes});
  ASSERT_TRUE(w.finish({}));
  const auto& members = w.file().members();
  ASSERT_GE(members.size(), 3u);
  uint64_t text = 0;
  for (const auto& m : members) {
    EXPECT_LE(m.text_size, pfw_writer::member_bytes);
    text += m.text_size;
  }
  auto got = test::read_gzip_members(path);
  EXPECT_EQ(got.complete_members, members.size());
  EXPECT_EQ(got.text.size(), text);
  size_t preads = 0;
  for (const auto& line : test::parse_trace_text(got.text).lines)
    preads += line.value("name", "") == "pread64";
  EXPECT_EQ(preads, events);
}

// A write that fails part-way (here the file size limit, RLIMIT_FSIZE, as a full disk would): the
// member that did not fit is cut off again, so the file stays a run of whole members; its events
// and every later one are counted unwritten, and nothing more is written.
TEST_F(writer_fixture, AFailedWriteLeavesWholeMembersAndCountsWhatIsNotInTheFile)
{
  auto out = gzip_member_writer::create(path);
  ASSERT_TRUE(out);
  pfw_writer w(std::move(*out), "node1", 100);
  for (uint32_t i = 0; i < 100; ++i) w.write_event(pread_event(100 + i % 3, 0), {names, processes});
  ASSERT_TRUE(w.flush());
  auto whole = std::filesystem::file_size(path);

  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit tight = saved;
  tight.rlim_cur = whole + 10;  // the next member's first 10 bytes fit, the rest do not
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tight), 0);
  for (uint32_t i = 0; i < 200; ++i) w.write_event(pread_event(100, 0), {names, processes});
  auto failed = w.flush();
  for (uint32_t i = 0; i < 5; ++i) w.write_event(pread_event(100, 0), {names, processes});
  auto finished = w.finish({});
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("cannot write '" + path + "': File too large"), std::string::npos)
      << failed.error().message;
  EXPECT_FALSE(finished);
  EXPECT_FALSE(w.status());
  EXPECT_EQ(w.events_written(), 100u);
  EXPECT_EQ(w.events_unwritten(), 205u);
  EXPECT_EQ(std::filesystem::file_size(path), whole) << "the cut member's 10 bytes were not removed";
  auto got = test::read_gzip_members(path);
  EXPECT_FALSE(got.truncated_tail);
  EXPECT_EQ(got.complete_members, 1u);
  auto t = test::parse_trace_text(got.text);
  EXPECT_FALSE(t.closed);
  size_t spans = 0;
  for (const auto& j : t.lines) spans += j["ph"] == "X";
  EXPECT_EQ(spans, 100u);
}

// What viewers need of the lines (README "The trace file"): a ts on every line, device work on
// lanes of its own naming the thread and call it was done for, run totals as metadata.
TEST_F(writer_fixture, EveryLineHasATsDeviceWorkIsOnLanesTotalsAreMetadata)
{
  processes[100] = {100, 1, "app", "app", -1, {{100, {"app"}}}};
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    pfw_writer w(std::move(*out), "node1", 100);
    trace_event call = pread_event(100, 0);
    call.id = (100ull << 30) + 1;
    call.level = 1;
    w.write_event(call, {names, processes});
    for (uint64_t start : {1'700'000'000'000'010ull, 1'700'000'000'000'012ull}) {  // overlapping
      trace_event block;
      block.name = "read";
      block.category = "BLOCK";
      block.pid = block.tid = 100;
      block.ts_us = start;
      block.dur_us = 5;
      block.id = call.id + 1 + (start & 3);
      block.parent = static_cast<int64_t>(call.id);
      block.level = 2;
      block.lane = lane_kind::device;
      block.lane_dev = 8u << 20;
      w.write_event(block, {names, processes});
    }
    trace_event totals;
    totals.name = "page_cache";
    totals.category = "PAGECACHE";
    totals.pid = totals.tid = 100;
    totals.ts_us = 1'700'000'000'000'100;
    totals.add_arg("hits", 3);
    w.write_totals(totals, {names, processes});
    ASSERT_TRUE(w.finish({}));
  }
  auto t = test::parse_trace_text(test::read_gzip_members(path).text);
  std::set<uint64_t> lanes;
  int blocks = 0;
  for (const auto& j : t.lines) {
    EXPECT_TRUE(j.contains("ts")) << j;
    if (j["name"] == "thread_name" && j["args"].contains("lane")) {
      EXPECT_EQ(j["args"]["lane"], "device 8:0");
      lanes.insert(j["tid"].get<uint64_t>());
    }
    if (j["cat"] == "BLOCK") {
      ++blocks;
      EXPECT_TRUE(lanes.count(j["tid"].get<uint64_t>())) << "lane named before use: " << j;
      EXPECT_EQ(j["args"]["submit_tid"], 100);
      EXPECT_EQ(j["args"]["submit_id"], (100ull << 30) + 1);
      EXPECT_FALSE(j["args"].contains("p_idx"));
    }
    if (j["name"] == "page_cache") {
      EXPECT_EQ(j["ph"], "M");
      EXPECT_EQ(j["args"]["hits"], 3);
    }
  }
  EXPECT_EQ(blocks, 2);
  EXPECT_EQ(lanes.size(), 2u) << "overlapping requests on lanes of their own";
}

}  // namespace
}  // namespace dc
