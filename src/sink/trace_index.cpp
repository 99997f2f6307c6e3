#include "sink/trace_index.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "core/fd_closer.h"
#include "core/file_owner.h"
#include "sink/member_compressor.h"
#include "sink/member_lines_table.h"

namespace dc {

namespace {

constexpr size_t window_size = 32768;  // zindex's
constexpr int zindex_version = 1;
constexpr int zindex_application_id = 0x5a494458;  // "ZIDX", as zindex stamps its files
// A member's line rows go in by one statement reading them from member_lines. They are inserted
// without their number: SQLite gives each the table's last rowid + 1 and appends it without
// looking up where it goes (a lookup per row was a third of the index's instructions on a syscall
// storm). Members come in order from line 1, so that is its number.
constexpr const char* line_rows_sql =
    "INSERT INTO LineOffsets(offset, length) SELECT offset, length FROM member_lines";
// The index thread's niceness while it keeps pace (trace_index_pacing).
constexpr int index_nice = 19;

struct db_closer {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct statement_closer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using statement = std::unique_ptr<sqlite3_stmt, statement_closer>;

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

std::string window_of_zeros()
{
  std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> deflater(
      libdeflate_alloc_compressor(9), libdeflate_free_compressor);
  if (!deflater)
    return {};
  std::string zeros(window_size, '\0'),
      window(libdeflate_zlib_compress_bound(deflater.get(), window_size), '\0');
  window.resize(
      libdeflate_zlib_compress(deflater.get(), zeros.data(), zeros.size(), window.data(), window.size()));
  return window;
}

}  // namespace

// The SQLite file being built, and the members whose rows are still to go into it: a thread of
// its own inserts them, so neither the writer nor its compression workers wait for SQLite.
struct trace_index_builder::state {
  struct job {
    gzip_member_span member;
    uint64_t header = 0;
    std::vector<uint32_t> line_lengths;
  };
  std::string index_path, tmp;
  fd_closer dir{-1};     // the index's directory, when given as a descriptor: renamed in it at the end
  std::string leaf;      // the index's name in `dir`
  fd_closer tmp_fd{-1};  // kept open: the index gets the trace's owner and mode through it
  // The temporary file's name in `dir`, or its path.
  std::string tmp_leaf() const { return dir.fd >= 0 ? tmp.substr(tmp.rfind('/') + 1) : tmp; }
  std::unique_ptr<sqlite3, db_closer> db;
  statement access, line_rows;
  member_lines_source rows;  // what member_lines shows: the member being inserted
  std::string window;
  uint64_t next_line = 1;  // of the next member's rows
  bool done = false;

  std::mutex m;
  std::condition_variable changed;
  std::deque<job> queue;
  trace_index_pacing pacing;
  bool stopping = false;
  bool catching_up = false;  // at the tool's niceness, not index_nice
  result<> trouble;
  pid_t tid = 0;
  std::thread thread;

  result<> insert_rows(const job& j)
  {
    const gzip_member_span& m = j.member;
    if (auto point = insert(
            db.get(), access.get(),
            {static_cast<int64_t>(m.text_offset), static_cast<int64_t>(m.text_offset + m.text_size - 1),
             static_cast<int64_t>(m.offset + j.header), 0},
            window);
        !point)
      return point;
    if (m.first_line != next_line)
      return fail("trace index: the member at byte " + std::to_string(m.offset) + " begins at line " +
                  std::to_string(m.first_line) + ", not " + std::to_string(next_line));
    next_line += m.line_count;
    rows = {j.line_lengths.data(), j.line_lengths.size(), static_cast<int64_t>(m.text_offset)};
    sqlite3_reset(line_rows.get());
    if (sqlite3_step(line_rows.get()) != SQLITE_DONE)
      return fail(std::string("trace index: ") + sqlite3_errmsg(db.get()));
    return {};
  }

  void run()
  {
    std::unique_lock lock(m);
    tid = gettid();
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(tid), index_nice);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      bool fine = trouble.has_value();
      lock.unlock();
      result<> inserted = fine ? insert_rows(queue.front()) : result<>{};
      lock.lock();
      if (!inserted && trouble)
        trouble = std::unexpected(inserted.error());
      queue.pop_front();
      if (catching_up && !stopping && queue.size() < pacing.relaxed_below)
        set_niceness(false);
      changed.notify_all();
    }
  }

