// Amplification, page cache and network sections from synthetic lines of each layer.
#include <gtest/gtest.h>

#include "analyze/amplification.h"
#include "analyze/counter_sections.h"
#include "analyze/counters_text.h"
#include "analyze/network.h"
#include "analyze/page_cache.h"
#include "unit/analyze_lines.h"

namespace dc::analyze {
namespace {

using test::trace_line;

trace_line ev(std::string cat, std::string name, uint64_t pid, uint64_t fhash, int64_t dur,
              std::vector<std::pair<std::string, int64_t>> args, phase ph = phase::complete)
{
  trace_line l;
  l.ph = ph;
  l.cat = std::move(cat);
  l.name = std::move(name);
  l.pid = l.tid = pid;
  l.ts_us = 100;
  l.dur_us = dur;
  l.fhash = fhash;
  l.args = std::move(args);
  return l;
}

trace_line process_name(uint64_t pid, std::string comm, std::string system)
{
  trace_line l;
  l.ph = phase::metadata;
  l.cat = "dftracer";
  l.name = "process_name";
  l.pid = l.tid = pid;
  l.texts = {{"name", std::move(comm)}};
  if (!system.empty())
    l.texts.emplace_back("system", std::move(system));
  return l;
}

name_map names()
{
  name_map n;
  n.hosts[7] = "node1";
  n.files[1] = "/data/x";
  n.files[2] = "pipe:[12]";
  n.files[3] = "/dev/null";
  n.files[4] = "/dev/nvme0n1";
  n.files[5] = "/dev/shm/seg";
  return n;
}

std::vector<trace_line> workload()
{
  return {process_name(10, "minio", "MinIO"), process_name(11, "cat", ""),
          ev("POSIX", "read", 10, 1, 10, {{"fd", 3}, {"ret", 4096}}),
          ev("POSIX", "pread64", 10, 1, 30, {{"fd", 3}, {"ret", 4096}}),
          ev("POSIX", "write", 10, 1, 20, {{"fd", 3}, {"ret", 1000}}),
          ev("POSIX", "write", 10, 1, 20, {{"fd", 3}, {"ret", -5}}),  // failed: no bytes
          ev("POSIX", "write", 10, 2, 5, {{"fd", 1}, {"ret", 50}}),   // a pipe: not file data
          ev("POSIX", "read", 10, 3, 5, {{"fd", 0}, {"ret", 70}}),    // /dev/null: not file data
          ev("POSIX", "read", 11, 4, 7, {{"fd", 0}, {"ret", 512}}),   // a block device: data
          ev("POSIX", "write", 11, 5, 3, {{"fd", 4}, {"ret", 64}}),   // tmpfs under /dev: data
          ev("POSIX", "lseek", 10, 1, 1, {{"fd", 3}, {"ret", 0}}),    // moves nothing
          ev("FS", "buffered_read", 10, 1, 8, {{"ret", 8192}}),
          ev("FS", "buffered_write", 10, 1, 4, {{"ret", 1000}}), ev("FS", "fsync", 10, 1, 4, {{"ret", 0}}),
          ev("BLOCK", "read", 10, 1, 100, {{"bytes", 16384}}),
          ev("BLOCK", "write", 10, 0, 200, {{"bytes", 8192}}),  // no file named
          ev("BLOCK", "write", 10, 1, 300, {{"bytes", 4096}}), ev("BLOCK", "flush", 10, 0, 5, {{"bytes", 0}}),
          // profile mode: counters of many calls
          ev("POSIX", "read", 11, 1, 0, {{"count", 3}, {"time_us", 30}, {"bytes", 300}}, phase::counter),
          ev("BLOCK", "read", 11, 1, 0, {{"count", 2}, {"time_us", 40}, {"bytes", 8192}}, phase::counter)};
}

// A copy (span or counter) read its fhash and wrote its args.fhash2; a pipe end is no file data.
TEST(AnalyzeAmplification, CopiesReadTheirInputAndWriteTheirOutput)
{
  amplification acc;
  test::feed(acc, {ev("POSIX", "copy_file_range", 10, 1, 10,
                      {{"fd", 3}, {"out_fd", 4}, {"ret", 300}, {"fhash2", 5}}),
                   ev("POSIX", "splice", 10, 1, 10, {{"fd", 3}, {"out_fd", 6}, {"ret", 40}, {"fhash2", 2}}),
                   ev("POSIX", "sendfile", 10, 1, 0,
                      {{"count", 2}, {"time_us", 9}, {"bytes", 500}, {"fhash2", 5}}, phase::counter)});
  auto j = acc.report(names());
  EXPECT_EQ(j["total"]["sys_read_bytes"], 840);
  EXPECT_EQ(j["total"]["sys_write_bytes"], 800);
  EXPECT_EQ(j["total"]["SYS_R"], 4);
  EXPECT_EQ(j["total"]["SYS_W"], 3);
  for (const auto& f : j["files"]) {
    EXPECT_NE(f["file"], "pipe:[12]");
    if (f["file"] == "/data/x") {
      EXPECT_EQ(f["POSIX"]["read_bytes"], 840);
      EXPECT_EQ(f["POSIX"]["write_bytes"], 0);
    }
    if (f["file"] == "/dev/shm/seg") {
      EXPECT_EQ(f["POSIX"]["read_bytes"], 0);
      EXPECT_EQ(f["POSIX"]["write_bytes"], 800);
    }
  }
}

TEST(AnalyzeAmplification, FilesProcessesSystemsAndTotals)
{
  amplification acc;
  test::feed(acc, workload());
  auto j = acc.report(names());
  const auto& t = j["total"];
  EXPECT_EQ(t["SYS_R"], 2 + 1 + 3);
  EXPECT_EQ(t["SYS_W"], 2);
  EXPECT_EQ(t["sys_read_bytes"], 4096 + 4096 + 512 + 300);
  EXPECT_EQ(t["sys_write_bytes"], 1064);
  EXPECT_EQ(t["VFS_R"], 1);
  EXPECT_EQ(t["VFS_W"], 1);
  EXPECT_EQ(t["vfs_read_bytes"], 8192);
  EXPECT_EQ(t["BLK_R"], 3);
  EXPECT_EQ(t["BLK_W"], 2);
  EXPECT_EQ(t["blk_read_bytes"], 16384 + 8192);
  EXPECT_EQ(t["blk_write_bytes"], 12288);
  EXPECT_DOUBLE_EQ(t["R_AMP"].get<double>(), 24576.0 / 9004.0);
  EXPECT_DOUBLE_EQ(t["avg_latency_us"]["blk_w"].get<double>(), 250.0);

  ASSERT_EQ(j["processes"].size(), 2u);
  const auto& minio = j["processes"][0];
  EXPECT_EQ(minio["pid"], 10);
  EXPECT_EQ(minio["host"], "node1");
  EXPECT_EQ(minio["system"], "MinIO");
  EXPECT_EQ(minio["SYS_R"], 2);
  EXPECT_DOUBLE_EQ(minio["avg_latency_us"]["sys_r"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(minio["W_AMP"].get<double>(), 12.288);
  EXPECT_EQ(j["processes"][1]["system"], "");

  ASSERT_EQ(j["systems"].size(), 1u);
  EXPECT_EQ(j["systems"][0]["system"], "MinIO");
  EXPECT_EQ(j["systems"][0]["processes"], 1);
  EXPECT_EQ(j["systems"][0]["BLK_W"], 2);
  EXPECT_DOUBLE_EQ(j["systems"][0]["R_AMP"].get<double>(), 2.0);

  // Files: /data/x, /dev/nvme0n1, /dev/shm/seg (the pipe and /dev/null moved no file data).
  std::map<std::string, nlohmann::json> files;
  for (const auto& f : j["files"]) files[f["file"]] = f;
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files["/data/x"]["POSIX"]["read_bytes"], 8492);
  EXPECT_EQ(files["/data/x"]["BLOCK"]["read_bytes"], 24576);
  EXPECT_EQ(files["/data/x"]["BLOCK"]["writes"], 1);
  EXPECT_DOUBLE_EQ(files["/data/x"]["W_AMP"].get<double>(), 4.096);
  EXPECT_EQ(files["/dev/nvme0n1"]["POSIX"]["reads"], 1);
}

TEST(AnalyzeAmplification, MergeAndPartialAreExact)
{
  auto lines = workload();
  amplification whole, a, b;
  test::feed(whole, lines);
  test::feed(a, std::vector<trace_line>(lines.begin(), lines.begin() + 7));
  test::feed(b, std::vector<trace_line>(lines.begin() + 7, lines.end()));
  a.merge(b);
  EXPECT_EQ(a.report(names()), whole.report(names()));
  auto back = amplification::from_partial(whole.partial());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names()), whole.report(names()));
  EXPECT_FALSE(amplification::from_partial({{"flows", {{1, 2}}}, {"processes", nlohmann::json::array()}}));
}

// A block request traced without its end (args.end_unseen, dur 0) counts in BLK_W and its bytes,
// not in the average latency; a partial keeps that apart, and one written before it reads as none.
TEST(AnalyzeAmplification, RequestsWithoutTheirEndCountButHaveNoLatency)
{
  auto lines = workload();
  lines.push_back(ev("BLOCK", "write", 10, 1, 0, {{"bytes", 4096}, {"end_unseen", 1}}));
  amplification acc;
  test::feed(acc, lines);
  auto t = acc.report(names())["total"];
  EXPECT_EQ(t["BLK_W"], 3);
  EXPECT_EQ(t["blk_write_bytes"], 12288 + 4096);
  EXPECT_DOUBLE_EQ(t["avg_latency_us"]["blk_w"].get<double>(), 250.0);
  auto back = amplification::from_partial(acc.partial());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names()), acc.report(names()));
  // A profile counter of 4 requests, 1 of them without its end: 3 took its 30 us.
  amplification counted;
  test::feed(counted,
             {ev("BLOCK", "read", 11, 1, 0,
                 {{"count", 4}, {"time_us", 30}, {"bytes", 16384}, {"end_unseen", 1}}, phase::counter)});
  auto c = counted.report(names())["total"];
  EXPECT_EQ(c["BLK_R"], 4);
  EXPECT_DOUBLE_EQ(c["avg_latency_us"]["blk_r"].get<double>(), 10.0);
  nlohmann::json six = {
      {"flows", {{7, 10, 1, {{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, {0, 4096, 0, 2, 0, 50}}}}},
      {"processes", nlohmann::json::array()}};
  auto old = amplification::from_partial(six);
  ASSERT_TRUE(old.has_value());
  EXPECT_DOUBLE_EQ(old->report(names())["total"]["avg_latency_us"]["blk_w"].get<double>(), 25.0);
}

