// Decoder of the filesystem layer (cat FS): operations as the filesystem saw them, with file,
// offset, size asked for, result and latency; journal commits with their transaction.
#include "collect/decoder.h"
#include "core/category.h"

namespace dc {

layer_op fs_op(uint32_t op)
{
  switch (op) {
    case DC_FS_FSYNC: return {"fsync"};
    case DC_FS_FDATASYNC: return {"fdatasync"};
    case DC_FS_DIRECT_READ: return {"direct_read", io_dir::read};
    case DC_FS_BUFFERED_READ: return {"buffered_read", io_dir::read};
    case DC_FS_BUFFERED_WRITE: return {"buffered_write", io_dir::write};
    case DC_FS_DIRECT_WRITE: return {"direct_write", io_dir::write};
    case DC_FS_FALLOCATE: return {"fallocate"};
    case DC_FS_TRUNCATE: return {"truncate"};
    case DC_FS_UNLINK: return {"unlink"};
    case DC_FS_JOURNAL_COMMIT: return {"journal_commit"};
    default: return {"other"};
  }
}

void add_folded_fs_args(trace_event& call, const dc_folded_fs& fs)
{
  call.add_text("fs", std::string(fs_op(fs.op).name));
  if (fs.op == DC_FS_BUFFERED_READ) {
    call.add_arg("first_page", static_cast<int64_t>(fs.first));
    call.add_arg("last_page", static_cast<int64_t>(fs.first + fs.page_span));
  } else {
    call.add_arg("fs_offset", static_cast<int64_t>(fs.first));
  }
}

dc_fs_event unfold_fs(const dc_syscall_event& call)
{
  dc_fs_event fs{};
  fs.hdr = call.hdr;
  fs.hdr.kind = DC_REC_FS;
  fs.dur_ns = call.dur_ns;
  fs.ret = call.ret;
  fs.file = call.file_a;
  fs.op = call.fs.op;
  if (fs.op == DC_FS_BUFFERED_READ) {
    fs.first_page = call.fs.first;
    fs.last_page = call.fs.first + call.fs.page_span;
  } else {
    fs.offset = call.fs.first;
  }
  fs.nest = {.id = 0, .parent = static_cast<int64_t>(call.id), .level = call.level + 1, .flags = 0};
  return fs;
}

void decoder::decode_fs(const dc_fs_event& raw)
{
  decode_fs_op(raw, false);
}

void decoder::decode_fs_op(const dc_fs_event& raw, bool folded)
{
  layer_op op = fs_op(raw.op);
  trace_event ev = begin_event(op.name, category::fs, raw.hdr, raw.dur_ns);
  ev.folded = folded;
  place(ev, raw.nest, trace_event::parent_of::syscall);
  if (raw.op == DC_FS_JOURNAL_COMMIT) {
    // The journal's work for the device, not a call of the thread it is charged to.
    ev.lane = lane_kind::device;
    ev.lane_dev = raw.file.dev;
    ev.add_arg("dev", raw.file.dev);
    ev.add_arg("transaction", raw.journal_tid);
    ev.add_arg("blocks", raw.journal_blocks);
    emit(ev);
    return;
  }
  ev.fhash = file_hash(raw.file, raw.hdr.tgid, -1);
  ev.add_arg("ret", raw.ret);
  switch (raw.op) {
    case DC_FS_DIRECT_READ:
    case DC_FS_DIRECT_WRITE:
      ev.add_arg("offset", static_cast<int64_t>(raw.offset));
      ev.add_arg("count", static_cast<int64_t>(raw.bytes));
      if (raw.ret > 0) {
        ev.bytes = static_cast<uint64_t>(raw.ret);
        ev.dir = op.dir;
      }
      break;
    case DC_FS_BUFFERED_READ:
    case DC_FS_BUFFERED_WRITE:
      // A read names the pages it asked of the cache (its bytes' offset is its call's); a
      // write, where it began.
      if (raw.op == DC_FS_BUFFERED_READ) {
        ev.add_arg("first_page", static_cast<int64_t>(raw.first_page));
        ev.add_arg("last_page", static_cast<int64_t>(raw.last_page));
      } else {
        ev.add_arg("offset", static_cast<int64_t>(raw.offset));
        if (raw.bytes)
          ev.add_arg("count", static_cast<int64_t>(raw.bytes));
      }
      if (raw.ret > 0) {
        ev.bytes = static_cast<uint64_t>(raw.ret);
        ev.dir = op.dir;
      }
      break;
    case DC_FS_FALLOCATE:
      ev.add_arg("offset", static_cast<int64_t>(raw.offset));
      ev.add_arg("len", static_cast<int64_t>(raw.bytes));
      break;
    case DC_FS_TRUNCATE: ev.add_arg("size", static_cast<int64_t>(raw.offset)); break;
    default: break;
  }
  emit(ev);
}

}  // namespace dc