  // The thread at the tool's own niceness (`catch_up`), or back at index_nice; under `m`. Going
  // back up from 19 needs the right to raise a priority (root, as the tool runs): without it the
  // thread stays where it is.
  void set_niceness(bool catch_up)
  {
    if (tid == 0)
      return;
    catching_up = catch_up;
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(tid),
                      catch_up ? getpriority(PRIO_PROCESS, 0) : index_nice);
  }

  void stop()
  {
    {
      std::lock_guard lock(m);
      stopping = true;
      // The run waits for the rest now.
      set_niceness(true);
    }
    changed.notify_all();
    if (thread.joinable())
      thread.join();
  }
};

trace_index_builder::trace_index_builder(std::unique_ptr<state> s) : s_(std::move(s)) {}

trace_index_builder::~trace_index_builder()
{
  if (!s_->done) {  // dropped: the members still waiting are skipped, not inserted
    std::lock_guard lock(s_->m);
    if (s_->trouble)
      s_->trouble = fail("trace index: dropped");
  }
  s_->stop();
  s_->db.reset();
  if (!s_->done)
    ::unlinkat(s_->dir.fd >= 0 ? s_->dir.fd : AT_FDCWD, s_->tmp_leaf().c_str(), 0);
}

result<std::unique_ptr<trace_index_builder>> trace_index_builder::create(const std::string& index_path,
                                                                         int dir_fd, const std::string& leaf,
                                                                         trace_index_pacing pacing)
{
  auto s = std::make_unique<state>();
  s->index_path = index_path;
  s->pacing = pacing;
  // A directory given as a descriptor (the one the trace was made in) is where the index is
  // renamed at the end of the run, however its path changed meanwhile.
  if (dir_fd >= 0) {
    s->dir.fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    if (s->dir.fd < 0)
      return fail("trace index: cannot keep the directory of '" + index_path + "': " + std::strerror(errno));
    s->leaf = leaf;
  }
  // A fresh name made with O_EXCL (mkstemp) beside the index, and SQLite told to open only that
  // file and never follow a link: a fixed name in a shared directory could be a planted symlink.
  s->tmp = index_path + ".XXXXXX";
  s->tmp_fd.fd = ::mkstemp(s->tmp.data());
  if (s->tmp_fd.fd < 0)
    return fail("trace index: cannot create a temporary file for '" + index_path +
                "': " + std::strerror(errno));
  // From here on the builder owns the temporary file: its destructor removes it.
  std::unique_ptr<trace_index_builder> b(new trace_index_builder(std::move(s)));
  state& st = *b->s_;
  sqlite3* raw = nullptr;
  // No SQLite mutexes (a tenth of the index thread's time): one thread at a time uses it.
  int opened = sqlite3_open_v2(st.tmp.c_str(), &raw,
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, nullptr);
  st.db.reset(raw);
  if (opened != SQLITE_OK)
    return fail("trace index: cannot create a temporary file for '" + st.index_path +
                "': " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
  // Nothing is deleted from the index: secure_delete (on in Debian's SQLite) would only zero the
  // room cells leave on a page that splits (1 % of the index thread's instructions).
  if (auto made =
          exec(st.db.get(),
               "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; PRAGMA secure_delete = OFF; "
               "PRAGMA application_id = " +
                   std::to_string(zindex_application_id) +
                   ";"
                   "CREATE TABLE AccessPoints(uncompressedOffset INTEGER PRIMARY KEY, uncompressedEndOffset "
                   "INTEGER, compressedOffset INTEGER, bitOffset INTEGER, window BLOB);"
                   "CREATE TABLE Metadata(key TEXT PRIMARY KEY, value TEXT);"
                   "CREATE TABLE LineOffsets(line INTEGER PRIMARY KEY, offset INTEGER, length INTEGER);"
                   "CREATE TABLE Indexes(name TEXT PRIMARY KEY, creationString TEXT, isNumeric INTEGER);"
                   "BEGIN TRANSACTION;");
      !made)
    return std::unexpected(made.error());
  if (register_member_lines(st.db.get(), &st.rows) != SQLITE_OK)
    return fail(std::string("trace index: ") + sqlite3_errmsg(st.db.get()));
  auto access = prepare(st.db.get(), "INSERT INTO AccessPoints VALUES(?, ?, ?, ?, ?)");
  auto line_rows = prepare(st.db.get(), line_rows_sql);
  if (!access || !line_rows)
    return std::unexpected(!access ? access.error() : line_rows.error());
  st.access = std::move(*access);
  st.line_rows = std::move(*line_rows);
  // zindex primes its inflater with the window before an access point; a member needs none.
  st.window = window_of_zeros();
  if (st.window.empty())
    return fail("trace index: cannot allocate a compressor");
  st.thread = std::thread([&st] { st.run(); });
  return b;
}

void trace_index_builder::add_member(const gzip_member_span& member, std::span<const char> compressed,
                                     std::vector<uint32_t> line_lengths)
{
  size_t header = gzip_header_size(std::string_view(compressed.data(), compressed.size()));
  std::unique_lock lock(s_->m);
  if (!s_->trouble)
    return;
  if (header == 0 || member.text_size == 0 || line_lengths.size() != member.line_count) {
    s_->trouble = fail("trace index: the member at byte " + std::to_string(member.offset) +
                       (header == 0 ? " is not gzip" : " has other lines than written"));
    return;
  }
  if (s_->queue.size() >= s_->pacing.catch_up_from && !s_->catching_up)
    s_->set_niceness(true);
  s_->changed.wait(lock, [&] { return s_->queue.size() < s_->pacing.most_waiting; });
  s_->queue.push_back({member, header, std::move(line_lengths)});
  s_->changed.notify_all();
}

std::optional<int> trace_index_builder::thread_niceness() const
{
  std::lock_guard lock(s_->m);
  if (s_->tid == 0)
    return std::nullopt;
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(s_->tid));
  return errno == 0 ? std::optional<int>(nice) : std::nullopt;
}