TEST(AnalyzeAmplification, DataFilesByName)
{
  EXPECT_TRUE(is_data_file("/home/u/f"));
  EXPECT_TRUE(is_data_file("/proc/self/stat"));  // procfs files are regular files
  EXPECT_TRUE(is_data_file("anon:[8:1:1234]"));  // a regular file the tracer could not name
  EXPECT_TRUE(is_data_file("/dev/sda1"));
  EXPECT_TRUE(is_data_file("/dev/mapper/vg-root"));
  EXPECT_FALSE(is_data_file("/dev/pts/3"));
  EXPECT_FALSE(is_data_file("/dev/zero"));
  EXPECT_FALSE(is_data_file("/dev/nvme0"));  // the controller, a character device
  EXPECT_FALSE(is_data_file("socket:[99]"));
  EXPECT_FALSE(is_data_file("anon_inode:[eventfd]"));
}

trace_line cache_line(uint64_t pid, uint64_t fhash, std::array<int64_t, 7> v)
{
  static const char* keys[] = {
      "hits", "misses", "pages_read", "pages_added", "pages_dirtied", "pages_written_back", "pages_evicted"};
  trace_line l = ev("PAGECACHE", "page_cache", pid, fhash, 0, {}, phase::counter);
  for (size_t i = 0; i < v.size(); ++i) l.args.emplace_back(keys[i], v[i]);
  return l;
}

