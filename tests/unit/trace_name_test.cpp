// The daemon's trace names: every field of the pattern, and the patterns and fields refused.
#include <gtest/gtest.h>

#include "config/system_config.h"
#include "deploy/trace_name.h"

namespace dc {
namespace {

// 2026-03-04 05:06:07 UTC
constexpr std::time_t march_4 = 1772600767;

TEST(trace_name, TheDefaultPatternNamesDayRunAndHost)
{
  auto name = expand_trace_pattern(default_trace_pattern, {"4242", "node07", "alice", march_4});
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(*name, "2026/03/04/datacrumbs-4242-node07.pfw.gz");
}

TEST(trace_name, EveryFieldAndALiteralPercent)
{
  auto name = expand_trace_pattern("%u/%Y-%m-%d/%j.%h.100%%.pfw.gz", {"j1", "n1", "bob", march_4});
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(*name, "bob/2026-03-04/j1.n1.100%.pfw.gz");
}

TEST(trace_name, BadPatternsAndFieldsAreRefusedWithTheReason)
{
  trace_name_fields f{"7", "node", "alice", march_4};
  for (const auto& [pattern, says] : std::initializer_list<std::pair<std::string, std::string>>{
           {"/abs/%j.pfw.gz", "not a relative path"},
           {"../%j.pfw.gz", "'..' component"},
           {"a//%j.pfw.gz", "empty"},
           {"%j.txt", "does not name a .pfw.gz file"},
           {"%j/.pfw.gz", "does not name a .pfw.gz file"},
           {"%x-%j.pfw.gz", "unknown field '%x'"},
           {"%j.pfw.gz%", "lone '%'"},
           {"", "not a relative path"}}) {
    auto name = expand_trace_pattern(pattern, f);
    ASSERT_FALSE(name) << pattern << " gave " << *name;
    EXPECT_NE(name.error().message.find(says), std::string::npos) << name.error().message;
    EXPECT_EQ(name.error().exit_code, 2);
  }
  auto slash_host = expand_trace_pattern("%h.pfw.gz", {"7", "a/b", "alice", march_4});
  ASSERT_FALSE(slash_host);
  EXPECT_NE(slash_host.error().message.find("'a/b'"), std::string::npos) << slash_host.error().message;
  EXPECT_FALSE(expand_trace_pattern("%j.pfw.gz", {"..", "h", "u", march_4}));
}

TEST(trace_name, ShortHostNameHasNoDomain)
{
  std::string host = short_host_name();
  EXPECT_FALSE(host.empty());
  EXPECT_EQ(host.find('.'), std::string::npos);
}

TEST(trace_name, RunIdsThatWouldLeaveTheirFileNameAreRefused)
{
  using names = std::initializer_list<std::string>;
  for (const std::string& ok : names{"4242", "job-1.step_2", std::string(64, 'x'), ".hidden", "a..b"})
    EXPECT_TRUE(check_run_id(ok)) << ok;
  for (const std::string& bad : names{"", ".", "..", "a/b", "../x", std::string(65, 'x'),
                                      std::string("a\0b", 3), "a\nb", "a b", "caf\xc3\xa9"}) {
    auto refused = check_run_id(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().exit_code, 2);
    EXPECT_NE(refused.error().message.find("invalid run id"), std::string::npos);
  }
}

}  // namespace
}  // namespace dc
