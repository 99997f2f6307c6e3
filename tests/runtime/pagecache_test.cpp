// The page-cache layer against what the workload did: a cold read misses every page, a warm
// re-read hits every page, a buffered write is no read miss at all, and its writeback and
// eviction are charged to the writer.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/loop_fs.h"
#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

constexpr uint64_t file_pages = 32 * 256;  // 32 MiB in 4 KiB pages

// A file's pages locked in the page cache (a shared mapping of it, mlocked) while it lives.
class pinned_file {
 public:
  explicit pinned_file(const std::string& path)
  {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
      if (fd >= 0)
        ::close(fd);
      return;
    }
    size_ = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED)
      return;
    map_ = p;
    locked_ = ::mlock(map_, size_) == 0;
  }
  ~pinned_file()
  {
    if (map_)
      ::munmap(map_, size_);  // unlocks too
  }
  bool ok() const { return locked_; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  bool locked_ = false;
};

struct pagecache_test : runtime_test, ::testing::WithParamInterface<const char*> {
  std::unique_ptr<loop_fs> fs;
  std::string data;
  void SetUp() override
  {
    runtime_test::SetUp();
    fs = std::make_unique<loop_fs>(dir.path, GetParam());
    data = fs->mount_point() + "/data.bin";
  }
  void TearDown() override { fs.reset(); }
  nlohmann::json file_counts(const traced_run& run, const std::string& path)
  {
    EXPECT_TRUE(run.summary["page_cache_files"].contains(path)) << run.summary.dump(2);
    return run.summary["page_cache_files"][path];
  }
};

TEST_P(pagecache_test, ColdReadMissesEveryPageAndAWarmReReadHitsThem)
{
  ASSERT_EQ(run_shell("dd if=/dev/urandom of=" + shell_quote(data) + " bs=1M count=32 status=none"), 0);
  fs->drop_caches();
  std::string read = "dd if=" + shell_quote(data) + " of=/dev/null bs=1M status=none";
  auto cold = trace_command(dir, read);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  auto c = file_counts(cold, data);
  EXPECT_EQ(c["pages_read"], file_pages);
  EXPECT_GE(c["misses"].get<uint64_t>() * 100, file_pages * 99);
  EXPECT_LE(c["hit_ratio"].get<double>(), 0.01);

  // The file's pages stay in the cache for the warm read: this machine's proactive reclaim
  // (DAMON) pages out cold page-cache pages, which made the warm read miss a few hundred pages
  // now and then. This (untraced) test process locks them there meanwhile.
  pinned_file pin(data);
  ASSERT_TRUE(pin.ok()) << "cannot lock " << data << " in memory";
  auto warm = trace_command(dir, read);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  auto w = file_counts(warm, data);
  EXPECT_EQ(w["pages_read"], file_pages);
  EXPECT_EQ(w["misses"], 0);
  EXPECT_GE(w["hit_ratio"].get<double>(), 0.95);
  EXPECT_GE(warm.summary["page_cache"]["hit_ratio"].get<double>(), 0.95);
  // The trace carries the same counts as a PAGECACHE totals line (metadata: run totals, not an
  // event) for the reader and the file.
  auto names = file_names(warm.trace);
  int samples = 0;
  for (const auto& j : warm.trace.lines)
    if (j["ph"] == "M" && j["cat"] == "PAGECACHE" && names[j["args"]["fhash"].get<uint64_t>()] == data) {
      ++samples;
      EXPECT_EQ(j["args"]["hits"], w["hits"]);
      EXPECT_EQ(j["args"]["misses"], w["misses"]);
    }
  EXPECT_EQ(samples, 1);
}

TEST_P(pagecache_test, BufferedWritesAreNotReadMisses)
{
  auto run = trace_command(dir, "dd if=/dev/zero of=" + shell_quote(data) + " bs=1M count=8 status=none");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto c = file_counts(run, data);
  EXPECT_EQ(c["misses"], 0);
  EXPECT_EQ(c["pages_added"], c["pages_dirtied"]);
  EXPECT_EQ(c["pages_dirtied"], 8 * 256);
}

// Writeback (here an fsync) and eviction (drop_caches) are done for the writer, not by it: the
// pages are charged to it all the same, each exactly once.
TEST_P(pagecache_test, WritebackAndEvictionAreChargedToTheWriter)
{
  auto run = trace_command(dir, "sh -c " + shell_quote("dd if=/dev/zero of=" + shell_quote(data) +
                                                       " bs=1M count=8 conv=fsync status=none && sync && "
                                                       "echo 1 > /proc/sys/vm/drop_caches"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto c = file_counts(run, data);
  EXPECT_EQ(c["pages_dirtied"], 8 * 256);
  EXPECT_EQ(c["pages_written_back"], 8 * 256);
  EXPECT_EQ(c["pages_evicted"], 8 * 256);
  EXPECT_EQ(run.summary["page_cache"]["pages_evicted"].get<uint64_t>() >= 8 * 256, true);
}

INSTANTIATE_TEST_SUITE_P(fs, pagecache_test, ::testing::Values("ext4", "xfs"));

}  // namespace
}  // namespace dc::test
