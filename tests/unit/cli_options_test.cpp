// The command-line value checks every tool uses (cli/options.h): numbers as text, paths by what
// an option needs, lists, and the one line a refusal prints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/options.h"

namespace dc::cli {
namespace {

TEST(cli_options, WholeNumbersAreDigitsInRange)
{
  EXPECT_EQ(check_whole_number("1", 1, 2048), "");
  EXPECT_EQ(check_whole_number("2048", 1, 2048), "");
  EXPECT_EQ(check_whole_number("0002048", 1, 2048), "");
  EXPECT_EQ(check_whole_number("18446744073709551615", 0, UINT64_MAX), "");
  EXPECT_EQ(check_whole_number("0", 1, 2048), "'0' is out of range (1 to 2048)");
  EXPECT_EQ(check_whole_number("2049", 1, 2048), "'2049' is out of range (1 to 2048)");
  EXPECT_EQ(check_whole_number("18446744073709551616", 0, UINT64_MAX),
            "'18446744073709551616' is out of range (0 to 18446744073709551615)");
  EXPECT_EQ(check_whole_number("99999999999999999999999999", 1, 2048),
            "'99999999999999999999999999' is out of range (1 to 2048)");
  for (const char* bad : {"", "abc", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "１"})
    EXPECT_EQ(check_whole_number(bad, 1, 2048),
              "'" + std::string(bad) + "' is not a whole number (1 to 2048)");
}

TEST(cli_options, PathsAreCheckedForWhatTheOptionNeeds)
{
  char tmpl[] = "/tmp/dc_options_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string d = tmpl;
  std::ofstream(d + "/file") << "x";
  std::filesystem::create_directory(d + "/sub");
  EXPECT_EQ(check_output_file(d + "/new"), "");
  EXPECT_EQ(check_output_file(d + "/file"), "");  // replaced, as a shell's > would
  EXPECT_EQ(check_output_file("relative-name"), "");
  EXPECT_EQ(check_output_file(""), "an empty path");
  EXPECT_EQ(check_output_file(d + "/sub"), "'" + d + "/sub' is a directory, not a file");
  EXPECT_EQ(check_output_file(d + "/none/x"),
            "'" + d + "/none/x': directory '" + d + "/none' does not exist");
  EXPECT_EQ(check_output_file(d + "/file/x"), "'" + d + "/file/x': '" + d + "/file' is not a directory");
  EXPECT_EQ(check_output_directory(d + "/sub"), "");
  EXPECT_EQ(check_output_directory(d + "/a/b/c"), "");  // made with its parents
  EXPECT_EQ(check_output_directory(d + "/file"), "'" + d + "/file' exists and is not a directory");
  EXPECT_EQ(check_output_directory(d + "/file/a/b"),
            "'" + d + "/file/a/b': '" + d + "/file' is not a directory");
  EXPECT_EQ(check_input_file(d + "/file"), "");
  EXPECT_EQ(check_input_file(d + "/none"), "'" + d + "/none' does not exist");
  EXPECT_EQ(check_input_file(d + "/sub"), "'" + d + "/sub' is a directory, not a file");
  std::filesystem::remove_all(d);
}

TEST(cli_options, CommaListsSplitEveryName)
{
  EXPECT_EQ(split_commas({"a,b", "c"}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_commas({"a,,b"}), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split_commas({","}), (std::vector<std::string>{"", ""}));
}

TEST(cli_options, AValidatorNamesTheOptionInOneLine)
{
  CLI::App app{"test", "tool"};
  uint64_t n = 0;
  app.add_option("--n", n)->transform(whole_number(1, 8))->check(power_of_two());
  std::vector<std::string> layers;
  app.add_option("--layers", layers)->check(comma_list());
  char prog[] = "tool", opt[] = "--n", three[] = "3", abc[] = "abc", four[] = "4";
  char* bad[] = {prog, opt, three};
  char* text[] = {prog, opt, abc};
  char* good[] = {prog, opt, four};
  testing::internal::CaptureStderr();
  EXPECT_EQ(parse(app, 3, bad, "tool"), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: --n: '3' is not a power of two\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(parse(app, 3, text, "tool"), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: --n: 'abc' is not a whole number (1 to 8)\n");
  EXPECT_EQ(parse(app, 3, good, "tool"), std::nullopt);
  EXPECT_EQ(n, 4u);
}

// CLI11 converts "010" as octal; the validator hands it the decimal value it checked (found by
// the names fuzz target: --ring-mb=0001024 became 532 after passing the power-of-two check).
TEST(cli_options, LeadingZerosAreDecimal)
{
  CLI::App app{"test", "tool"};
  uint64_t n = 0, m = 7;
  app.add_option("--n", n)->transform(whole_number(1, 2048))->check(power_of_two());
  app.add_option("--m", m)->transform(whole_number(0, 100));
  char prog[] = "tool", opt[] = "--n", value[] = "0001024", mopt[] = "--m", zero[] = "000";
  char* argv[] = {prog, opt, value, mopt, zero};
  EXPECT_EQ(parse(app, 5, argv, "tool"), std::nullopt);
  EXPECT_EQ(n, 1024u);
  EXPECT_EQ(m, 0u);
}

TEST(cli_options, AReportIsOneLineWhateverTheValueHolds)
{
  testing::internal::CaptureStderr();
  EXPECT_EQ(report("tool", "bad name 'a\nb\tc\x01\x7f'", 2), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: bad name 'a\\nb\\tc\\x01\\x7f'\n");
}

}  // namespace
}  // namespace dc::cli
