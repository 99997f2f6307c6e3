// CSV output for `analyze --csv DIR`: RFC 4180 fields and files. Every table the analyzer writes
// (the per-event ones and those rendered from the report JSON) goes through this one quoting rule.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace dc::analyze {

// Appends one field, quoted when it holds a comma, a double quote, CR or LF (quotes doubled),
// or starts or ends with a space (so spreadsheet readers keep it as it is).
void append_csv_field(std::string& out, std::string_view field);

// Appends fields separated by commas and the CRLF that ends a record (RFC 4180).
void append_csv_row(std::string& out, const std::vector<std::string>& fields);

// One CSV file, written through a buffer: a header row at open, then rows built field by field.
class csv_file {
 public:
  // Creates the file (and its parent directories), writing the header row.
  static dc::result<csv_file> create(const std::string& path, const std::vector<std::string_view>& header);

  csv_file(csv_file&&) noexcept = default;
  csv_file& operator=(csv_file&&) noexcept = default;
  ~csv_file();

  void field(std::string_view text);
  void field(int64_t value);
  void field(uint64_t value);
  void empty_field() { field(std::string_view()); }
  // Ends the row being built; flushes the buffer when it is large.
  void end_row();
  // Flushes and closes; the first write error, if any, names the file.
  dc::result<> close();

  uint64_t rows() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  struct closer {
    void operator()(std::FILE* f) const;
  };
  csv_file(std::string path, std::FILE* f) : path_(std::move(path)), file_(f) {}
  void separate();
  void flush();

  std::string path_;
  std::unique_ptr<std::FILE, closer> file_;
  std::string buffer_;
  bool row_started_ = false;
  int error_ = 0;  // errno of the first failed write
  uint64_t rows_ = 0;
};

// DIR/SUB made, with its parents; the error names the path.
dc::result<> make_directory(const std::string& path);

}  // namespace dc::analyze
