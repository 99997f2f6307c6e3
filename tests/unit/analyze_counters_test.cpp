// Darshan POSIX counters from synthetic POSIX lines: each test states a call sequence and the
// values Darshan's rules (darshan-posix.c) give for it.
#include <gtest/gtest.h>

#include "analyze/file_counters.h"
#include "unit/analyze_lines.h"

namespace dc::analyze {
namespace {

using test::trace_line;

constexpr uint64_t file_a = 101, file_b = 202;

trace_line call(std::string name, int64_t ts, int64_t dur, std::vector<std::pair<std::string, int64_t>> args,
                uint64_t fhash = file_a, uint64_t tid = 1)
{
  trace_line l;
  l.name = std::move(name);
  l.cat = "POSIX";
  l.ts_us = ts;
  l.dur_us = dur;
  l.id = ts;
  l.tid = tid;
  l.fhash = fhash;
  l.args = std::move(args);
  return l;
}

name_map names()
{
  name_map n;
  n.files[file_a] = "/data/a";
  n.files[file_b] = "/data/b";
  n.files[303] = "pipe:[77]";
  return n;
}

// The report's entry for `path`, from lines fed in order to one accumulator.
nlohmann::json entry(const std::vector<trace_line>& lines, const std::string& path = "/data/a")
{
  file_counters acc;
  test::feed(acc, lines);
  for (const auto& f : acc.report(names()))
    if (f["file"] == path)
      return f;
  return nullptr;
}

int64_t c(const nlohmann::json& f, const std::string& name)
{
  return f["counters"]["POSIX_" + name].get<int64_t>();
}
double fc(const nlohmann::json& f, const std::string& name)
{
  return f["fcounters"]["POSIX_" + name].get<double>();
}

TEST(AnalyzeCounters, SizeBinsFollowDarshansBounds)
{
  EXPECT_EQ(size_bin(0), 0);
  EXPECT_EQ(size_bin(100), 0);
  EXPECT_EQ(size_bin(101), 1);
  EXPECT_EQ(size_bin(1024), 1);
  EXPECT_EQ(size_bin(1025), 2);
  EXPECT_EQ(size_bin(10240), 2);
  EXPECT_EQ(size_bin(102400), 3);
  EXPECT_EQ(size_bin(1048576), 4);
  EXPECT_EQ(size_bin(4194304), 5);
  EXPECT_EQ(size_bin(10485760), 6);
  EXPECT_EQ(size_bin(104857600), 7);
  EXPECT_EQ(size_bin(1073741824), 8);
  EXPECT_EQ(size_bin(1073741825), 9);
}

TEST(AnalyzeCounters, TopFourByCountThenLargerValue)
{
  auto top = top_four({{0, 50}, {10, 3}, {20, 3}, {30, 5}, {40, 1}, {50, 1}});
  EXPECT_EQ(top[0], std::make_pair(int64_t{30}, int64_t{5}));
  EXPECT_EQ(top[1], std::make_pair(int64_t{20}, int64_t{3}));
  EXPECT_EQ(top[2], std::make_pair(int64_t{10}, int64_t{3}));
  EXPECT_EQ(top[3], std::make_pair(int64_t{50}, int64_t{1}));  // zero is never a common value
}

TEST(AnalyzeCounters, SequentialReadsThroughTheFilePosition)
{
  auto f = entry({call("openat", 1000, 10, {{"flags", 0}, {"ret", 3}}),
                  call("read", 1100, 5, {{"fd", 3}, {"count", 100}, {"ret", 100}}),
                  call("read", 1200, 5, {{"fd", 3}, {"count", 100}, {"ret", 100}}),
                  call("read", 1300, 5, {{"fd", 3}, {"count", 100}, {"ret", 100}}),
                  call("read", 1400, 5, {{"fd", 3}, {"count", 100}, {"ret", 0}}),
                  call("close", 1500, 2, {{"fd", 3}, {"ret", 0}})});
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(c(f, "OPENS"), 1);
  EXPECT_EQ(c(f, "READS"), 4);
  EXPECT_EQ(c(f, "BYTES_READ"), 300);
  // Offsets 0, 100, 200, 300 after open (last byte 0): the first is neither sequential nor
  // consecutive; the EOF read at 300 is both.
  EXPECT_EQ(c(f, "SEQ_READS"), 3);
  EXPECT_EQ(c(f, "CONSEC_READS"), 3);
  EXPECT_EQ(c(f, "MAX_BYTE_READ"), 299);
  EXPECT_EQ(c(f, "SIZE_READ_0_100"), 4);
  EXPECT_EQ(c(f, "ACCESS1_ACCESS"), 100);
  EXPECT_EQ(c(f, "ACCESS1_COUNT"), 3);
  EXPECT_EQ(c(f, "ACCESS2_COUNT"), 0);
  EXPECT_EQ(c(f, "STRIDE1_COUNT"), 0);
  EXPECT_EQ(c(f, "RW_SWITCHES"), 0);
  EXPECT_EQ(f["small_ops"], 4);
  EXPECT_EQ(f["unknown_offset_ops"], 0);
  // Timestamps in seconds after the first event (1000 us).
  EXPECT_DOUBLE_EQ(fc(f, "F_OPEN_START_TIMESTAMP"), 0.0);
  EXPECT_DOUBLE_EQ(fc(f, "F_OPEN_END_TIMESTAMP"), 10e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_READ_START_TIMESTAMP"), 100e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_READ_END_TIMESTAMP"), 405e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_CLOSE_START_TIMESTAMP"), 500e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_CLOSE_END_TIMESTAMP"), 502e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_READ_TIME"), 20e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_META_TIME"), 12e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_MAX_READ_TIME"), 5e-6);
  EXPECT_EQ(c(f, "MAX_READ_TIME_SIZE"), 100);  // the first of the equally slow
}

