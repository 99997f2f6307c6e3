// sink/trace_index: the zindex-form line index a run writes beside its trace, built by the writer
// as it writes (gzip_member_writer::index_to). A reader fetches line N the way zindex does
// (LineOffsets joined with AccessPoints, raw inflate from the access point), and inflates only
// the member that holds it; the writer's index equals, row for row, the one built by inflating
// the trace again.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sink/gzip_members.h"
#include "sink/trace_index.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

struct fetched {
  std::string line;
  uint64_t compressed_read = 0;  // bytes of the file the reader inflated
  uint64_t inflated = 0;         // bytes of text it produced
};

// Line n (1-based), as zindex's Index::getLine finds it.
fetched fetch_line(const std::string& trace, const std::string& index, uint64_t n)
{
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(index.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT offset, length, compressedOffset, uncompressedOffset, bitOffset "
                               "FROM LineOffsets, AccessPoints WHERE offset >= uncompressedOffset AND "
                               "offset <= uncompressedEndOffset AND line = ? LIMIT 1",
                               -1, &q, nullptr),
            SQLITE_OK);
  sqlite3_bind_int64(q, 1, static_cast<sqlite3_int64>(n));
  fetched f;
  if (sqlite3_step(q) == SQLITE_ROW) {
    uint64_t offset = sqlite3_column_int64(q, 0), length = sqlite3_column_int64(q, 1),
             compressed = sqlite3_column_int64(q, 2), start = sqlite3_column_int64(q, 3);
    EXPECT_EQ(sqlite3_column_int64(q, 4), 0);
    std::ifstream in(trace, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(compressed));
    z_stream zs{};
    EXPECT_EQ(inflateInit2(&zs, -15), Z_OK);
    std::string text;
    std::vector<char> buf(4096), out(65536);
    while (text.size() < offset - start + length) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      zs.next_in = reinterpret_cast<Bytef*>(buf.data());
      zs.avail_in = static_cast<uInt>(in.gcount());
      f.compressed_read += zs.avail_in;
      if (zs.avail_in == 0)
        break;
      int r = Z_OK;
      while (zs.avail_in && r == Z_OK) {
        zs.next_out = reinterpret_cast<Bytef*>(out.data());
        zs.avail_out = static_cast<uInt>(out.size());
        r = inflate(&zs, Z_NO_FLUSH);
        text.append(out.data(), out.size() - zs.avail_out);
      }
      if (r != Z_OK)
        break;  // the member's end: a line never spans two
    }
    inflateEnd(&zs);
    f.inflated = text.size();
    f.line = text.substr(offset - start, length);
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return f;
}

