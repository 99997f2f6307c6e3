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
  call.add_fixed_text("fs", fs_op(fs.op).name);
  if (fs.op == DC_FS_BUFFERED_READ) {
    call.add_arg("first_page", static_cast<int64_t>(fs.first));
    call.add_arg("last_page", static_cast<int64_t>(fs.first + fs.page_span));
  } else {
    call.add_arg("fs_offset", static_cast<int64_t>(fs.first));
  }
}

namespace {

// A buffered read names the pages it asked of the cache (its bytes' offset is its call's); a
// write, where it began (and the bytes asked, where the hook saw them: `count`, 0 if not).
void add_buffered_args(trace_event& ev, uint32_t op, uint64_t first, uint64_t last_page, uint64_t count)
{
  if (op == DC_FS_BUFFERED_READ) {
    ev.add_arg("first_page", static_cast<int64_t>(first));
    ev.add_arg("last_page", static_cast<int64_t>(last_page));
  } else {
    ev.add_arg("offset", static_cast<int64_t>(first));
    if (count)
      ev.add_arg("count", static_cast<int64_t>(count));
  }
}

// The bytes an operation moved, the way its layer_op says, when it moved any.
void add_moved(trace_event& ev, int64_t ret, layer_op op)
{
  if (ret > 0) {
    ev.bytes = static_cast<uint64_t>(ret);
    ev.dir = op.dir;
  }
}

}  // namespace

void decoder::decode_fs(const dc_fs_event& raw)
{
  layer_op op = fs_op(raw.op);
  trace_event ev = begin_event(op.name, category::fs, raw.hdr, raw.dur_ns);
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
      add_moved(ev, raw.ret, op);
      break;
    case DC_FS_BUFFERED_READ:
    case DC_FS_BUFFERED_WRITE:
      add_buffered_args(ev, raw.op, raw.op == DC_FS_BUFFERED_READ ? raw.first_page : raw.offset,
                        raw.last_page, raw.bytes);
      add_moved(ev, raw.ret, op);
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

void decoder::decode_folded_fs(const dc_syscall_event& raw, const trace_event& call, uint64_t file_a)
{
  // What the call's event already has (process, span, file: the kernel folds only an
  // operation on the call's file) is copied, not looked up again, and no FS record is built:
  // once a call, this is most of what every layer costs the collector beyond the system calls.
  const dc_folded_fs& fs = raw.fs;
  layer_op op = fs_op(fs.op);
  trace_event& ev = folded_part_;
  ev.clear();
  ev.name = op.name;
  ev.category = category::fs;
  ev.pid = call.pid;
  ev.process = call.process;
  ev.tid = call.tid;
  ev.ts_us = call.ts_us;
  ev.dur_us = call.dur_us;
  ev.folded = true;
  place(ev, {.id = 0, .parent = static_cast<int64_t>(raw.id), .level = raw.level + 1, .flags = 0},
        trace_event::parent_of::syscall);
  ev.fhash = file_a;
  ev.add_arg("ret", raw.ret);
  add_buffered_args(ev, fs.op, fs.first, fs.first + fs.page_span, 0);
  add_moved(ev, raw.ret, op);
  emit(ev);
}

}  // namespace dc
