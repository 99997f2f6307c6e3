#include "sink/trace_index.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace dc {

namespace {

constexpr size_t window_size = 32768;  // zindex's
constexpr int zindex_version = 1;
constexpr int zindex_application_id = 0x5a494458;  // "ZIDX", as zindex stamps its files

struct db_closer {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct statement_closer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
struct decompressor_closer {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};
struct compressor_closer {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
using statement = std::unique_ptr<sqlite3_stmt, statement_closer>;

struct fd_closer {
  int fd;
  ~fd_closer()
  {
    if (fd >= 0)
      ::close(fd);
  }
};

result<> exec(sqlite3* db, const std::string& sql)
{
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK)
    return {};
  std::string why = message ? message : "unknown error";
  sqlite3_free(message);
  return fail("trace index: " + why);
}

result<statement> prepare(sqlite3* db, const char* sql)
{
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
    return fail(std::string("trace index: ") + sqlite3_errmsg(db));
  return statement(s);
}

// Binds the integers and runs one insert.
result<> insert(sqlite3* db, sqlite3_stmt* s, std::initializer_list<int64_t> values,
                std::string_view blob = {})
{
  sqlite3_reset(s);
  int i = 1;
  for (int64_t v : values) sqlite3_bind_int64(s, i++, v);
  if (!blob.empty())
    sqlite3_bind_blob(s, i, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
  if (sqlite3_step(s) != SQLITE_DONE)
    return fail(std::string("trace index: ") + sqlite3_errmsg(db));
  return {};
}

// Bytes of the gzip header at the start of a member (RFC 1952), 0 if it is not one.
size_t gzip_header_size(const unsigned char* p, size_t n)
{
  if (n < 10 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8)
    return 0;
  uint8_t flags = p[3];
  size_t at = 10;
  if (flags & 4) {  // FEXTRA
    if (at + 2 > n)
      return 0;
    at += 2 + (p[at] | (p[at + 1] << 8));
  }
  for (uint8_t bit : {8, 16})  // FNAME, FCOMMENT: NUL-terminated
    if (flags & bit) {
      while (at < n && p[at] != 0) ++at;
      ++at;
    }
  if (flags & 2)  // FHCRC
    at += 2;
  return at <= n ? at : 0;
}

result<> read_at(int fd, uint64_t offset, std::string& out, size_t size)
{
  out.resize(size);
  for (size_t done = 0; done < size;) {
    ssize_t r = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return fail(std::string("trace index: cannot read the trace: ") +
                  (r < 0 ? std::strerror(errno) : "short file"));
    done += static_cast<size_t>(r);
  }
  return {};
}

result<> fill(sqlite3* db, int fd, std::span<const gzip_member_span> members)
{
  auto access = prepare(db, "INSERT INTO AccessPoints VALUES(?, ?, ?, ?, ?)");
  auto lines = prepare(db, "INSERT INTO LineOffsets VALUES(?, ?, ?)");
  if (!access || !lines)
    return std::unexpected(!access ? access.error() : lines.error());
  std::unique_ptr<libdeflate_decompressor, decompressor_closer> inflater(libdeflate_alloc_decompressor());
  std::unique_ptr<libdeflate_compressor, compressor_closer> deflater(libdeflate_alloc_compressor(9));
  if (!inflater || !deflater)
    return fail("trace index: cannot allocate a (de)compressor");
  // zindex primes its inflater with the window before an access point; a member needs none.
  std::string zeros(window_size, '\0'),
      window(libdeflate_zlib_compress_bound(deflater.get(), window_size), '\0');
  window.resize(
      libdeflate_zlib_compress(deflater.get(), zeros.data(), zeros.size(), window.data(), window.size()));
  std::string compressed, text;
  for (const gzip_member_span& m : members) {
    if (auto r = read_at(fd, m.offset, compressed, m.compressed_size); !r)
      return r;
    size_t header =
        gzip_header_size(reinterpret_cast<const unsigned char*>(compressed.data()), compressed.size());
    text.resize(m.text_size);
    size_t got = 0;
    if (header == 0 ||
        libdeflate_gzip_decompress(inflater.get(), compressed.data(), compressed.size(), text.data(),
                                   text.size(), &got) != LIBDEFLATE_SUCCESS ||
        got != m.text_size)
      return fail("trace index: the member at byte " + std::to_string(m.offset) + " does not inflate");
    auto point =
        insert(db, access->get(),
               {static_cast<int64_t>(m.text_offset), static_cast<int64_t>(m.text_offset + m.text_size - 1),
                static_cast<int64_t>(m.offset + header), 0},
               window);
    if (!point)
      return point;
    uint64_t line = m.first_line;
    for (size_t at = 0; at < text.size(); ++line) {
      const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
      size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1 : text.size();
      auto row = insert(db, lines->get(),
                        {static_cast<int64_t>(line), static_cast<int64_t>(m.text_offset + at),
                         static_cast<int64_t>(end - at)});
      if (!row)
        return row;
      at = end;
    }
    if (line - m.first_line != m.line_count)
      return fail("trace index: the member at byte " + std::to_string(m.offset) +
                  " has other lines than written");
  }
  return {};
}

}  // namespace

result<> write_trace_index(const std::string& trace_path, std::span<const gzip_member_span> members,
                           const std::string& index_path)
{
  fd_closer trace{::open(trace_path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (trace.fd < 0 || fstat(trace.fd, &st) != 0)
    return fail("trace index: cannot open '" + trace_path + "': " + std::strerror(errno));
  // A fresh name made with O_EXCL (mkstemp) beside the index, and SQLite told to open only that
  // file and never follow a link: a fixed name in a shared directory could be a planted symlink.
  std::string tmp = index_path + ".XXXXXX";
  int made = ::mkstemp(tmp.data());
  if (made < 0)
    return fail("trace index: cannot create a temporary file for '" + index_path +
                "': " + std::strerror(errno));
  // The index belongs to whoever owns the trace, with its mode: the daemon (root) gives the trace
  // to the traced user, and an index left root's would be the one file of the run they do not own.
  bool closed =
      ::fchmod(made, st.st_mode & 0666) == 0 && (geteuid() != 0 || ::fchown(made, st.st_uid, st.st_gid) == 0);
  closed = ::close(made) == 0 && closed;
  if (!closed) {
    ::unlink(tmp.c_str());
    return fail("trace index: cannot prepare '" + tmp + "': " + std::strerror(errno));
  }
  sqlite3* raw = nullptr;
  int opened = sqlite3_open_v2(tmp.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
  std::unique_ptr<sqlite3, db_closer> db(raw);
  if (opened != SQLITE_OK) {
    std::string why = raw ? sqlite3_errmsg(raw) : "out of memory";
    db.reset();
    ::unlink(tmp.c_str());
    return fail("trace index: cannot create '" + tmp + "': " + why);
  }
  char resolved[PATH_MAX];
  std::string compressed_file = realpath(trace_path.c_str(), resolved) ? resolved : trace_path;
  result<> done = exec(
      db.get(), "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; PRAGMA application_id = " +
                    std::to_string(zindex_application_id) +
                    ";"
                    "CREATE TABLE AccessPoints(uncompressedOffset INTEGER PRIMARY KEY, uncompressedEndOffset "
                    "INTEGER, compressedOffset INTEGER, bitOffset INTEGER, window BLOB);"
                    "CREATE TABLE Metadata(key TEXT PRIMARY KEY, value TEXT);"
                    "CREATE TABLE LineOffsets(line INTEGER PRIMARY KEY, offset INTEGER, length INTEGER);"
                    "CREATE TABLE Indexes(name TEXT PRIMARY KEY, creationString TEXT, isNumeric INTEGER);"
                    "BEGIN TRANSACTION;");
  if (done) {
    auto meta = prepare(db.get(), "INSERT INTO Metadata VALUES(?, ?)");
    if (!meta)
      done = std::unexpected(meta.error());
    for (const auto& [key, value] :
         {std::pair<const char*, std::string>{"version", std::to_string(zindex_version)},
          {"compressedFile", compressed_file},
          {"compressedSize", std::to_string(st.st_size)},
          {"compressedModTime", std::to_string(st.st_mtime)},
          {"sparse", "0"}}) {
      if (!done)
        break;
      sqlite3_reset(meta->get());
      sqlite3_bind_text(meta->get(), 1, key, -1, SQLITE_STATIC);
      sqlite3_bind_text(meta->get(), 2, value.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(meta->get()) != SQLITE_DONE)
        done = fail(std::string("trace index: ") + sqlite3_errmsg(db.get()));
    }
  }
  if (done)
    done = fill(db.get(), trace.fd, members);
  if (done)
    done = exec(db.get(), "COMMIT;");
  db.reset();
  if (done && ::rename(tmp.c_str(), index_path.c_str()) != 0)
    done = fail("trace index: cannot write '" + index_path + "': " + std::strerror(errno));
  if (!done)
    ::unlink(tmp.c_str());
  return done;
}

}  // namespace dc
