#include "analyze/record_values.h"

#include <charconv>
#include <string>
#include <unordered_map>

#include "core/function_table.h"
#include "core/syscall_table.h"

namespace dc::analyze {

namespace {

// The system calls whose return value is a byte count, by name (DataCrumbs' and DFTracer's
// POSIX names are the kernel's and libc's).
const std::unordered_map<std::string_view, bool>& data_syscalls()
{
  static const auto table = [] {
    std::unordered_map<std::string_view, bool> t;
    for (const syscall_info& s : traced_syscalls())
      if (s.dir != io_dir::none)
        t.emplace(s.name, true);
    // libc names DFTracer intercepts that are not kernel names.
    for (std::string_view n : {"read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv", "writev",
                               "preadv", "pwritev", "preadv2", "pwritev2"})
      t.emplace(n, true);
    return t;
  }();
  return table;
}

bool ends_with_read_or_write(std::string_view name)
{
  return name.ends_with("_read") || name.ends_with("_write");
}

}  // namespace

uint64_t defined_hash(const record& r)
{
  std::string_view text = r.text("value");
  if (!text.empty()) {
    if (text.starts_with("0x"))
      text.remove_prefix(2);
    uint64_t h = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h, 16);
    return ec == std::errc() && end == text.data() + text.size() ? h : 0;
  }
  return static_cast<uint64_t>(r.arg("value").value_or(0));
}

uint64_t call_count(const record& r)
{
  if (r.ph == phase::counter)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("count").value_or(0)));
  return 1;
}

uint64_t call_time_us(const record& r)
{
  if (r.ph == phase::counter)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("time_us").value_or(0)));
  return static_cast<uint64_t>(r.dur_us);
}

uint64_t io_bytes(const record& r)
{
  if (r.ph == phase::counter)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("bytes").value_or(0)));
  if (r.ph != phase::complete)
    return 0;
  if (r.cat == "BLOCK")
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("bytes").value_or(0)));
  int64_t ret = r.arg("ret").value_or(0);
  if (ret <= 0)
    return 0;
  if (r.cat == "POSIX")
    return data_syscalls().contains(r.name) ? static_cast<uint64_t>(ret) : 0;
  if (r.cat == "FS")
    return ends_with_read_or_write(r.name) ? static_cast<uint64_t>(ret) : 0;
  if (r.cat == "NET")
    return r.name == "send" || r.name == "recv" ? static_cast<uint64_t>(ret) : 0;
  // User-space layers: fread/fwrite return items; bytes = items × item size.
  if (const function_info* f = find_function(r.name); f && f->item_size_arg >= 0)
    return static_cast<uint64_t>(ret) *
           static_cast<uint64_t>(std::max<int64_t>(0, r.arg("size").value_or(0)));
  return 0;
}

}  // namespace dc::analyze