TEST(AnalyzeCounters, StridedPositionedReads)
{
  auto f = entry({call("openat", 10, 1, {{"ret", 3}}),
                  call("pread64", 20, 1, {{"fd", 3}, {"count", 100}, {"offset", 0}, {"ret", 100}}),
                  call("pread64", 30, 1, {{"fd", 3}, {"count", 100}, {"offset", 1000}, {"ret", 100}}),
                  call("pread64", 40, 1, {{"fd", 3}, {"count", 100}, {"offset", 2000}, {"ret", 100}}),
                  call("pread64", 50, 1, {{"fd", 3}, {"count", 200}, {"offset", 5000}, {"ret", 200}})});
  EXPECT_EQ(c(f, "SEQ_READS"), 3);
  EXPECT_EQ(c(f, "CONSEC_READS"), 0);
  EXPECT_EQ(c(f, "STRIDE1_STRIDE"), 900);
  EXPECT_EQ(c(f, "STRIDE1_COUNT"), 2);
  EXPECT_EQ(c(f, "STRIDE2_STRIDE"), 2900);
  EXPECT_EQ(c(f, "STRIDE2_COUNT"), 1);
  EXPECT_EQ(c(f, "MAX_BYTE_READ"), 5199);
  EXPECT_EQ(c(f, "ACCESS1_ACCESS"), 100);
  EXPECT_EQ(c(f, "ACCESS1_COUNT"), 3);
  EXPECT_EQ(c(f, "ACCESS2_ACCESS"), 200);
  EXPECT_EQ(c(f, "SIZE_READ_100_1K"), 1);
}

TEST(AnalyzeCounters, RandomWritesAndReadWriteSwitches)
{
  auto f = entry({call("openat", 10, 1, {{"flags", 02}, {"ret", 3}}),
                  call("pwrite64", 20, 1, {{"fd", 3}, {"count", 4096}, {"offset", 8192}, {"ret", 4096}}),
                  call("pwrite64", 30, 1, {{"fd", 3}, {"count", 4096}, {"offset", 0}, {"ret", 4096}}),
                  call("pread64", 40, 1, {{"fd", 3}, {"count", 4096}, {"offset", 4096}, {"ret", 4096}}),
                  call("write", 50, 1, {{"fd", 3}, {"count", 10}, {"ret", 10}}),
                  call("pwrite64", 60, 1, {{"fd", 3}, {"count", 1}, {"offset", 1}, {"ret", -1}})});
  EXPECT_EQ(c(f, "WRITES"), 3);  // the failed call is not counted
  EXPECT_EQ(c(f, "READS"), 1);
  EXPECT_EQ(c(f, "BYTES_WRITTEN"), 8202);
  // 8192 > 0: sequential; 0: not; write() at the fd position 0 after 0..4095 written: not.
  EXPECT_EQ(c(f, "SEQ_WRITES"), 1);
  EXPECT_EQ(c(f, "CONSEC_WRITES"), 0);
  EXPECT_EQ(c(f, "SEQ_READS"), 1);
  EXPECT_EQ(c(f, "MAX_BYTE_WRITTEN"), 12287);
  EXPECT_EQ(c(f, "RW_SWITCHES"), 2);
  EXPECT_EQ(c(f, "SIZE_WRITE_1K_10K"), 2);
  EXPECT_EQ(c(f, "SIZE_WRITE_0_100"), 1);
  EXPECT_EQ(f["small_ops"], 1);
}

