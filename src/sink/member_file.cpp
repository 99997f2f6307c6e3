#include "sink/member_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sink/member_compressor.h"
#include "sink/trace_index.h"

namespace dc {

result<> compress_member(member_compressor& c, const std::string& path, const std::string& text,
                         compressed_member& into, bool lines)
{
  size_t n = c.compress(text, into.bytes);
  if (n == 0)
    return fail("gzip compression failed for '" + path + "'");
  into.span = {.compressed_size = n, .text_size = text.size()};
  // The index's line lengths are taken here, while the text is at hand, rather than by
  // inflating the member again at the end of the run.
  into.line_lengths.clear();
  lines = lines && text.size() <= UINT32_MAX;  // else no lengths: the index reports the member
  into.span.line_count = scan_lines(text, lines ? &into.line_lengths : nullptr);
  return {};
}

result<> write_member(int fd, const std::string& path, compressed_member& member,
                      std::vector<gzip_member_span>& spans, trace_index_builder* index)
{
  for (size_t done = 0, n = member.span.compressed_size; done < n;) {
    ssize_t w = ::write(fd, member.bytes.data() + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      int why = w < 0 ? errno : ENOSPC;
      uint64_t whole = spans.empty() ? 0 : spans.back().offset + spans.back().compressed_size;
      // Cut only what was written: a filesystem gone read-only refuses the cut as it refused the
      // write, and then there is nothing to cut.
      struct stat st {};
      bool partial = done > 0 || ::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) > whole;
      std::string cut =
          !partial || ::ftruncate(fd, static_cast<off_t>(whole)) == 0
              ? ""
              : std::string("; its incomplete last part could not be cut off: ") + std::strerror(errno);
      return fail("cannot write '" + path + "': " + std::strerror(why) + " (the trace ends after " +
                  std::to_string(spans.size()) + " complete parts" + cut + ")");
    }
    done += static_cast<size_t>(w);
  }
  gzip_member_span span = member.span;
  span.first_line = 1;
  if (!spans.empty()) {
    const gzip_member_span& last = spans.back();
    span.offset = last.offset + last.compressed_size;
    span.text_offset = last.text_offset + last.text_size;
    span.first_line = last.first_line + last.line_count;
  }
  spans.push_back(span);
  if (index)
    index->add_member(span, {member.bytes.data(), span.compressed_size}, std::move(member.line_lengths));
  return {};
}

}  // namespace dc
