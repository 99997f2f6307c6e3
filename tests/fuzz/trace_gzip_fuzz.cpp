// The trace reader of `datacrumbs analyze` on a .pfw.gz file: finding gzip members, inflating
// them whole or as a stream, members cut short or damaged. An input starting with the gzip
// magic is the file as it is; any other is a trace's text, written as gzip members of
// (first byte % 8 + 1) lines each and cut at (second byte / 256) of the file's length (0: not cut).
#include <libdeflate.h>

#include "fuzz/analyze_fuzz.h"

namespace {

std::string as_members(const std::string& input)
{
  size_t lines_per_member = input.empty() ? 1 : static_cast<unsigned char>(input[0]) % 8 + 1;
  unsigned cut = input.size() < 2 ? 0 : static_cast<unsigned char>(input[1]);
  std::string text = input.size() < 2 ? "" : input.substr(2);
  static libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  std::string file, member, out;
  auto flush = [&] {
    if (member.empty())
      return;
    out.resize(libdeflate_gzip_compress_bound(c, member.size()));
    file.append(out.data(),
                libdeflate_gzip_compress(c, member.data(), member.size(), out.data(), out.size()));
    member.clear();
  };
  size_t lines = 0;
  for (char ch : text) {
    member += ch;
    if (ch == '\n' && ++lines % lines_per_member == 0)
      flush();
  }
  flush();
  if (cut != 0)
    file.resize(file.size() * cut / 256);
  return dc::fuzz::write_file("trace.pfw.gz", file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  std::string input = dc::fuzz::text_of(data, size);
  bool raw = input.size() >= 2 && input[0] == '\x1f' && input[1] == '\x8b';
  dc::fuzz::analyze_file(raw ? dc::fuzz::write_file("trace.pfw.gz", input) : as_members(input));
  return 0;
}