TEST(AnalyzeCounters, SeeksDupsStatsMmapsSyncs)
{
  auto f = entry(
      {call("openat", 10, 2, {{"flags", 02}, {"ret", 3}}),
       call("lseek", 20, 1, {{"fd", 3}, {"offset", 4096}, {"whence", 0}, {"ret", 4096}}),
       call("dup", 30, 1, {{"fd", 3}, {"ret", 4}}),
       call("read", 40, 1, {{"fd", 4}, {"count", 10}, {"ret", 10}}),  // shared position: 4096
       call("read", 50, 1, {{"fd", 3}, {"count", 10}, {"ret", 10}}),  // 4106: consecutive
       call("fcntl", 55, 1, {{"fd", 3}, {"cmd", 1030}, {"ret", 9}}),  // F_DUPFD_CLOEXEC
       call("fcntl", 56, 1, {{"fd", 3}, {"cmd", 3}, {"ret", 2}}),     // F_GETFL: nothing
       call("fstat", 60, 3, {{"fd", 3}, {"ret", 0}}),
       call("newfstatat", 70, 3, {{"dirfd", -100}, {"ret", 0}}),
       call("newfstatat", 75, 3, {{"dirfd", -100}, {"ret", -2}}),
       call("mmap", 80, 1, {{"fd", 3}, {"length", 4096}, {"prot", 1}, {"flags", 1}, {"ret", 0x7f0000}}),
       call("mmap", 85, 1, {{"fd", -1}, {"length", 4096}, {"prot", 3}, {"flags", 0x22}, {"ret", 0x7f1000}}),
       call("fsync", 90, 100, {{"fd", 3}, {"ret", 0}}), call("fdatasync", 300, 50, {{"fd", 4}, {"ret", 0}}),
       call("close", 400, 1, {{"fd", 4}, {"ret", 0}}), call("close", 410, 1, {{"fd", 3}, {"ret", 0}})});
  EXPECT_EQ(c(f, "OPENS"), 3);  // Darshan counts a dup as an open
  EXPECT_EQ(c(f, "DUPS"), 2);
  EXPECT_EQ(c(f, "SEEKS"), 1);
  EXPECT_EQ(c(f, "STATS"), 2);
  EXPECT_EQ(c(f, "MMAPS"), 1);
  EXPECT_EQ(c(f, "FSYNCS"), 1);
  EXPECT_EQ(c(f, "FDSYNCS"), 1);
  EXPECT_EQ(c(f, "SEQ_READS"), 2);
  EXPECT_EQ(c(f, "CONSEC_READS"), 1);
  EXPECT_EQ(c(f, "MAX_BYTE_READ"), 4115);
  EXPECT_DOUBLE_EQ(fc(f, "F_WRITE_TIME"), 150e-6);
  // open 2 + lseek 1 + dup 1 + fcntl dup 1 + two stats 6 + closes 2
  EXPECT_DOUBLE_EQ(fc(f, "F_META_TIME"), 13e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_OPEN_END_TIMESTAMP"), 46e-6);  // the F_DUPFD's end (start is 10 us)
}

TEST(AnalyzeCounters, UnknownPositionsAreCountedButNotPlaced)
{
  auto f = entry({call("openat", 10, 1, {{"flags", 02001 /* O_APPEND|O_WRONLY */}, {"ret", 3}}),
                  call("write", 20, 1, {{"fd", 3}, {"count", 10}, {"ret", 10}}),
                  call("write", 30, 1, {{"fd", 3}, {"count", 10}, {"ret", 10}}),
                  call("read", 40, 1, {{"fd", 5}, {"count", 10}, {"ret", 10}}),  // never opened in the trace
                  call("lseek", 50, 1, {{"fd", 5}, {"offset", 0}, {"whence", 2}, {"ret", 300}}),
                  call("read", 60, 1, {{"fd", 5}, {"count", 10}, {"ret", 0}})});
  EXPECT_EQ(c(f, "WRITES"), 2);
  EXPECT_EQ(c(f, "BYTES_WRITTEN"), 20);
  EXPECT_EQ(c(f, "SEQ_WRITES"), 0);
  EXPECT_EQ(c(f, "MAX_BYTE_WRITTEN"), 0);
  EXPECT_EQ(c(f, "READS"), 2);
  EXPECT_EQ(c(f, "SEQ_READS"), 1);  // the read at 300, after the seek made the position known
  EXPECT_EQ(f["unknown_offset_ops"], 3);
}

TEST(AnalyzeCounters, ThreadsInterleavedOutOfOrderAreReplayedInCallOrder)
{
  // Thread 2's lines come after thread 1's, though its calls were made in between.
  std::vector<trace_line> lines = {call("openat", 10, 1, {{"ret", 3}}, file_a, 1),
                                   call("read", 20, 10, {{"fd", 3}, {"ret", 100}}, file_a, 1),
                                   call("read", 60, 10, {{"fd", 3}, {"ret", 100}}, file_a, 1),
                                   call("read", 40, 30, {{"fd", 3}, {"ret", 100}}, file_a, 2)};
  auto f = entry(lines);
  EXPECT_EQ(c(f, "SEQ_READS"), 2);
  EXPECT_EQ(c(f, "CONSEC_READS"), 2);
  EXPECT_EQ(c(f, "MAX_BYTE_READ"), 299);
  // [20,30] + [40,70] + [60,70] inside it: 40 us of reading.
  EXPECT_DOUBLE_EQ(fc(f, "F_READ_TIME"), 40e-6);
  EXPECT_DOUBLE_EQ(fc(f, "F_MAX_READ_TIME"), 30e-6);
}

// A copy is a read of its input (fd, fhash) and a write of its output (out_fd, fhash2), each
// at its descriptor's position.
TEST(AnalyzeCounters, CopiesReadTheirInputAndWriteTheirOutput)
{
  std::vector<trace_line> lines = {
      call("openat", 10, 1, {{"ret", 3}}), call("openat", 11, 1, {{"ret", 4}}, file_b),
      call("copy_file_range", 20, 5, {{"fd", 3}, {"out_fd", 4}, {"ret", 3000}, {"fhash2", file_b}}),
      call("sendfile", 30, 5, {{"fd", 3}, {"out_fd", 4}, {"ret", 1000}, {"fhash2", file_b}}),
      call("splice", 40, 5, {{"fd", 3}, {"out_fd", 9}, {"ret", 50}, {"fhash2", 303}})};
  auto a = entry(lines), b = entry(lines, "/data/b");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  EXPECT_EQ(c(a, "READS"), 3);
  EXPECT_EQ(c(a, "BYTES_READ"), 4050);
  EXPECT_EQ(c(a, "CONSEC_READS"), 2);  // at 3000, then 4000
  EXPECT_EQ(c(a, "WRITES"), 0);
  EXPECT_EQ(c(b, "WRITES"), 2);
  EXPECT_EQ(c(b, "BYTES_WRITTEN"), 4000);
  EXPECT_EQ(c(b, "MAX_BYTE_WRITTEN"), 3999);
  EXPECT_EQ(c(b, "READS"), 0);
  EXPECT_TRUE(entry(lines, "pipe:[77]").is_null());
}

TEST(AnalyzeCounters, FilesAndProcessesAreSeparateAndPseudoFilesLeftOut)
{
  trace_line other = call("pread64", 30, 1, {{"fd", 3}, {"offset", 0}, {"ret", 5000}});
  other.pid = 2;
  file_counters acc;
  test::feed(acc,
             {call("openat", 10, 1, {{"ret", 3}}), call("write", 20, 1, {{"fd", 3}, {"ret", 10}}, file_b),
              call("write", 25, 1, {{"fd", 9}, {"ret", 10}}, 303), other});
  auto report = acc.report(names());
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0]["file"], "/data/a");  // more bytes first
  EXPECT_EQ(report[0]["processes"], 2);
  EXPECT_EQ(report[0]["module"], "POSIX");
  EXPECT_EQ(c(report[0], "BYTES_READ"), 5000);
  EXPECT_EQ(report[1]["file"], "/data/b");
  EXPECT_EQ(c(report[1], "BYTES_WRITTEN"), 10);
}

