// The line index of a closed trace, built by inflating its members again: for a trace written
// without one, and to check the index the writer builds while it writes (sink/trace_index.h).
#include "sink/trace_index.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/fd_closer.h"

namespace dc {

namespace {

result<> read_at(int fd, uint64_t offset, std::string& out, size_t size)
{
  out.resize(size);
  for (size_t done = 0; done < size;) {
    ssize_t r = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return fail(std::string("trace index: cannot read the trace: ") +
                  (r < 0 ? std::strerror(errno) : "short file"));
    done += static_cast<size_t>(r);
  }
  return {};
}

}  // namespace

result<> write_trace_index(const std::string& trace_path, std::span<const gzip_member_span> members,
                           const std::string& index_path)
{
  fd_closer trace{::open(trace_path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (trace.fd < 0)
    return fail("trace index: cannot open '" + trace_path + "': " + std::strerror(errno));
  auto builder = trace_index_builder::create(index_path);
  if (!builder)
    return std::unexpected(builder.error());
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> inflater(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  if (!inflater)
    return fail("trace index: cannot allocate a decompressor");
  std::string compressed, text;
  for (const gzip_member_span& m : members) {
    if (auto r = read_at(trace.fd, m.offset, compressed, m.compressed_size); !r)
      return r;
    text.resize(m.text_size);
    size_t got = 0;
    if (libdeflate_gzip_decompress(inflater.get(), compressed.data(), compressed.size(), text.data(),
                                   text.size(), &got) != LIBDEFLATE_SUCCESS ||
        got != m.text_size)
      return fail("trace index: the member at byte " + std::to_string(m.offset) + " does not inflate");
    std::vector<uint32_t> lengths;
    scan_lines(text, &lengths);
    (*builder)->add_member(m, compressed, std::move(lengths));
  }
  return (*builder)->finish(trace_path, trace.fd);
}

}  // namespace dc
