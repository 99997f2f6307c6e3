#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sink/gzip_members.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

std::string temp_path(const char* name)
{
  return (std::filesystem::temp_directory_path() / (std::string(name) + "." + std::to_string(getpid())))
      .string();
}

TEST(GzipMembers, EachFlushIsOneCompleteMember)
{
  std::string path = temp_path("members.gz");
  auto w = gzip_member_writer::create(path);
  ASSERT_TRUE(w);
  w->buffer() += "first\n";
  ASSERT_TRUE(w->flush_member());
  ASSERT_TRUE(w->flush_member());  // nothing buffered: no empty member
  w->buffer() += std::string(100000, 'x') + "\n";
  ASSERT_TRUE(w->flush_member());
  w->buffer() += "last\n";
  ASSERT_TRUE(w->close());
  EXPECT_EQ(w->members_written(), 3u);
  auto got = test::read_gzip_members(path);
  EXPECT_EQ(got.complete_members, 3u);
  EXPECT_FALSE(got.truncated_tail);
  EXPECT_EQ(got.text, "first\n" + std::string(100000, 'x') + "\nlast\n");
  std::filesystem::remove(path);
}

TEST(GzipMembers, ACutFileKeepsEveryMemberBeforeTheCut)
{
  std::string path = temp_path("cut.gz");
  auto w = gzip_member_writer::create(path);
  ASSERT_TRUE(w);
  w->buffer() += "kept\n";
  ASSERT_TRUE(w->flush_member());
  w->buffer() += "lost in the cut\n";
  ASSERT_TRUE(w->close());
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 5);
  auto got = test::read_gzip_members(path);
  EXPECT_EQ(got.complete_members, 1u);
  EXPECT_TRUE(got.truncated_tail);
  EXPECT_EQ(got.text, "kept\n");
  std::filesystem::remove(path);
}

TEST(GzipMembers, RefusesToFollowASymlink)
{
  std::string target = temp_path("target");
  std::string link = temp_path("link.gz");
  {
    std::ofstream(target) << "keep me";
  }
  std::filesystem::remove(link);
  std::filesystem::create_symlink(target, link);
  auto w = gzip_member_writer::create(link);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find(link), std::string::npos);
  std::ifstream in(target);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "keep me");
  std::filesystem::remove(link);
  std::filesystem::remove(target);
}

TEST(GzipMembers, RefusesAHardLinkedFileAndWhatIsNotARegularFile)
{
  std::string target = temp_path("linked");
  std::string link = temp_path("hard.gz");
  {
    std::ofstream(target) << "keep me";
  }
  std::filesystem::remove(link);
  std::filesystem::create_hard_link(target, link);
  auto w = gzip_member_writer::create(link);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("other hard links"), std::string::npos) << w.error().message;
  EXPECT_EQ(std::filesystem::file_size(target), 7u) << "the linked file was truncated";
  std::filesystem::remove(link);
  std::filesystem::remove(target);
  auto dev = gzip_member_writer::create("/dev/null");
  ASSERT_FALSE(dev);
  EXPECT_NE(dev.error().message.find("'/dev/null': not a regular file"), std::string::npos)
      << dev.error().message;
}

TEST(GzipMembers, NamesAMissingDirectory)
{
  auto w = gzip_member_writer::create("/nonexistent-dir/x.pfw.gz");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("/nonexistent-dir/x.pfw.gz"), std::string::npos);
}

}  // namespace
}  // namespace dc
