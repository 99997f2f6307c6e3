// The page-fault layer against the kernel's own accounting: a program that touches one byte of
// every page of a cold file through mmap, and counts its faults with getrusage.
#include <algorithm>
#include <set>

#include "core/hash.h"
#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

struct fault_test : runtime_test, ::testing::WithParamInterface<const char*> {};

TEST_P(fault_test, MmapReadOfAColdFileFaultsCoverEveryPageAsTheKernelCounts)
{
  loop_fs fs(dir.path, GetParam());
  std::string data = fs.mount_point() + "/mapped.bin", result = dir / "faults.json";
  ASSERT_EQ(run_shell("dd if=/dev/urandom of=" + shell_quote(data) + " bs=1M count=8 status=none"), 0);
  fs.drop_caches();
  auto run =
      trace_command(dir, std::string(MMAP_READER_BIN) + " " + shell_quote(data) + " " + shell_quote(result));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto truth = nlohmann::json::parse(read_file(result));
  uint64_t pages = truth["pages"];

  // Every page of the file was mapped by some fault: the page the ->fault handler was asked
  // for, or fault-around's range. A fault that ran the handler may also map the rest of a large
  // folio at once (finish_fault), which no tracepoint shows: a gap must start right after such
  // a fault's pages and be shorter than the largest folio (2 MiB).
  std::set<uint64_t> covered, handler_ends;
  uint64_t major = 0, minor = 0, pages_read = 0;
  int events = 0;
  for (const auto& e : complete_events(run.trace)) {
    if (e["cat"] != "FAULT" || e["args"]["fhash"] != string_hash(data))
      continue;
    ++events;
    const auto& a = e["args"];
    EXPECT_EQ(e["name"], a["major"].get<uint64_t>() ? "major_fault" : "minor_fault") << e;
    EXPECT_EQ(a["write"], 0) << e;
    major += a["major"].get<uint64_t>();
    minor += a["minor"].get<uint64_t>();
    pages_read += a["pages_read"].get<uint64_t>();
    if (a.contains("index")) {
      covered.insert(a["index"].get<uint64_t>());
      handler_ends.insert(
          std::max<uint64_t>(a["index"].get<uint64_t>(), a.value("around_last", uint64_t{0})));
    }
    if (a.contains("around_first"))
      for (uint64_t i = a["around_first"]; i <= a["around_last"].get<uint64_t>() && i < pages; ++i)
        covered.insert(i);
  }
  EXPECT_GT(events, 0);
  uint64_t unnamed = 0;
  for (uint64_t i = 0; i < pages;) {
    if (covered.count(i)) {
      ++i;
      continue;
    }
    uint64_t end = i;
    while (end < pages && !covered.count(end)) ++end;
    EXPECT_TRUE(i > 0 && handler_ends.count(i - 1))
        << "pages " << i << ".." << end - 1 << " mapped by no fault";
    EXPECT_LT(end - i, 512u);
    unnamed += end - i;
    i = end;
  }
  EXPECT_LT(unnamed, pages / 2);
  // The loop faults only on the mapping: the file's faults are all the kernel counted.
  EXPECT_EQ(major, truth["major"].get<uint64_t>());
  EXPECT_EQ(minor, truth["minor"].get<uint64_t>());
  EXPECT_GE(major, 1u);
  // The file was cold: the faults brought every page of it into the cache.
  EXPECT_EQ(pages_read, pages);
  EXPECT_EQ(run.summary["events"]["lost"], 0);
}

INSTANTIATE_TEST_SUITE_P(fs, fault_test, ::testing::Values("ext4", "xfs"));

}  // namespace
}  // namespace dc::test