result<> trace_index_builder::finish(const std::string& trace_path, int trace_fd)
{
  state& s = *s_;
  s.stop();
  if (!s.trouble)
    return s.trouble;
  struct stat st {};
  if (::fstat(trace_fd, &st) != 0)
    return fail("trace index: cannot read '" + trace_path + "': " + std::strerror(errno));
  if (st.st_nlink == 0)
    return fail("trace index: not written: '" + trace_path + "' was removed while it was written");
  // The index belongs to whoever owns the trace, with its mode: the daemon (root) gives the trace
  // to the traced user, and an index left root's would be the one file of the run they do not own.
  if (int err = match_owner_and_mode(s.tmp_fd.fd, st); err)
    return fail("trace index: cannot prepare '" + s.index_path + "': " + std::strerror(err));
  char resolved[PATH_MAX];
  std::string compressed_file = realpath(trace_path.c_str(), resolved) ? resolved : trace_path;
  auto meta = prepare(s.db.get(), "INSERT INTO Metadata VALUES(?, ?)");
  if (!meta)
    return std::unexpected(meta.error());
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"version", std::to_string(zindex_version)},
        {"compressedFile", compressed_file},
        {"compressedSize", std::to_string(st.st_size)},
        {"compressedModTime", std::to_string(st.st_mtime)},
        {"sparse", "0"}}) {
    sqlite3_reset(meta->get());
    sqlite3_bind_text(meta->get(), 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(meta->get(), 2, value.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(meta->get()) != SQLITE_DONE)
      return fail(std::string("trace index: ") + sqlite3_errmsg(s.db.get()));
  }
  meta->reset();
  s.access.reset();
  s.line_rows.reset();
  if (auto committed = exec(s.db.get(), "COMMIT;"); !committed)
    return committed;
  if (sqlite3_close(s.db.release()) != SQLITE_OK)
    return fail("trace index: cannot close '" + s.index_path + "'");
  if ((s.dir.fd >= 0 ? ::renameat(s.dir.fd, s.tmp_leaf().c_str(), s.dir.fd, s.leaf.c_str())
                     : ::rename(s.tmp.c_str(), s.index_path.c_str())) != 0)
    return fail("trace index: cannot write '" + s.index_path + "': " + std::strerror(errno));
  s.done = true;
  return {};
}

}  // namespace dc
