#include "unit/analyze_test_util.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "sink/gzip_members.h"

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
  auto w = gzip_member_writer::create(path, level);
  if (!w)
    throw std::runtime_error(w.error().message);
  for (const std::string& m : members) {
    w->buffer() = m;
    if (!w->flush_member())
      throw std::runtime_error("flush failed");
  }
  if (!w->close())
    throw std::runtime_error("close failed");
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
