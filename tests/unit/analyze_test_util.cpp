#include "unit/analyze_test_util.h"

#include <libdeflate.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace dc::test {

temp_dir::temp_dir()
{
  char tmpl[] = "/tmp/dc_analyze_XXXXXX";
  if (!mkdtemp(tmpl))
    throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

temp_dir::~temp_dir()
{
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

void write_members(const std::string& path, const std::vector<std::string>& members, int level)
{
  // libdeflate rather than the tool's writer: its level 0 stores the text as is, which some
  // tests need to place chosen bytes in the compressed file.
  std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> c(
      libdeflate_alloc_compressor(level), libdeflate_free_compressor);
  if (!c)
    throw std::runtime_error("no libdeflate compressor for level " + std::to_string(level));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const std::string& m : members) {
    std::string bytes(libdeflate_gzip_compress_bound(c.get(), m.size()), '\0');
    size_t n = libdeflate_gzip_compress(c.get(), m.data(), m.size(), bytes.data(), bytes.size());
    if (n == 0)
      throw std::runtime_error("compression failed");
    out.write(bytes.data(), static_cast<std::streamsize>(n));
  }
  if (!out.flush())
    throw std::runtime_error("cannot write " + path);
}

void write_text(const std::string& path, const std::string& text)
{
  std::ofstream(path, std::ios::binary) << text;
}

std::string span_line(const std::string& name, const std::string& cat, int pid, long ts, long dur, long ret,
                      const std::string& extra)
{
  return "{\"id\":1,\"name\":\"" + name + "\",\"cat\":\"" + cat + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(pid) + ",\"ts\":" + std::to_string(ts) +
         ",\"dur\":" + std::to_string(dur) +
         ",\"ph\":\"X\",\"args\":{\"hhash\":7,\"ret\":" + std::to_string(ret) + extra + "}}\n";
}

read_result read_all(const std::vector<std::string>& paths, unsigned threads)
{
  read_result r;
  std::vector<std::string> files = analyze::expand_inputs(paths, r.all.inputs);
  analyze::record_sink sink{[&](const analyze::record& rec) {
                              r.all.add(rec);
                              r.names.emplace_back(rec.name);
                            },
                            [&] { r.all.end_file(); }};
  analyze::read_traces(files, {threads, false}, r.all.inputs, sink);
  return r;
}

}  // namespace dc::test