TEST(AnalyzePageCache, SumsPerProcessFileAndRun)
{
  page_cache acc;
  test::feed(acc, {cache_line(10, 1, {6, 2, 8, 5, 3, 1, 4}), cache_line(11, 1, {0, 4, 4, 4, 0, 0, 0}),
                   cache_line(11, 5, {1, 0, 1, 0, 0, 0, 2}), ev("POSIX", "read", 11, 1, 1, {{"ret", 9}})});
  auto j = acc.report(names());
  EXPECT_EQ(j["hits"], 7);
  EXPECT_EQ(j["misses"], 6);
  EXPECT_DOUBLE_EQ(j["hit_ratio"].get<double>(), 7.0 / 13.0);
  EXPECT_EQ(j["written_back"], 1);
  EXPECT_EQ(j["evicted"], 6);
  EXPECT_EQ(j["pages_read"], 13);
  ASSERT_EQ(j["processes"].size(), 2u);
  EXPECT_EQ(j["processes"][1]["hits"], 1);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["file"], "/data/x");
  EXPECT_EQ(j["files"][0]["misses"], 6);
  auto back = page_cache::from_partial(acc.partial());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names()), j);
  page_cache empty;
  EXPECT_TRUE(empty.report(names())["hit_ratio"].is_null());
}

