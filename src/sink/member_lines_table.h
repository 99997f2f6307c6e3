// member_lines: an SQLite table-valued view of one gzip member's line lengths, so the line index
// inserts a member's LineOffsets rows with one statement,
//   INSERT INTO LineOffsets(offset, length) SELECT offset, length FROM member_lines,
// instead of binding two parameters a row (6 % of the index thread's instructions, and no
// leftover rows to insert one by one when a member's lines are not a multiple of a batch).
// The table is eponymous and read-only: it shows whatever `member_lines_source` holds when the
// statement runs, one row per line, `offset` counting up from the member's first text byte.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>

namespace dc {

struct member_lines_source {
  const uint32_t* lengths = nullptr;  // newline included
  size_t count = 0;
  int64_t first_offset = 0;  // of the member's first line in the uncompressed trace
};

// Registers member_lines on `db`, reading `source` (which must outlive the connection).
int register_member_lines(sqlite3* db, const member_lines_source* source);

}  // namespace dc
