// Per-event CSV tables (`analyze --csv DIR`), the IO Tracer seed's layout: one directory per
// event type (fs/, ds/, cache/, nw/, nw_conn/, nw_epoll/, nw_sockopt/, nw_drop/, pagefault/,
// syscall/, user/, profile/), one file per trace (fs/fs_<trace stem>.csv), written as the
// records stream by. Columns are documented in docs/analyze.md ("CSV").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "analyze/csv_file.h"
#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

// Which tables a record belongs to (none for metadata and DFTracer's own start/end spans).
// A socket system call is in syscall/ and also in its network table.
struct event_tables {
  static constexpr size_t count = 12;
  std::array<bool, count> in{};
};
event_tables tables_of(const record& r);
// The directory (and file prefix) of table i: "fs", "ds", ...
std::string_view table_name(size_t i);

class event_csv_writer {
 public:
  // `names` is read as records stream by: whoever fills it from FH/HH lines does so before
  // this writer sees the records that use them (the reader's order: names first).
  event_csv_writer(std::string dir, const name_map& names) : dir_(std::move(dir)), names_(names) {}

  // Starts the tables of one trace file; its stem (name without .pfw.gz / .pfw) names them,
  // with -2, -3, ... added when two inputs share a stem.
  void begin_file(std::string_view trace_path);
  void add(const record& r);
  // Closes the trace's tables; the first error (a file that could not be written) if any.
  dc::result<> end_file();

  // Rows written per table over all files ("syscall" -> N; tables with rows only).
  std::map<std::string, uint64_t> rows() const;
  // Rows whose file or host hash had no FH/HH line before them (named "<unknown:HASH>").
  uint64_t unresolved() const { return unresolved_; }

 private:
  void write_row(size_t table, const record& r);
  void write_name(csv_file& out, const std::unordered_map<uint64_t, std::string>& map, uint64_t hash);

  std::string dir_;
  const name_map& names_;
  std::string stem_;
  std::set<std::string> stems_used_;
  std::array<std::optional<csv_file>, event_tables::count> open_;
  std::optional<dc::error> error_;
  std::array<uint64_t, event_tables::count> rows_{};
  uint64_t unresolved_ = 0;
  std::string other_;  // scratch for the other_args column
};

}  // namespace dc::analyze
