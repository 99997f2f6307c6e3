#include "analyze/csv_file.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace dc::analyze {

namespace {
constexpr size_t flush_bytes = 1 << 20;
}  // namespace

void append_csv_field(std::string& out, std::string_view field)
{
  bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos ||
               (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"')
      out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void append_csv_row(std::string& out, const std::vector<std::string>& fields)
{
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i)
      out.push_back(',');
    append_csv_field(out, fields[i]);
  }
  out.append("\r\n");
}

dc::result<> make_directory(const std::string& path)
{
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    return dc::fail("cannot create directory " + path + ": " + ec.message());
  return {};
}

void csv_file::closer::operator()(std::FILE* f) const
{
  std::fclose(f);
}

dc::result<csv_file> csv_file::create(const std::string& path, const std::vector<std::string_view>& header)
{
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty())
    if (auto made = make_directory(parent.string()); !made)
      return std::unexpected(made.error());
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f)
    return dc::fail("cannot write " + path + ": " + std::strerror(errno));
  csv_file out(path, f);
  for (std::string_view name : header) out.field(name);
  out.end_row();
  out.rows_ = 0;  // the header is not a row of data
  return out;
}

csv_file::~csv_file()
{
  if (file_)
    flush();
}

void csv_file::separate()
{
  if (row_started_)
    buffer_.push_back(',');
  row_started_ = true;
}

void csv_file::field(std::string_view text)
{
  separate();
  append_csv_field(buffer_, text);
}

void csv_file::field(int64_t value)
{
  separate();
  char digits[24];
  auto done = std::to_chars(digits, digits + sizeof(digits), value);
  buffer_.append(digits, done.ptr);
}

void csv_file::field(uint64_t value)
{
  separate();
  char digits[24];
  auto done = std::to_chars(digits, digits + sizeof(digits), value);
  buffer_.append(digits, done.ptr);
}

void csv_file::end_row()
{
  buffer_.append("\r\n");
  row_started_ = false;
  ++rows_;
  if (buffer_.size() >= flush_bytes)
    flush();
}

void csv_file::flush()
{
  if (!buffer_.empty() && !error_ &&
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size())
    error_ = errno ? errno : EIO;
  buffer_.clear();
}

dc::result<> csv_file::close()
{
  if (!file_)
    return {};
  flush();
  if (std::fclose(file_.release()) != 0 && !error_)
    error_ = errno;
  if (error_)
    return dc::fail("cannot write " + path_ + ": " + std::strerror(error_));
  return {};
}

}  // namespace dc::analyze