// Every row of every table (and the schema and stamp), as text, in key order.
std::vector<std::string> rows_of(const std::string& index)
{
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(index.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::vector<std::string> rows;
  for (const char* sql :
       {"PRAGMA application_id", "SELECT type, name, sql FROM sqlite_master ORDER BY name",
        "SELECT * FROM AccessPoints ORDER BY uncompressedOffset", "SELECT * FROM LineOffsets ORDER BY line",
        "SELECT * FROM Metadata ORDER BY key", "SELECT * FROM Indexes ORDER BY name"}) {
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &q, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(q) == SQLITE_ROW) {
      std::string row = sql;
      for (int c = 0; c < sqlite3_column_count(q); ++c) {
        const char* v = static_cast<const char*>(sqlite3_column_blob(q, c));
        row.append("|").append(std::to_string(sqlite3_column_type(q, c))).append(":");
        row += (v ? std::string(v, static_cast<size_t>(sqlite3_column_bytes(q, c))) : "");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(q);
  }
  sqlite3_close(db);
  return rows;
}

// Writes `members` members of 5000 lines each (of varied lengths) to path, with the writer's
// index at path.zindex; returns the lines.
std::vector<std::string> write_trace(const std::string& path, int members, int workers,
                                     std::vector<gzip_member_span>* spans = nullptr)
{
  std::vector<std::string> lines;
  auto out = gzip_member_writer::create(path, gzip_member_writer::default_level, workers);
  EXPECT_TRUE(out);
  out->index_to(path + ".zindex");
  for (int member = 0; member < members; ++member) {
    for (int i = 0; i < 5000; ++i) {
      std::string line = "{\"id\":" + std::to_string(lines.size()) + ",\"name\":\"line " +
                         std::to_string(lines.size()) + "\",\"pad\":\"" + std::string(i % 97, 'x') + "\"}";
      lines.push_back(line);
      out->buffer() += line + "\n";
    }
    EXPECT_TRUE(out->flush_member());
  }
  EXPECT_TRUE(out->close());
  EXPECT_TRUE(out->index_status()) << out->index_status().error().message;
  EXPECT_EQ(out->members().size(), static_cast<size_t>(members));
  EXPECT_EQ(out->members().back().first_line + out->members().back().line_count - 1, lines.size());
  if (spans)
    *spans = out->members();
  return lines;
}

TEST(TraceIndex, AReaderFetchesLineNInflatingOnlyItsMember)
{
  std::string path =
      (std::filesystem::temp_directory_path() / ("idx." + std::to_string(getpid()) + ".pfw.gz"));
  std::string index = path + ".zindex";
  std::vector<std::string> lines = write_trace(path, 8, 0);
  uint64_t file_size = std::filesystem::file_size(path);
  uint64_t text_size = 0;
  for (const auto& l : lines) text_size += l.size() + 1;
  for (uint64_t n : {1ull, 4999ull, 5000ull, 5001ull, 23456ull, 40000ull}) {
    fetched f = fetch_line(path, index, n);
    EXPECT_EQ(f.line, lines[n - 1] + "\n") << "line " << n;
    // One member of eight: an eighth of the text, give or take the reader's 4 KiB reads.
    EXPECT_LE(f.inflated, text_size / 8 + 65536) << "line " << n;
    EXPECT_LE(f.compressed_read, file_size / 8 + 8192) << "line " << n;
  }
  EXPECT_TRUE(fetch_line(path, index, lines.size() + 1).line.empty());
  std::filesystem::remove(path);
  std::filesystem::remove(index);
}

// The writer's index (lines taken as members were compressed, rows inserted while they were
// written, by compression workers or not) is the index built by inflating the closed trace again.
TEST(TraceIndex, TheWritersIndexEqualsTheOneBuiltByReadingTheTraceAgain)
{
  for (int workers : {0, 2}) {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("idx-eq." + std::to_string(getpid()) + "." + std::to_string(workers) + ".pfw.gz"));
    std::vector<gzip_member_span> spans;
    // 150 members of 5000 lines: more than the index keeps waiting, so the writer waits for it.
    std::vector<std::string> lines = write_trace(path, 150, workers, &spans);
    ASSERT_TRUE(write_trace_index(path, spans, path + ".reread.zindex"));
    std::vector<std::string> built = rows_of(path + ".zindex"), reread = rows_of(path + ".reread.zindex");
    // The stamp; four tables and the two key indexes SQLite makes for TEXT PRIMARY KEYs; an access
    // point per member; a row per line; five metadata entries.
    EXPECT_EQ(built.size(), 1 + 6 + spans.size() + lines.size() + 5) << workers << " workers";
    EXPECT_TRUE(built == reread) << workers << " workers: the indexes differ";
    EXPECT_EQ(fetch_line(path, path + ".zindex", 654321).line, lines[654320] + "\n");
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".zindex");
    std::filesystem::remove(path + ".reread.zindex");
  }
}

// A trace that could not be written whole, or whose name was removed, gets no index, and its
// temporary file is removed.
TEST(TraceIndex, AFailedOrRemovedTraceLeavesNoIndexNorTemporary)
{
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("idx-gone." + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directory(dir);
  std::string path = dir / "t.pfw.gz";
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    out->index_to(path + ".zindex");
    out->buffer() = "[\n";
    ASSERT_TRUE(out->flush_member());
    fs::remove(path);
    out->buffer() = "{\"id\":1}\n";
    ASSERT_TRUE(out->close());
    ASSERT_FALSE(out->index_status());
    EXPECT_NE(out->index_status().error().message.find("was removed"), std::string::npos);
  }
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    out->index_to(path + ".zindex");
    out->buffer() = "[\n";
    out->abandon();
    EXPECT_FALSE(out->close());
    EXPECT_FALSE(out->index_status());
  }
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    out->buffer() = "[\n";
    ASSERT_TRUE(out->flush_member());
    out->index_to(path + ".zindex");  // too late: the first member has no rows
    ASSERT_TRUE(out->close());
    EXPECT_FALSE(out->index_status());
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"t.pfw.gz"});
  fs::remove_all(dir);
}

TEST(TraceIndex, AnUnreadableTraceLeavesNoIndex)
{
  std::string index =
      (std::filesystem::temp_directory_path() / ("idx." + std::to_string(getpid()) + ".zindex"));
  std::vector<gzip_member_span> members = {
      {.offset = 0, .compressed_size = 100, .text_size = 10, .line_count = 1}};
  auto r = write_trace_index("/nonexistent/trace.pfw.gz", members, index);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/trace.pfw.gz"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(index));
  EXPECT_FALSE(std::filesystem::exists(index + ".tmp"));
}

