#include "sink/member_lines_table.h"

namespace dc {

namespace {

struct lines_table {
  sqlite3_vtab base;  // first: SQLite hands back a pointer to it
  const member_lines_source* source;
};

struct lines_cursor {
  sqlite3_vtab_cursor base;  // first, as above
  const member_lines_source* source;
  size_t at;
  int64_t offset;
};

// A copy of `value` in memory from SQLite's allocator (it frees tables and cursors with
// sqlite3_free); nullptr when there is none.
template <class T>
T* sqlite_copy(const T& value)
{
  auto* p = static_cast<T*>(sqlite3_malloc(sizeof(T)));
  if (p != nullptr)
    *p = value;
  return p;
}

lines_cursor& cursor_of(sqlite3_vtab_cursor* c)
{
  return *reinterpret_cast<lines_cursor*>(c);
}

int connect(sqlite3* db, void* source, int, const char* const*, sqlite3_vtab** out, char**)
{
  if (int declared = sqlite3_declare_vtab(db, "CREATE TABLE x(offset INTEGER, length INTEGER)");
      declared != SQLITE_OK)
    return declared;
  auto* t = sqlite_copy(lines_table{{}, static_cast<const member_lines_source*>(source)});
  if (t == nullptr)
    return SQLITE_NOMEM;
  *out = &t->base;
  return SQLITE_OK;
}

int disconnect(sqlite3_vtab* t)
{
  sqlite3_free(t);
  return SQLITE_OK;
}

// One way to read it, whole and in order.
int best_index(sqlite3_vtab*, sqlite3_index_info* info)
{
  info->estimatedCost = 1;
  return SQLITE_OK;
}

int open_cursor(sqlite3_vtab* t, sqlite3_vtab_cursor** out)
{
  auto* c = sqlite_copy(lines_cursor{{}, reinterpret_cast<lines_table*>(t)->source, 0, 0});
  if (c == nullptr)
    return SQLITE_NOMEM;
  *out = &c->base;
  return SQLITE_OK;
}

int close_cursor(sqlite3_vtab_cursor* c)
{
  sqlite3_free(c);
  return SQLITE_OK;
}

int filter(sqlite3_vtab_cursor* b, int, const char*, int, sqlite3_value**)
{
  lines_cursor& c = cursor_of(b);
  c.at = 0;
  c.offset = c.source->first_offset;
  return SQLITE_OK;
}

int next(sqlite3_vtab_cursor* b)
{
  lines_cursor& c = cursor_of(b);
  c.offset += c.source->lengths[c.at++];
  return SQLITE_OK;
}

int eof(sqlite3_vtab_cursor* b)
{
  lines_cursor& c = cursor_of(b);
  return c.at >= c.source->count;
}

int column(sqlite3_vtab_cursor* b, sqlite3_context* ctx, int n)
{
  lines_cursor& c = cursor_of(b);
  sqlite3_result_int64(ctx, n == 0 ? c.offset : c.source->lengths[c.at]);
  return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* b, sqlite3_int64* id)
{
  *id = static_cast<sqlite3_int64>(cursor_of(b).at);
  return SQLITE_OK;
}

// No xCreate: eponymous-only, there without CREATE VIRTUAL TABLE and never stored in the file.
const sqlite3_module lines_module = {
    .iVersion = 0,
    .xCreate = nullptr,
    .xConnect = connect,
    .xBestIndex = best_index,
    .xDisconnect = disconnect,
    .xDestroy = disconnect,
    .xOpen = open_cursor,
    .xClose = close_cursor,
    .xFilter = filter,
    .xNext = next,
    .xEof = eof,
    .xColumn = column,
    .xRowid = rowid,
    .xUpdate = nullptr,
    .xBegin = nullptr,
    .xSync = nullptr,
    .xCommit = nullptr,
    .xRollback = nullptr,
    .xFindFunction = nullptr,
    .xRename = nullptr,
    .xSavepoint = nullptr,
    .xRelease = nullptr,
    .xRollbackTo = nullptr,
    .xShadowName = nullptr,
};

}  // namespace

int register_member_lines(sqlite3* db, const member_lines_source* source)
{
  return sqlite3_create_module(db, "member_lines", &lines_module, const_cast<member_lines_source*>(source));
}

}  // namespace dc
