#include <gtest/gtest.h>

#include "sink/system_summary.h"
#include "unit/test_events.h"

namespace dc {
namespace {

process_info proc(uint32_t pid, std::string comm)
{
  process_info p;
  p.pid = pid;
  p.comm = std::move(comm);
  return p;
}

TEST(Systems, BuiltInsAndUserRulesLabelProcessesByName)
{
  auto user = parse_system_rule("Mine=my(app|db)");
  ASSERT_TRUE(user);
  auto rules = system_rules({*user});
  EXPECT_EQ(system_label(proc(1, "postgres"), rules), "PostgreSQL");
  EXPECT_EQ(system_label(proc(1, "etcd"), rules), "etcd");
  EXPECT_EQ(system_label(proc(1, "ceph-osd"), rules), "Ceph");
  EXPECT_EQ(system_label(proc(1, "glusterfsd"), rules), "GlusterFS");
  EXPECT_EQ(system_label(proc(1, "minio"), rules), "MinIO");
  EXPECT_EQ(system_label(proc(1, "mydb"), rules), "Mine");
  EXPECT_EQ(system_label(proc(1, "postgresql-helper"), rules), "");  // full match only
}

TEST(Systems, BadRulesAreRefusedWithTheirText)
{
  auto bad = parse_system_rule("X=([unclosed");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("([unclosed"), std::string::npos);
  EXPECT_FALSE(parse_system_rule("no-equals-sign"));
  EXPECT_FALSE(parse_system_rule("=regex"));
}

TEST(Systems, RowsAddTheirProcessesAndComputeByteAmplification)
{
  summary_builder s;
  s.add(test::io_event("write", 1, 8192, 0));
  s.add(test::io_event("write", 2, 8192, 0));
  s.add(test::io_event("write", 2, 49152, 0, "BLOCK"));
  s.add(test::io_event("read", 3, 100, 0));  // not a storage system
  process_table procs{{1, proc(1, "etcd")}, {2, proc(2, "etcd")}, {3, proc(3, "curl")}};
  auto j = systems_json(s, procs, system_rules({}));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j["etcd"]["processes"], 2);
  EXPECT_EQ(j["etcd"]["SYS_W"], 2);
  EXPECT_EQ(j["etcd"]["BLK_W"], 1);
  EXPECT_DOUBLE_EQ(j["etcd"]["W_AMP"].get<double>(), 3.0);
  EXPECT_TRUE(j["etcd"]["R_AMP"].is_null());
  EXPECT_NE(systems_text(j).find("etcd"), std::string::npos);
}

}  // namespace
}  // namespace dc