// The index is built in a temporary file beside it: in a shared directory, a link planted where
// a fixed temporary name would be is never written through, and nothing but the index is left.
TEST(TraceIndex, APlantedLinkIsNotWrittenThroughAndNoTemporaryIsLeft)
{
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("idx-link." + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directory(dir);
  std::string path = dir / "t.pfw.gz", index = path + ".zindex", victim = dir / "victim";
  std::ofstream(victim) << "keep me";
  fs::create_symlink(victim, index + ".tmp");
  auto out = gzip_member_writer::create(path);
  ASSERT_TRUE(out);
  out->index_to(index);
  out->buffer() = "[\n{\"id\":1}\n";
  ASSERT_TRUE(out->close());
  ASSERT_TRUE(out->index_status());
  EXPECT_EQ(fetch_line(path, index, 2).line, "{\"id\":1}\n");
  std::ifstream kept(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "keep me");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"t.pfw.gz", "t.pfw.gz.zindex", "t.pfw.gz.zindex.tmp", "victim"}));
  fs::remove_all(dir);
}

// The index thread runs at nice 19 while it keeps pace, at the writer's niceness while members
// pile up (trace_index_pacing), and at nice 19 again once it has caught up. Without the catch-up a
// traced program that keeps every CPU busy starves it, and the writer waiting on it lets the event
// ring overflow. Raising a thread's priority back from 19 needs root.
TEST(TraceIndex, ItsThreadCatchesUpAtTheWritersNicenessWhileMembersPileUp)
{
  if (geteuid() != 0)
    GTEST_SKIP() << "raising a thread's priority back from nice 19 needs root";
  std::string index =
      std::filesystem::temp_directory_path() / ("idx-pace." + std::to_string(getpid()) + ".zindex");
  auto builder = trace_index_builder::create(index, -1, {},
                                             {.most_waiting = 64, .catch_up_from = 4, .relaxed_below = 1});
  ASSERT_TRUE(builder);
  auto niceness_becomes = [&](int want) {
    for (int i = 0; i < 3000; ++i) {
      if ((*builder)->thread_niceness() == want)
        return true;
      usleep(10000);
    }
    return false;
  };
  ASSERT_TRUE(niceness_becomes(19)) << "the index thread did not start at nice 19";
  // Members of 300,000 lines each (tens of ms of rows each), made before any is added, so they are
  // added far faster than their rows go in. Their compressed bytes: one real gzip member (only its
  // header is read).
  std::string gzip(256, '\0');
  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>("x\n"));
  zs.avail_in = 2;
  zs.next_out = reinterpret_cast<Bytef*>(gzip.data());
  zs.avail_out = static_cast<uInt>(gzip.size());
  ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  gzip.resize(zs.total_out);
  deflateEnd(&zs);
  constexpr uint64_t lines = 300000, line_length = 100;
  const int own = getpriority(PRIO_PROCESS, 0);
  for (uint64_t m = 0; m < 12; ++m) {
    gzip_member_span span{.offset = m * gzip.size(),
                          .compressed_size = gzip.size(),
                          .text_offset = m * lines * line_length,
                          .text_size = lines * line_length,
                          .first_line = 1 + m * lines,
                          .line_count = lines};
    (*builder)->add_member(span, gzip, std::vector<uint32_t>(lines, line_length));
  }
  EXPECT_EQ((*builder)->thread_niceness(), own)
      << "12 members waiting, and the index thread still at nice 19";
  EXPECT_TRUE(niceness_becomes(19)) << "the index thread caught up, and stayed at the writer's niceness";
  builder->reset();
  EXPECT_FALSE(std::filesystem::exists(index));
}

// The daemon (root) gives a trace to the traced user; the index it writes beside it is theirs too.
TEST(TraceIndex, TheIndexHasTheTracesOwnerAndMode)
{
  if (geteuid() != 0)
    GTEST_SKIP() << "giving a file away needs root";
  namespace fs = std::filesystem;
  std::string path = fs::temp_directory_path() / ("idx-owner." + std::to_string(getpid()) + ".pfw.gz");
  std::string index = path + ".zindex";
  // As the daemon does: the trace given away after it was created, before it is written.
  auto out = gzip_member_writer::create(path);
  ASSERT_TRUE(out);
  out->index_to(index);
  ASSERT_EQ(chown(path.c_str(), 65534, 65533), 0);
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  out->buffer() = "[\n";
  ASSERT_TRUE(out->close());
  ASSERT_TRUE(out->index_status());
  struct stat st {};
  ASSERT_EQ(stat(index.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65533u);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  fs::remove(path);
  fs::remove(index);
}

}  // namespace
}  // namespace dc