trace_line net(std::string name, uint64_t pid, int64_t ret, int64_t rport, std::string new_state = "")
{
  trace_line l = ev("NET", std::move(name), pid, 0, 0,
                    {{"ret", ret}, {"family", 2}, {"protocol", 6}, {"lport", 5000}, {"rport", rport}});
  l.texts = {{"laddr", "10.0.0.1"}, {"raddr", "10.0.0.2"}};
  if (!new_state.empty())
    l.texts.emplace_back("new_state", new_state);
  return l;
}

TEST(AnalyzeNetwork, BytesCallsAndConnections)
{
  network acc;
  test::feed(acc, {net("send", 10, 100, 80), net("send", 10, 50, 80), net("recv", 10, 70, 80),
                   net("send", 10, 5, 443), net("recv", 11, 9, 80), net("state", 10, 0, 80, "ESTABLISHED"),
                   net("state", 10, 0, 80, "CLOSE"), net("retransmit", 10, 0, 80), net("drop", 11, 0, 80),
                   ev("NET", "send", 12, 0, 0, {{"count", 4}, {"bytes", 400}}, phase::counter)});
  auto j = acc.report(names());
  EXPECT_EQ(j["bytes_sent"], 555);
  EXPECT_EQ(j["bytes_received"], 79);
  EXPECT_EQ(j["sends"], 7);
  EXPECT_EQ(j["receives"], 2);
  EXPECT_EQ(j["connections"], 2);  // :80 (from both processes) and :443
  EXPECT_EQ(j["established"], 1);
  EXPECT_EQ(j["retransmits"], 1);
  EXPECT_EQ(j["drops"], 1);
  ASSERT_EQ(j["processes"].size(), 3u);
  EXPECT_EQ(j["processes"][0]["connections"], 2);
  EXPECT_EQ(j["processes"][1]["connections"], 1);
  auto back = network::from_partial(acc.partial());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names()), j);
}

TEST(AnalyzeCounterSections, AllFourSectionsThroughOnePartial)
{
  counter_sections all;
  auto lines = workload();
  lines.push_back(cache_line(10, 1, {1, 2, 3, 4, 5, 6, 7}));
  lines.push_back(net("send", 10, 100, 80));
  test::feed(all, lines);
  auto j = all.report(names(), run_section{});
  EXPECT_EQ(j["amplification"]["total"]["SYS_R"], 6);
  EXPECT_EQ(j["page_cache"]["hits"], 1);
  EXPECT_EQ(j["network"]["bytes_sent"], 100);
  EXPECT_EQ(j["files"].size(), 4u);  // POSIX calls on /data/x, /dev/nvme0n1, /dev/shm/seg, /dev/null
  auto back = counter_sections::from_partial(nlohmann::json::parse(all.partial().dump()));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->report(names(), run_section{}), j);
  j["diagnostics"] = {{{"rule", "small_io"}, {"severity", "warning"}, {"message", "most ops small"}}};
  std::string text = counters_text(j);
  EXPECT_NE(text.find("/data/x"), std::string::npos) << text;
  EXPECT_NE(text.find("(run)                         6        2        1        1        3        2    2.73"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("MinIO"), std::string::npos);
  EXPECT_NE(text.find("page cache: hits 1, misses 2, hit ratio 0.33, written back 6, evicted 7"),
            std::string::npos);
  EXPECT_NE(text.find("network: sent 100 bytes in 1 calls"), std::string::npos);
  EXPECT_NE(text.find("[warning] small_io: most ops small"), std::string::npos);
  auto missing = counter_sections::from_partial({{"files", nlohmann::json::object()}});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("missing"), std::string::npos);
}

}  // namespace
}  // namespace dc::analyze
