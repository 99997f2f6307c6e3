// Decoder of the system-call layer (cat POSIX): raw arguments become named args, files become
// path hashes, and a positive return value of a data-moving call becomes bytes.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <string>

#include "collect/decoder.h"
#include "core/category.h"
#include "core/syscall_table.h"

namespace dc {

namespace {

int64_t shown_value(uint64_t raw, arg_format format)
{
  switch (format) {
    case arg_format::i32: return static_cast<int32_t>(raw);
    case arg_format::u64:
    case arg_format::i64: return static_cast<int64_t>(raw);
  }
  return static_cast<int64_t>(raw);
}

}  // namespace

void set_posix_dirs(trace_event& ev, const syscall_info& info, const dc_file_ref& a, const dc_file_ref& b)
{
  ev.dir = dc_is_file_data(a.mode) ? info.dir : io_dir::none;
  ev.dir2 = moves_between_files(info) && dc_is_file_data(b.mode) ? io_dir::write : io_dir::none;
}

uint64_t decoder::file_hash(const dc_file_ref& ref, uint32_t tgid, int64_t fd)
{
  if (ref.mode == 0)
    return 0;
  file_key key{ref.dev, ref.ino};
  if (auto known = state_.files.find(key))
    return *known;
  // Opened before tracing or by a call we do not see: ask /proc while the process lives,
  // and accept the answer only if it is the same file.
  std::string name;
  if (fd >= 0 && (ref.mode & S_IFMT) != S_IFSOCK) {
    file_key found{};
    name = proc_fd_path("/proc/" + std::to_string(tgid) + "/fd/" + std::to_string(fd), &key, &found);
  }
  if (name.empty())
    name = fallback_name(ref);
  uint64_t h = state_.names.add(name);
  state_.files.name(key, h);
  return h;
}

bool decoder::decode_staged(const void* data, size_t size)
{
  constexpr size_t head = sizeof(dc_record_header), each = sizeof(dc_staged_record);
  if (size < head + each || (size - head) % each != 0)
    return false;
  auto record_at = [&](size_t at) -> const dc_staged_record& {
    return *reinterpret_cast<const dc_staged_record*>(static_cast<const char*>(data) + at);
  };
  bool ok = true;
  for (size_t at = head; at < size; at += each) {
    const dc_staged_record& rec = record_at(at);
    if (rec.hdr.kind == DC_REC_SYSCALL) {
      decode_syscall(rec.syscall);
    } else if (rec.hdr.kind == DC_REC_FS) {
      // The kernel stages an FS operation before the call it ended with; the call is written
      // first, so that viewers nest the operation (same start, same end) inside it.
      size_t next = at + each;
      if (next < size && record_at(next).hdr.kind == DC_REC_SYSCALL &&
          static_cast<int64_t>(record_at(next).syscall.id) == rec.fs.nest.parent) {
        decode_syscall(record_at(next).syscall);
        at = next;
      }
      decode_fs(rec.fs);
    } else {
      ok = false;
    }
  }
  return ok;
}

void decoder::decode_syscall(const dc_syscall_event& raw)
{
  const syscall_info* info = find_syscall(raw.nr);
  if (!info) {
    ++malformed_;
    return;
  }
  trace_event& ev = call_;
  begin_event(ev, info->name, category::posix, raw.hdr, raw.dur_ns);
  ev.id = raw.id;
  ev.parent = raw.parent;
  ev.level = raw.level;
  // Inside a probed call, which goes to the ring after the calls it made (uprobe.bpf.c).
  if (raw.level >= 2 && raw.parent >= 0)
    ev.parent_kind = trace_event::parent_of::call;
  for (const shown_arg& a : info->args)
    if (!a.key.empty())
      ev.add_arg(a.key, shown_value(raw.args[a.index], a.format));
  ev.add_arg("ret", raw.ret);
  if (info->dir != io_dir::none && raw.ret > 0) {
    ev.bytes = static_cast<uint64_t>(raw.ret);
    set_posix_dirs(ev, *info, raw.file_a, raw.file_b);
  }

  const dc_syscall_spec& spec = info->spec;
  auto fd_of = [&](int8_t index) -> int64_t {
    if (index == DC_ARG_RET)
      return raw.ret;
    return index >= 0 && index < 6 ? static_cast<int32_t>(raw.args[index]) : -1;
  };
  uint64_t file_a = file_hash(raw.file_a, raw.hdr.tgid, fd_of(spec.fd_a));
  ev.fhash = file_a;
  // Without a second descriptor the record's file_b holds the FS operation folded into the call.
  bool folded = spec.fd_b == DC_ARG_NONE && raw.fs.op != 0;
  if (!folded)
    ev.fhash2 = file_hash(raw.file_b, raw.hdr.tgid, fd_of(spec.fd_b));
  else
    add_folded_fs_args(ev, raw.fs);
  if (spec.path_a != DC_ARG_NONE || spec.path_b != DC_ARG_NONE) {
    auto pending = state_.call_paths.find(raw.hdr.tid);
    if (pending != state_.call_paths.end()) {
      if (!ev.fhash)
        ev.fhash = pending->second[0];
      if (!ev.fhash2)
        ev.fhash2 = pending->second[1];
      state_.call_paths.erase(pending);
    }
  }
  emit(ev);
  if (folded)
    decode_folded_fs(raw, ev, file_a);
}

}  // namespace dc
