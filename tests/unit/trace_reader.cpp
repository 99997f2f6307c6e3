#include "unit/trace_reader.h"

#include <zlib.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace dc::test {

gzip_contents read_gzip_members(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gzip_contents out;
  size_t at = 0;
  while (at < data.size()) {
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
      throw std::runtime_error("inflateInit2 failed");
    z.next_in = reinterpret_cast<Bytef*>(data.data() + at);
    z.avail_in = static_cast<uInt>(data.size() - at);
    std::string member;
    char buf[1 << 16];
    int rc;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof(buf);
      rc = inflate(&z, Z_NO_FLUSH);
      member.append(buf, sizeof(buf) - z.avail_out);
    } while (rc == Z_OK);
    size_t used = (data.size() - at) - z.avail_in;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
      out.truncated_tail = true;
      break;
    }
    out.text += member;
    ++out.complete_members;
    at += used;
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
