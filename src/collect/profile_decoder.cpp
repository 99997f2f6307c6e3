// Decoder of profile mode's counters: one "ph":"C" sample per process, layer, operation and
// file for each interval, with args count, time_us and bytes; named and charged to files the
// way each layer's events are.
#include <sys/stat.h>

#include "collect/decoder.h"
#include "core/category.h"
#include "core/syscall_table.h"

namespace dc {

namespace {

bool name_op(trace_event& ev, layer_op op, std::string_view category)
{
  ev.name = op.name;
  ev.category = category;
  ev.dir = op.dir;
  return true;
}

}  // namespace

bool decoder::name_counter(const dc_profile_key& key, trace_event& ev)
{
  switch (key.layer) {
    case DC_PROF_POSIX: {
      const syscall_info* info = find_syscall(key.op);
      if (!info)
        return false;
      ev.name = info->name;
      ev.category = category::posix;
      set_posix_dirs(ev, *info, key.file, key.file2);
      return true;
    }
    case DC_PROF_UPROBE:
      if (const uprobe_target* t = uprobe_at(key.op)) {
        ev.name = t->function;
        ev.category = t->category;
        return true;
      }
      return false;
    case DC_PROF_BLOCK: return name_op(ev, block_op(key.op), category::block);
    case DC_PROF_FS: return name_op(ev, fs_op(key.op), category::fs);
    case DC_PROF_NET: return name_op(ev, net_op(key.op), category::net);
    case DC_PROF_FAULT: return name_op(ev, fault_op(key.op), category::fault);
    default: return false;
  }
}

void decoder::decode_profile(const dc_profile_key& key, const dc_profile_counts& counts, uint64_t interval_ns)
{
  trace_event ev;
  if (!name_counter(key, ev)) {
    ++malformed_;
    return;
  }
  ev.counter = true;
  ev.pid = ev.tid = key.tgid;
  ev.process = process_of(key.tgid);
  ev.ts_us = to_epoch_us(key.epoch * interval_ns, state_.clock);  // the interval's start
  ev.count = counts.count;
  ev.dur_us = counts.time_ns / 1000;
  ev.bytes = counts.bytes;
  if (ev.bytes == 0)
    ev.dir = ev.dir2 = io_dir::none;
  ev.fhash = key.file.mode ? file_hash(key.file, key.tgid, -1) : 0;
  ev.fhash2 = key.file2.mode ? file_hash(key.file2, key.tgid, -1) : 0;
  ev.add_arg("count", static_cast<int64_t>(counts.count));
  ev.add_arg("time_us", static_cast<int64_t>(ev.dur_us));
  ev.add_arg("bytes", static_cast<int64_t>(counts.bytes));
  // The page cache's pages read; for a block counter, its requests traced without their end.
  if (counts.pages)
    ev.add_arg(key.layer == DC_PROF_BLOCK ? "end_unseen" : "pages", static_cast<int64_t>(counts.pages));
  emit(ev);
}

}  // namespace dc
