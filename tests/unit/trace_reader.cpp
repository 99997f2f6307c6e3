#include "unit/trace_reader.h"

#include <zlib.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace dc::test {

inflated_member inflate_member(std::string_view bytes)
{
  inflated_member m;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    throw std::runtime_error("inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char buf[1 << 16];
  do {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    m.status = inflate(&z, Z_NO_FLUSH);
    m.text.append(buf, sizeof(buf) - z.avail_out);
  } while (m.status == Z_OK);
  m.used = bytes.size() - z.avail_in;
  inflateEnd(&z);
  return m;
}

gzip_contents read_gzip_members(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gzip_contents out;
  for (size_t at = 0; at < data.size();) {
    inflated_member m = inflate_member(std::string_view(data).substr(at));
    if (m.status != Z_STREAM_END) {
      out.truncated_tail = true;
      break;
    }
    out.text += m.text;
    ++out.complete_members;
    at += m.used;
  }
  return out;
}

parsed_trace parse_trace_text(const std::string& text)
{
  parsed_trace t;
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    if (line.empty())
      continue;
    if (first && line == "[") {
      t.opened = true;
      first = false;
      continue;
    }
    first = false;
    if (line == "]") {
      t.closed = true;
      continue;
    }
    if (t.closed)
      throw std::runtime_error("line after the closing bracket: " + line);
    t.lines.push_back(nlohmann::json::parse(line));
  }
  return t;
}

}  // namespace dc::test