TEST(AnalyzeCounters, MergeAndPartialsGiveTheSameReport)
{
  std::vector<trace_line> lines;
  lines.push_back(call("openat", 10, 1, {{"ret", 3}}));
  for (int i = 0; i < 20; ++i)
    lines.push_back(call(i % 3 ? "read" : "write", 20 + 10 * i, 3 + i % 4,
                         {{"fd", 3}, {"ret", 100 * (i % 5)}}, file_a, 1 + i % 2));
  lines.push_back(call("close", 500, 1, {{"fd", 3}, {"ret", 0}}));
  file_counters whole, first, second;
  test::feed(whole, lines);
  // One process split over two accumulators: its two halves are reduced like two ranks'
  // records, so the sums are exact (the order counters at the seam are not).
  test::feed(first, std::vector<trace_line>(lines.begin(), lines.begin() + 10));
  test::feed(second, std::vector<trace_line>(lines.begin() + 10, lines.end()));
  file_counters merged = first;
  merged.merge(second);
  auto m = merged.report(names())[0], w = whole.report(names())[0];
  for (const char* sum :
       {"POSIX_READS", "POSIX_WRITES", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN", "POSIX_OPENS",
        "POSIX_SIZE_READ_100_1K", "POSIX_ACCESS1_COUNT", "POSIX_ACCESS4_ACCESS"})
    EXPECT_EQ(m["counters"][sum], w["counters"][sum]) << sum;
  EXPECT_EQ(m["fcounters"]["POSIX_F_READ_TIME"], w["fcounters"]["POSIX_F_READ_TIME"]);
  auto back = file_counters::from_partial(whole.partial());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names()), whole.report(names()));
  // Partials of different processes merge exactly.
  std::vector<trace_line> other_process = lines;
  for (auto& l : other_process) l.pid = 9;
  file_counters both = whole, other;
  test::feed(other, other_process);
  both.merge(other);
  auto p1 = file_counters::from_partial(whole.partial());
  auto p2 = file_counters::from_partial(other.partial());
  p1->merge(*p2);
  EXPECT_EQ(p1->report(names()), both.report(names()));
  EXPECT_EQ(both.report(names())[0]["processes"], 2);
}

