// The decoder in profile mode: counters read from the kernel's map become "ph":"C" samples and
// the summary's counts (collect/profile_decoder.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <algorithm>

#include "collect/decoder.h"
#include "sink/summary.h"
#include "unit/decoder_fixture.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

constexpr dc_file_ref data_file{1234, (8u << 20) | 1, S_IFREG};

// Profile mode: one counter per (process, layer, operation, file, interval) becomes a "ph":"C"
// sample at its interval's start, and the summary counts the calls it stands for.
TEST_F(decoder_fixture, ProfileCountersAreSamplesAndTheSummaryCountsTheirCalls)
{
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("data.bin\0dir\0", 13), data_file);
  constexpr uint64_t interval = 1'000'000;  // 1 ms
  dc_profile_key key{};
  key.epoch = 7;
  key.file = data_file;
  key.tgid = 10;
  key.layer = DC_PROF_POSIX;
  key.op = SYS_pread64;
  dec->decode_profile(key, {300, 4'500'000, 300 * 4096, 300}, interval);
  key.epoch = 8;
  dec->decode_profile(key, {20, 100'000, 20 * 4096, 20}, interval);
  dc_profile_key unknown = key;
  unknown.layer = 99;
  dec->decode_profile(unknown, {1, 0, 0, 0}, interval);
  EXPECT_EQ(dec->malformed(), 1u);

  const op_stats& s = summary.totals().ops.at("POSIX").at("pread64");
  EXPECT_EQ(s.count, 320u);
  EXPECT_EQ(s.bytes, 320u * 4096);
  EXPECT_EQ(s.time_us, 4600u);
  EXPECT_EQ(summary.totals().flows.at("POSIX").read_ops, 320u);
  EXPECT_EQ(summary.page_cache().by_file().begin()->second.pages_read, 320u);

  ASSERT_TRUE(writer->finish({}));
  std::vector<nlohmann::json> samples;
  for (auto& j : test::parse_trace_text(test::read_gzip_members(path).text).lines) {
    EXPECT_NE(j["ph"], "X");
    if (j["ph"] == "C")
      samples.push_back(j);
  }
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0]["name"], "pread64");
  EXPECT_EQ(samples[0]["cat"], "POSIX");
  EXPECT_EQ(samples[0]["pid"], 10);
  EXPECT_EQ(samples[0]["ts"], 7000);  // epoch 7 of 1 ms, in microseconds
  EXPECT_EQ(samples[0]["args"]["count"], 300);
  EXPECT_EQ(samples[0]["args"]["time_us"], 4500);
  EXPECT_EQ(samples[0]["args"]["bytes"], 300 * 4096);
  // The calls' summed time as dur (what dfanalyzer adds up as I/O time); the file beside args,
  // which viewers draw as series, and a series id per layer and file.
  EXPECT_EQ(samples[0]["dur"], 4500);
  EXPECT_EQ(samples[0]["fhash"], string_hash("/dir/data.bin"));
  EXPECT_FALSE(samples[0]["args"].contains("fhash"));
  EXPECT_FALSE(samples[0]["args"].contains("hhash"));
  EXPECT_EQ(samples[0]["id"], "POSIX /dir/data.bin");
  EXPECT_EQ(samples[1]["ts"], 8000);
  EXPECT_EQ(samples[1]["id"], samples[0]["id"]);
}

// A block counter's requests traced without their end (the `pages` field of a BLOCK counter) are
// its sample's end_unseen, not pages; the counter's count and bytes include them.
TEST_F(decoder_fixture, ABlockCountersRequestsWithoutTheirEndAreSaidInItsSample)
{
  dc_profile_key key{};
  key.epoch = 3;
  key.tgid = 10;
  key.layer = DC_PROF_BLOCK;
  key.op = DC_BLOCK_WRITE;
  dec->decode_profile(key, {5, 2'000'000, 5 * 4096, 2}, 1'000'000);
  const op_stats& s = summary.totals().ops.at("BLOCK").at("write");
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.bytes, 5u * 4096);
  ASSERT_TRUE(writer->finish({}));
  auto lines = test::parse_trace_text(test::read_gzip_members(path).text).lines;
  auto sample = std::find_if(lines.begin(), lines.end(), [](const auto& j) { return j["ph"] == "C"; });
  ASSERT_NE(sample, lines.end());
  EXPECT_EQ((*sample)["args"]["end_unseen"], 2);
  EXPECT_FALSE((*sample)["args"].contains("pages"));
  EXPECT_EQ((*sample)["args"]["count"], 5);
}

}  // namespace
}  // namespace dc
