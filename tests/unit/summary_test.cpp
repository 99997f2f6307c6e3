#include <gtest/gtest.h>

#include "sink/summary.h"

namespace dc {
namespace {

trace_event io(std::string_view name, uint32_t pid, uint64_t bytes, uint64_t dur)
{
  trace_event ev;
  ev.name = name;
  ev.category = "POSIX";
  ev.pid = pid;
  ev.tid = pid;
  ev.bytes = bytes;
  ev.dur_us = dur;
  return ev;
}

TEST(Summary, AddsCountsBytesAndTimePerLayerAndProcess)
{
  summary_builder s;
  s.add(io("read", 1, 100, 2));
  s.add(io("read", 1, 50, 3));
  s.add(io("read", 2, 7, 1));
  s.add(io("write", 2, 0, 4));
  const auto& r = s.totals().at("POSIX").at("read");
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.bytes, 157u);
  EXPECT_EQ(r.time_us, 6u);
  EXPECT_EQ(s.per_process().at(1).at("POSIX").at("read").count, 2u);
  EXPECT_EQ(s.per_process().at(2).at("POSIX").at("write").time_us, 4u);

  process_table procs;
  procs[1] = {1, 0, "a b", "a", 0, {}};
  procs[2] = {2, 1, "a b", "a", 0, {}};
  run_facts facts{{"a", "b"}, 3, 4, {1, 0}, "t.pfw.gz"};
  auto j = summary_json(s, procs, facts);
  EXPECT_EQ(j["command"], nlohmann::json({"a", "b"}));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["events"]["written"], 4);
  EXPECT_EQ(j["events"]["lost"], 1);
  EXPECT_EQ(j["layers"]["POSIX"]["read"]["bytes"], 157);
  EXPECT_EQ(j["processes"]["2"]["parent"], 1);
  EXPECT_EQ(j["processes"]["2"]["layers"]["POSIX"]["write"]["count"], 1);
  std::string text = summary_text(s, procs, facts);
  EXPECT_NE(text.find("events lost: 1"), std::string::npos);
  EXPECT_NE(text.find("t.pfw.gz"), std::string::npos);
}

}  // namespace
}  // namespace dc
