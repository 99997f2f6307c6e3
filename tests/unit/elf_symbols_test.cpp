// The explorer's ELF reading, on binaries whose truth is at hand: this test executable itself
// (a function's bytes at the offset found must be the bytes the CPU runs) and libc.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
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

// The entry point's offset is where `_start`, the code e_entry names, lies in the file.
TEST(Explorer, FindsTheEntryPointWhereStartLies)
{
  auto entry = entry_point_offset("/proc/self/exe");
  ASSERT_TRUE(entry) << entry.error().message;
  auto functions = list_functions("/proc/self/exe", [](std::string_view n) { return n == "_start"; });
  ASSERT_TRUE(functions) << functions.error().message;
  ASSERT_EQ(functions->size(), 1u) << "this test executable has no _start symbol";
  EXPECT_EQ(*entry, functions->front().file_offset);
  EXPECT_FALSE(entry_point_offset("/etc/hostname")) << "not ELF: an error";
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
  // RE2 refuses what it could not compile in bounded memory (repeat counts over 1000, nested
  // counts multiplying past 1000), stacked repeats and back-references (it has none).
  for (const char* refused : {"a\\9999999999999999999", "(a)\\1", "a{10001000}", "a{1,1001}",
                              "(a{1000}){1000}", "((ab){100}c){1000}", "(x(a{100}){100}){11}",
                              "([a-z]{500}){201}", "n+++", "n*+", "a{2}{3}", "a+??", "a{2,}+"})
    EXPECT_FALSE(compile_user_regex(refused, "--regex")) << refused;
  for (const char* fine : {"job_12345678901",
                           "a{2,3}",
                           "a{1000}",
                           "a{0,1000}",
                           "\\\\12345678901",
                           "x,12345678901",
                           "(a{10}){100}",
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
                           "\\++",
                           "[[:alpha:]_]+"})
    EXPECT_TRUE(compile_user_regex(fine, "--regex")) << fine;
}

// Patterns a backtracking matcher takes exponential time over (libstdc++'s took 5 s for (n?)* on
// 25 characters, minutes for (n|n)*: the names fuzz target) are matched in linear time, with the
// right answer, against a name longer than any symbol.
TEST(Explorer, AmbiguousRepeatsMatchLongNamesAtOnce)
{
  std::string name(10000, 'n');
  auto start = std::chrono::steady_clock::now();
  for (const char* pattern :
       {"(n?)*", "(n*)*", "(n+)+", "(n|n)*", "(n?n?)*", "(nn?)*", "(n?)*(n?)*", "(a|n+)*"}) {
    auto r = compile_user_regex(pattern, "--regex");
    ASSERT_TRUE(r) << pattern;
    EXPECT_TRUE(r->matches(name)) << pattern;
    EXPECT_FALSE(r->matches(name + "x")) << pattern;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(user_regex().matches(""));  // an empty one matches nothing
}

}  // namespace
}  // namespace dc
