// Each diagnostic rule fires on numbers past its threshold, with those numbers as evidence, and
// stays silent just below it.
#include <gtest/gtest.h>

#include "analyze/diagnostics.h"

namespace dc::analyze {
namespace {

nlohmann::json file(std::string name, int64_t reads, int64_t writes, int64_t small, int64_t seq,
                    nlohmann::json fcounters = nlohmann::json::object(), int64_t bytes_read = 0,
                    int64_t max_byte = 0)
{
  return {{"file", std::move(name)},
          {"module", "POSIX"},
          {"counters",
           {{"POSIX_READS", reads},
            {"POSIX_WRITES", writes},
            {"POSIX_SEQ_READS", seq},
            {"POSIX_SEQ_WRITES", 0},
            {"POSIX_OPENS", 1},
            {"POSIX_STATS", 0},
            {"POSIX_SEEKS", 0},
            {"POSIX_BYTES_READ", bytes_read},
            {"POSIX_MAX_BYTE_READ", max_byte}}},
          {"fcounters", std::move(fcounters)},
          {"small_ops", small},
          {"unknown_offset_ops", 0}};
}

std::vector<std::string> rules(const nlohmann::json& found)
{
  std::vector<std::string> out;
  for (const auto& d : found) out.push_back(d["rule"]);
  return out;
}

TEST(AnalyzeDiagnostics, QuietReportHasNone)
{
  EXPECT_EQ(diagnose(nlohmann::json::object()), nlohmann::json::array());
  nlohmann::json report = {{"files", {file("/a", 60, 40, 50, 90)}}};
  EXPECT_EQ(diagnose(report), nlohmann::json::array());  // exactly half small: not more than half
}

TEST(AnalyzeDiagnostics, SmallIo)
{
  auto found = diagnose({{"files", {file("/a", 60, 40, 51, 99)}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"small_io"});
  EXPECT_EQ(found[0]["evidence"]["small_ops"], 51);
  EXPECT_EQ(found[0]["evidence"]["ops"], 100);
  EXPECT_EQ(found[0]["severity"], "warning");
  EXPECT_EQ(diagnose({{"files", {file("/a", 50, 49, 99, 99)}}}), nlohmann::json::array());  // < 100 ops
}

TEST(AnalyzeDiagnostics, RandomAccess)
{
  auto found = diagnose({{"files", {file("/a", 100, 0, 0, 49), file("/b", 100, 0, 0, 50)}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"random_access"});
  EXPECT_EQ(found[0]["evidence"]["file"], "/a");
  EXPECT_EQ(found[0]["evidence"]["random"], 51);
  // Pseudo files re-read at offset 0 (a process polling /proc/self/stat) are not file access.
  for (const char* pseudo : {"/proc/self/stat", "/sys/fs/cgroup/cpu.max", "/dev/urandom"})
    EXPECT_EQ(diagnose({{"files", {file(pseudo, 100, 0, 0, 0)}}}), nlohmann::json::array()) << pseudo;
}

TEST(AnalyzeDiagnostics, MetadataStorm)
{
  nlohmann::json slow_meta = {
      {"POSIX_F_META_TIME", 0.3}, {"POSIX_F_READ_TIME", 0.1}, {"POSIX_F_WRITE_TIME", 0.1}};
  auto found = diagnose({{"files", {file("/a", 1, 0, 0, 1, slow_meta)}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"metadata_storm"});
  EXPECT_DOUBLE_EQ(found[0]["evidence"]["meta_time_s"].get<double>(), 0.3);
  nlohmann::json short_meta = {{"POSIX_F_META_TIME", 0.09}, {"POSIX_F_READ_TIME", 0.0}};
  EXPECT_EQ(diagnose({{"files", {file("/a", 1, 0, 0, 1, short_meta)}}}), nlohmann::json::array());
}

nlohmann::json process(uint64_t pid, uint64_t read, uint64_t written)
{
  return {{"host", "n"}, {"pid", pid}, {"sys_read_bytes", read}, {"sys_write_bytes", written}};
}

TEST(AnalyzeDiagnostics, Imbalance)
{
  auto found = diagnose(
      {{"amplification", {{"processes", {process(1, 100, 0), process(2, 100, 0), process(3, 0, 500)}}}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"imbalance"});
  EXPECT_EQ(found[0]["evidence"]["max_process"], "n:3");
  EXPECT_DOUBLE_EQ(found[0]["evidence"]["ratio"].get<double>(), 500.0 / (700.0 / 3.0));
  // 150 vs a mean of 125: 1.2x
  EXPECT_EQ(diagnose({{"amplification",
                       {{"processes", {process(1, 100, 0), process(2, 150, 0), process(3, 0, 0)}}}}}),
            nlohmann::json::array());
}

TEST(AnalyzeDiagnostics, HighAmplification)
{
  nlohmann::json total = {{"sys_read_bytes", 1 << 20},
                          {"blk_read_bytes", 6 << 20},
                          {"sys_write_bytes", 1},
                          {"blk_write_bytes", 4096}};  // write: device bytes under the floor
  nlohmann::json system = {{"system", "Ceph"}, {"sys_write_bytes", 1 << 20}, {"blk_write_bytes", 5 << 20}};
  auto found = diagnose({{"amplification", {{"total", total}, {"systems", {system}}}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"high_amplification"});
  EXPECT_EQ(found[0]["evidence"]["direction"], "read");
  EXPECT_DOUBLE_EQ(found[0]["evidence"]["ratio"].get<double>(), 6.0);
}

TEST(AnalyzeDiagnostics, LowHitRatioOnReReads)
{
  nlohmann::json files = {file("/a", 10, 0, 0, 9, nlohmann::json::object(), 3 << 20, (1 << 20) - 1),
                          file("/b", 10, 0, 0, 9, nlohmann::json::object(), 3 << 20, (1 << 20) - 1)};
  nlohmann::json cache = {
      {"files",
       {{{"file", "/a"}, {"hits", 10}, {"misses", 90}}, {{"file", "/b"}, {"hits", 50}, {"misses", 50}}}}};
  auto found = diagnose({{"files", files}, {"page_cache", cache}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"low_cache_hit_ratio"});
  EXPECT_EQ(found[0]["evidence"]["file"], "/a");
  EXPECT_EQ(found[0]["evidence"]["extent_bytes"], 1 << 20);
  EXPECT_DOUBLE_EQ(found[0]["evidence"]["hit_ratio"].get<double>(), 0.1);
}

TEST(AnalyzeDiagnostics, LostEvents)
{
  auto found = diagnose({{"run", {{"lost", {{"ring_full", 3}, {"no_state", 0}, {"too_deep", 2}}}}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"lost_events"});
  EXPECT_EQ(found[0]["severity"], "error");
  EXPECT_EQ(found[0]["evidence"]["lost"], 5);
  EXPECT_EQ(found[0]["evidence"]["kinds"], (nlohmann::json{{"ring_full", 3}, {"too_deep", 2}}));
  auto stated = diagnose({{"run", {{"lost", {{"events_lost", 5}, {"ring_full", 3}, {"too_deep", 2}}}}}});
  EXPECT_EQ(stated[0]["evidence"]["lost"], 5);
  // Kinds that count no event (a lost name record) are not events lost: the stated total is.
  auto names =
      diagnose({{"run", {{"lost", {{"events_lost", 3}, {"ring_full", 3}, {"record_ring_full", 4}}}}}});
  EXPECT_EQ(names[0]["evidence"]["lost"], 3);
  EXPECT_EQ(diagnose({{"run", {{"lost", {{"events_lost", 0}, {"record_ring_full", 2}}}}}}),
            nlohmann::json::array());
  EXPECT_EQ(diagnose({{"run", {{"lost", {{"ring_full", 0}}}}}}), nlohmann::json::array());
}

// Block requests not seen to end when tracing stopped are said apart, not summed as events lost.
TEST(AnalyzeDiagnostics, BlockRequestsNotSeenToEndAreAWarningOfTheirOwn)
{
  auto found = diagnose({{"run", {{"lost", {{"lost_ring_full", 0}, {"lost_block_unended", 2}}}}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"block_requests_unended"});
  EXPECT_EQ(found[0]["severity"], "warning");
  EXPECT_EQ(found[0]["evidence"]["requests"], 2);
  auto both = diagnose({{"run", {{"lost", {{"lost_ring_full", 3}, {"lost_block_unended", 1}}}}}});
  ASSERT_EQ(rules(both), (std::vector<std::string>{"block_requests_unended", "lost_events"}));
  EXPECT_EQ(both[1]["evidence"]["lost"], 3);
}

// Block requests traced without their end are no events lost: a note of their own.
TEST(AnalyzeDiagnostics, BlockRequestsTracedWithoutTheirEndAreANoteNotALoss)
{
  auto found = diagnose({{"run", {{"lost", {{"events_lost", 0}, {"lost_block_end_unseen", 4}}}}}});
  ASSERT_EQ(rules(found), std::vector<std::string>{"block_requests_untimed"});
  EXPECT_EQ(found[0]["severity"], "info");
  EXPECT_EQ(found[0]["evidence"]["requests"], 4);
  auto unsummed = diagnose({{"run", {{"lost", {{"ring_full", 2}, {"block_end_unseen", 1}}}}}});
  ASSERT_EQ(rules(unsummed), (std::vector<std::string>{"block_requests_untimed", "lost_events"}));
  EXPECT_EQ(unsummed[1]["evidence"]["lost"], 2);
}

}  // namespace
}  // namespace dc::analyze
