// The explorer's ELF reading, on binaries whose truth is at hand: this test executable itself
// (a function's bytes at the offset found must be the bytes the CPU runs) and libc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/user_regex.h"
#include "explore/elf_symbols.h"

extern "C" __attribute__((noinline, used)) int dc_explorer_probe_target(int x)
{
  return x * 7 + 3;
}

namespace dc {
namespace {

TEST(Explorer, FindsAFunctionAtTheFileOffsetItsCodeIsLoadedFrom)
{
  auto functions = list_functions("/proc/self/exe");
  ASSERT_TRUE(functions) << functions.error().message;
  auto it = std::ranges::find(*functions, "dc_explorer_probe_target", &elf_function::name);
  ASSERT_NE(it, functions->end());
  ASSERT_GT(it->size, 0u);
  std::vector<char> on_disk(it->size);
  std::ifstream exe("/proc/self/exe", std::ios::binary);
  exe.seekg(static_cast<std::streamoff>(it->file_offset));
  exe.read(on_disk.data(), static_cast<std::streamsize>(on_disk.size()));
  ASSERT_TRUE(exe);
  EXPECT_EQ(
      std::memcmp(on_disk.data(), reinterpret_cast<const void*>(&dc_explorer_probe_target), on_disk.size()),
      0);
  EXPECT_EQ(dc_explorer_probe_target(1), 10);
}

TEST(Explorer, ListsLibcStdioIncludingAliasesSortedByName)
{
  auto libc = resolve_binary("libc.so.6");
  ASSERT_TRUE(libc) << libc.error().message;
  auto functions = list_functions(*libc);
  ASSERT_TRUE(functions);
  EXPECT_TRUE(std::ranges::is_sorted(*functions, {}, &elf_function::name));
  auto find = [&](const char* n) { return std::ranges::find(*functions, n, &elf_function::name); };
  ASSERT_NE(find("fwrite"), functions->end());
  ASSERT_NE(find("_IO_fwrite"), functions->end());
  EXPECT_EQ(find("fwrite")->address, find("_IO_fwrite")->address);
  EXPECT_EQ(find("printf_no_such_function"), functions->end());
}

TEST(Explorer, BadInputIsOneClearError)
{
  auto not_elf = list_functions("/etc/passwd");
  ASSERT_FALSE(not_elf);
  EXPECT_NE(not_elf.error().message.find("not an ELF file"), std::string::npos);
  EXPECT_FALSE(list_functions("/no/such/file"));
  auto missing = resolve_binary("libdoes-not-exist.so.9");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("libdoes-not-exist.so.9"), std::string::npos);
  auto bad = compile_user_regex("H5D(", "--regex");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().exit_code, 2);
  EXPECT_NE(bad.error().message.find("H5D("), std::string::npos);
  // Numbers libstdc++ would overflow reading (undefined behaviour; the names fuzz target found
  // the back-reference) are refused; ordinary ones and long literal digits are not.
  for (const char* huge :
       {"a\\9999999999999999999", "(a)\\9999999999", "a{12345678901}", "a{1,12345678901}", "a{10001000}",
        "a{1,1001}",
        // nested repeats multiply what the compiler copies: a million parts
        "(a{1000}){1000}", "((ab){100}c){1000}", "(x(a{100}){100}){11}", "([a-z]{500}){201}",
        // repeats a backtracking matcher takes exponential time over (the names fuzz target:
        // n+++ ... against a 15-character name ran past its 10 s)
        "n+++", "n*+", "(n*)*", "(n+)+", "(a|b+)*", "((a+))*", "a{2}{3}", "a+??", "a{2,}+"})
    EXPECT_FALSE(compile_user_regex(huge, "--regex")) << huge;
  for (const char* fine : {"job_12345678901",
                           "(a)\\1",
                           "a{2,3}",
                           "a{1000}",
                           "a{0,1000}",
                           "\\\\12345678901",
                           "x,12345678901",
                           "(a{100}){100}",
                           "a{5,}",
                           "[{]{1000}",
                           "\\{1000}",
                           "a{1000}|b{1000}",
                           "n+?",
                           "a??",
                           "(a+)?",
                           "(a+){3}",
                           ".*foo.*",
                           "^MPI_File_.*$",
                           "H5D(read|write)(_async)?",
                           "[+*]+",
                           "\\++"})
    EXPECT_TRUE(compile_user_regex(fine, "--regex")) << fine;
}

}  // namespace
}  // namespace dc
