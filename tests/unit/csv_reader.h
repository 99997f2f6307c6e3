// Reads CSV back in tests (RFC 4180: quoted fields, doubled quotes, CRLF), independently of the
// writer under test, so a test fails when the writer's quoting is wrong.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dc::test {

using csv_rows = std::vector<std::vector<std::string>>;

// Returns the records, or throws std::runtime_error on text that is not valid CSV.
inline csv_rows parse_csv(const std::string& text)
{
  csv_rows rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      if (!field.empty() || was_quoted)
        throw std::runtime_error("quote inside an unquoted field");
      quoted = was_quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      was_quoted = false;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      was_quoted = false;
      ++i;
    } else if (c == '\r' || c == '\n') {
      throw std::runtime_error("bare line break outside quotes");
    } else {
      if (was_quoted)
        throw std::runtime_error("text after a closing quote");
      field.push_back(c);
    }
  }
  if (quoted)
    throw std::runtime_error("unterminated quoted field");
  if (!field.empty() || !row.empty())
    throw std::runtime_error("last record without CRLF");
  return rows;
}

inline csv_rows read_csv(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return parse_csv(s.str());
}

// Rows as column name -> value, by the header row.
inline std::vector<std::map<std::string, std::string>> csv_records(const csv_rows& rows)
{
  std::vector<std::map<std::string, std::string>> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].size() != rows[0].size())
      throw std::runtime_error("row " + std::to_string(r) + " has " + std::to_string(rows[r].size()) +
                               " fields, header " + std::to_string(rows[0].size()));
    auto& m = out.emplace_back();
    for (size_t c = 0; c < rows[0].size(); ++c) m[rows[0][c]] = rows[r][c];
  }
  return out;
}

}  // namespace dc::test
