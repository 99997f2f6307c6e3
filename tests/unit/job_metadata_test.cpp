// Job metadata as SLURM comments and Flux jobspecs carry it: requests, non-requests, and
// malformed requests with the reason.
#include <gtest/gtest.h>

#include "deploy/job_metadata.h"

namespace dc {
namespace {

TEST(job_metadata, TheContractFormAsksForTracing)
{
  auto r = parse_job_metadata(R"({"datacrumbs":{"enable":"yes","probe_file":"/home/a/p.json.gz"}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->traced);
  EXPECT_EQ(r->probe_file, "/home/a/p.json.gz");
  auto with_others = parse_job_metadata(
      R"({"project":"x","datacrumbs":{"probe_file":"/p.json.gz","enable":"yes"},"n":[1]})");
  ASSERT_TRUE(with_others);
  EXPECT_EQ(with_others->probe_file, "/p.json.gz");
}

TEST(job_metadata, FluxAttributesAreFoundByTheirPath)
{
  std::string jobspec =
      R"({"attributes":{"system":{"duration":0,"datacrumbs":{"enable":"yes","probe_file":"/q.json.gz"}}}})";
  auto r = parse_job_metadata(jobspec, "attributes.system");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->traced);
  EXPECT_EQ(r->probe_file, "/q.json.gz");
  auto typed =
      parse_job_metadata(R"({"system":{"datacrumbs":{"enable":1,"probe_file":"/q.json.gz"}}})", "system");
  ASSERT_TRUE(typed) << typed.error().message;
  EXPECT_TRUE(typed->traced) << "--setattr=system.datacrumbs.enable=1 is stored as the number 1";
  auto typed_no = parse_job_metadata(R"({"system":{"datacrumbs":{"enable":false}}})", "system");
  ASSERT_TRUE(typed_no);
  EXPECT_FALSE(typed_no->traced);
  auto absent = parse_job_metadata(R"({"attributes":{"system":{"duration":0}}})", "attributes.system");
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->traced);
}

TEST(job_metadata, MetadataThatIsNotOursIsNoRequest)
{
  for (const char* text : {"", "run 3 of the sweep", "[1,2]", R"({"project":"x"})", R"("datacrumbs")",
                           R"({"datacrumbs":{"enable":"no"}})"}) {
    auto r = parse_job_metadata(text);
    ASSERT_TRUE(r) << text << ": " << r.error().message;
    EXPECT_FALSE(r->traced) << text;
  }
}

TEST(job_metadata, MalformedRequestsSayWhatIsWrong)
{
  for (const auto& [text, says] : std::initializer_list<std::pair<const char*, const char*>>{
           {R"({"datacrumbs":{"enable":"yes")", "not valid JSON"},
           {R"({"datacrumbs":"yes"})", "not an object"},
           {R"({"datacrumbs":{"enable":"yes"}})", "\"probe_file\" must be an absolute path"},
           {R"({"datacrumbs":{"enable":"yes","probe_file":"rel.json.gz"}})", "absolute path"},
           {R"({"datacrumbs":{"enable":"maybe","probe_file":"/p.json.gz"}})", "\"enable\" must be"},
           {R"({"datacrumbs":{"enable":2,"probe_file":"/p.json.gz"}})", "\"enable\" must be"},
           {R"({"datacrumbs":{"probe_file":"/p.json.gz"}})", "\"enable\" must be"},
           {R"({"datacrumbs":{"enable":"yes","probe_file":"/p","probes":"x"}})",
            "unknown datacrumbs setting \"probes\""}}) {
    auto r = parse_job_metadata(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().exit_code, 2);
  }
}

}  // namespace
}  // namespace dc
