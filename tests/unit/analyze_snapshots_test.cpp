// The analyze accumulator of snapshot lines: what it reports, and that any split of the lines
// merged (directly or through partials) reports the same.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/snapshots.h"

namespace dc::analyze {
namespace {

// A snapshot metadata line as the reader hands it over.
struct line {
  std::string name;
  uint64_t hhash, pid;
  int64_t ts;
  std::string value;
  std::vector<record_text> texts;
  record to_record()
  {
    texts = {{"name", "label"}, {"value", value}};
    record r;
    r.ph = phase::metadata;
    r.cat = "dftracer";
    r.name = name;
    r.hhash = hhash;
    r.pid = pid;
    r.ts_us = ts;
    r.texts = texts;
    return r;
  }
};

std::vector<line> sample_lines()
{
  return {
      {"snapshot_system", 11, 100, 1000, R"({"hostname":"n1","cpu_count":4,"kernel":"6.1.0"})", {}},
      {"snapshot_system", 22, 200, 1000, R"({"hostname":"n2","cpu_count":8,"kernel":"6.1.0"})", {}},
      {"snapshot_process", 11, 100, 1001, R"({"pid":100,"command":"sh -c x","rank":3})", {}},
      {"snapshot_process", 11, 101, 1500, R"({"pid":101,"command":"head","gone":true})", {}},
      {"snapshot_files",
       11,
       100,
       1002,
       R"({"dir":"/d","when":"start","first":0,"total":0,"entries":[],"error":"not a directory"})",
       {}},
      {"snapshot_files",
       11,
       100,
       2000,
       R"({"dir":"/d","when":"end","first":0,"total":3,"entries":[{"path":"/d/a","type":"file","size":5,"mtime_us":1},{"path":"/d/b","type":"dir","size":4096,"mtime_us":2}]})",
       {}},
      {"snapshot_files",
       11,
       100,
       2000,
       R"({"dir":"/d","when":"end","first":2,"total":3,"entries":[{"path":"/d/b/c","type":"file","size":7,"mtime_us":3}]})",
       {}},
      {"snapshot_files", 22, 200, 2100, R"(not json)", {}},
  };
}

name_map names()
{
  name_map n;
  n.hosts[11] = "n1";
  n.hosts[22] = "n2";
  return n;
}

TEST(AnalyzeSnapshots, ReportsWhatTheLinesHold)
{
  snapshots s;
  for (auto& l : sample_lines()) s.add(l.to_record());
  // Other metadata and events are not snapshots.
  line fh{"FH", 11, 100, 5, R"({"x":1})", {}};
  s.add(fh.to_record());
  nlohmann::json r = s.report(names());
  EXPECT_EQ(r["system"]["n1"]["cpu_count"], 4);
  EXPECT_EQ(r["system"]["n2"]["cpu_count"], 8);
  ASSERT_EQ(r["processes"].size(), 2u);
  EXPECT_EQ(r["processes"][0]["host"], "n1");
  EXPECT_EQ(r["processes"][0]["rank"], 3);
  EXPECT_EQ(r["processes"][1]["gone"], true);
  ASSERT_EQ(r["filesystem"].size(), 2u);
  EXPECT_EQ(r["filesystem"][0]["when"], "start");  // in time order, not by name
  EXPECT_EQ(r["filesystem"][0]["error"], "not a directory");
  const nlohmann::json& end = r["filesystem"][1];
  EXPECT_EQ(end["when"], "end");
  EXPECT_EQ(end["total"], 3);
  EXPECT_EQ(end["complete"], true);
  EXPECT_EQ(end["file_bytes"], 12);  // files only, not the directory
  EXPECT_EQ(end["entries"].size(), 3u);
  EXPECT_EQ(r["unreadable"], 1);
  std::string text = snapshots_text(r);
  EXPECT_NE(text.find("System n1:"), std::string::npos) << text;
  EXPECT_NE(text.find("Directory n1:/d at end: 3 entries, 12 B in files"), std::string::npos) << text;
  EXPECT_LT(text.find("Directory n1:/d at start"), text.find("Directory n1:/d at end")) << text;
  EXPECT_EQ(snapshots_text(snapshots{}.report(names())), "");
}

TEST(AnalyzeSnapshots, AnySplitMergesToTheSameReport)
{
  auto lines = sample_lines();
  snapshots all;
  for (auto& l : lines) all.add(l.to_record());
  nlohmann::json expected = all.report(names());
  // Every line alone in its own accumulator, merged in both orders and through partials;
  // the two lines of one directory snapshot are split too.
  snapshots forward, backward, through_partials;
  for (auto& l : lines) {
    snapshots one;
    one.add(l.to_record());
    forward.merge(one);
    auto again = snapshots::from_partial(nlohmann::json::parse(one.partial().dump()));
    ASSERT_TRUE(again.has_value()) << again.error().message;
    through_partials.merge(*again);
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    snapshots one;
    one.add(it->to_record());
    backward.merge(one);
  }
  EXPECT_EQ(forward.report(names()), expected);
  EXPECT_EQ(backward.report(names()), expected);
  EXPECT_EQ(through_partials.report(names()), expected);
}

TEST(AnalyzeSnapshots, ABadPartialIsAnError)
{
  EXPECT_FALSE(snapshots::from_partial(nlohmann::json::object()).has_value());
  EXPECT_FALSE(snapshots::from_partial({{"systems", {{1, "x", 2}}}}).has_value());
}

}  // namespace
}  // namespace dc::analyze
