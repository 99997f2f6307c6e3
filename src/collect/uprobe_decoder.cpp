// Decoder of user-space function calls (cat = the config entry's name): the function's name
// from the probe table, the arguments whose meaning is known (core/function_table.cpp), a file
// or object name read at entry, and the nesting the kernel assigned.
#include <cstring>
#include <filesystem>

#include "collect/decoder.h"
#include "core/function_table.h"

namespace dc {

namespace {

// A path given to fopen/MPI_File_open/H5Fcreate, made absolute against the process's working
// directory (while it lives) so it names the file the system calls name.
std::string absolute_path(std::string path, uint32_t pid)
{
  if (path.empty() || path.front() == '/')
    return path;
  std::error_code ec;
  auto cwd = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  return ec ? path : resolve_path(path, cwd.string());
}

}  // namespace

void decoder::decode_uprobe(const dc_uprobe_event& raw)
{
  if (raw.probe >= state_.uprobes.size()) {
    ++malformed_;
    return;
  }
  const uprobe_target& target = state_.uprobes[raw.probe];
  trace_event ev = begin_event(target.function, target.category, raw.hdr, raw.dur_ns);
  ev.id = raw.id;
  ev.parent = raw.parent;
  ev.level = raw.level;
  // A call's (or USDT site's) record goes out at its return (hit), before its caller's.
  if (raw.level >= 2 && raw.parent >= 0)
    ev.parent_kind = trace_event::parent_of::call;
  if (!target.usdt)  // a USDT site is an instant: no call, no return value
    ev.add_arg("ret", raw.ret);
  if (const function_info* info = find_function(target.function)) {
    for (const function_arg& a : info->args) ev.add_arg(a.key, static_cast<int64_t>(raw.args[a.index % 6]));
    if (info->item_size_arg >= 0 && raw.ret > 0)
      ev.bytes = static_cast<uint64_t>(raw.ret) * raw.args[info->item_size_arg % 6];
    std::string str(raw.str, strnlen(raw.str, sizeof(raw.str)));
    if (info->str_kind == name_arg::file && !str.empty())
      ev.fhash = state_.names.add(absolute_path(std::move(str), raw.hdr.tgid));
    else if (info->str_kind == name_arg::object)
      ev.add_text("name", std::move(str));
  }
  emit(ev);
}

}  // namespace dc