TEST(AnalyzeCounters, ACallLaterThanTheWindowIsCountedOutOfOrder)
{
  file_counters acc;
  std::vector<trace_line> lines = {call("openat", 10, 1, {{"ret", 3}})};
  for (size_t i = 0; i < process_stream::window + 10; ++i)
    lines.push_back(
        call("pread64", 100 + static_cast<int64_t>(i), 1, {{"fd", 3}, {"offset", 0}, {"ret", 1}}));
  lines.push_back(
      call("pread64", 50, 1, {{"fd", 3}, {"offset", 0}, {"ret", 1}}, file_a, 2));  // thread 2, early
  lines.push_back(
      call("pread64", 200, 1, {{"fd", 3}, {"offset", 0}, {"ret", 1}}, file_a, 3));  // within the window
  test::feed(acc, lines);
  auto f = acc.report(names())[0];
  EXPECT_EQ(c(f, "READS"), static_cast<int64_t>(process_stream::window + 12));
  EXPECT_EQ(f["out_of_order_ops"], 1);
}

TEST(AnalyzeCounters, MalformedPartialIsAnError)
{
  EXPECT_FALSE(file_counters::from_partial(nlohmann::json::array()).has_value());
  EXPECT_FALSE(file_counters::from_partial({{"records", {{{"c", {1, 2}}}}}}).has_value());
}

}  // namespace
}  // namespace dc::analyze
