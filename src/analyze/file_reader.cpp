#include "analyze/file_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>

#include "analyze/record_values.h"

namespace dc::analyze {

void file_reader::report(uint64_t line, const line_problem& p)
{
  inputs_.skip(p.reason);
  inputs_.problem(path_ + ":" + std::to_string(line + 1) + ": " + p.detail);
}

void file_reader::deliver(record& r)
{
  if (r.ph == phase::metadata && r.name == "HH")
    last_hh_ = defined_hash(r);
  if (r.hhash == 0)
    r.hhash = last_hh_;
  sink_.add(r);
}

void file_reader::parse_single(std::string_view text)
{
  parsed_chunk one;
  one.text.assign(text);
  reserve_padding(one.text);
  auto o = parser_.parse(one, 0, one.text.size(), 0);
  line_parser::link_spans(one);
  if (o == line_parser::outcome::blank)
    return;
  ++inputs_.lines;
  if (o == line_parser::outcome::record)
    deliver(one.records[0]);
  else
    report(line_, one.problems[0]);
}

void file_reader::apply(parsed_chunk& c)
{
  if (c.newlines == 0) {
    pending_.append(c.text);
    return;
  }
  size_t first_record = 0, first_problem = 0;
  if (!pending_.empty()) {
    // The head continues the line the previous chunk ended with: what it gave alone is moot.
    pending_.append(c.head);
    parse_single(pending_);
    pending_.clear();
    first_record = c.head_outcome == 1 ? 1 : 0;
    first_problem = c.head_outcome == 2 ? 1 : 0;
  } else if (c.head_outcome != 0) {
    ++inputs_.lines;
  }
  inputs_.lines += c.lines;
  for (size_t i = first_problem; i < c.problems.size(); ++i)
    report(line_ + c.problems[i].line, c.problems[i]);
  for (size_t i = first_record; i < c.records.size(); ++i) deliver(c.records[i]);
  line_ += c.newlines;
  pending_.assign(c.tail);
}

bool file_reader::finish(bool cut)
{
  size_t first = pending_.find_first_not_of(" \t\r");
  if (first == std::string::npos) {
    pending_.clear();
    return false;
  }
  if (cut) {
    ++inputs_.lines;
    inputs_.skip(skip_reason::truncated);
  } else {
    std::string last = std::move(pending_);
    parse_single(last);
  }
  pending_.clear();
  return cut;
}

file_reader::stream_result file_reader::stream_member(uint64_t offset, bool use_text)
{
  constexpr size_t in_bytes = 1 << 20, out_bytes = 4 << 20;
  stream_result res;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    res.status = stream_status::corrupt;
    res.end = offset;
    return res;
  }
  std::string in(in_bytes, '\0');
  parsed_chunk piece;
  piece.text.reserve(out_bytes + simdjson::SIMDJSON_PADDING);
  uint64_t at = offset;
  auto flush = [&] {
    if (piece.text.empty())
      return;
    res.produced += piece.text.size();
    if (!use_text) {
      res.newlines += static_cast<uint64_t>(std::count(piece.text.begin(), piece.text.end(), '\n'));
      piece.text.clear();
      return;
    }
    parsed_chunk full;
    full.text = std::move(piece.text);
    parser_.parse_chunk(full);
    apply(full);
    piece.text = std::string();
    piece.text.reserve(out_bytes + simdjson::SIMDJSON_PADDING);
  };
  int rc = Z_OK;
  while (true) {
    if (z.avail_in == 0) {
      ssize_t n = pread(fd_, in.data(), in_bytes, static_cast<off_t>(at));
      if (n <= 0) {
        res.status = stream_status::cut;
        break;
      }
      z.next_in = reinterpret_cast<Bytef*>(in.data());
      z.avail_in = static_cast<uInt>(n);
      at += static_cast<uint64_t>(n);
    }
    size_t have = piece.text.size();
    piece.text.resize(out_bytes);
    z.next_out = reinterpret_cast<Bytef*>(piece.text.data() + have);
    z.avail_out = static_cast<uInt>(out_bytes - have);
    rc = inflate(&z, Z_NO_FLUSH);
    piece.text.resize(out_bytes - z.avail_out);
    if (rc == Z_STREAM_END) {
      res.status = stream_status::complete;
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      res.status = stream_status::corrupt;
      break;
    }
    if (piece.text.size() == out_bytes)
      flush();
  }
  flush();
  res.end = offset + z.total_in;
  inflateEnd(&z);
  return res;
}

}  // namespace dc::analyze
