// Decoder of the block layer (cat BLOCK): one event per completed request, with its queue and
// service time, charged to the process (and file) the kernel side found for it. A request whose
// completion ran no program has its bytes and no service time (args.end_unseen).
#include "collect/decoder.h"
#include "core/category.h"

namespace dc {

layer_op block_op(uint32_t op)
{
  switch (op) {
    case DC_BLOCK_READ: return {"read", io_dir::read};
    case DC_BLOCK_WRITE: return {"write", io_dir::write};
    case DC_BLOCK_FLUSH: return {"flush"};
    case DC_BLOCK_DISCARD: return {"discard"};
    default: return {"other"};
  }
}

void decoder::decode_block(const dc_block_event& raw)
{
  layer_op op = block_op(raw.op);
  trace_event ev = begin_event(op.name, category::block, raw.hdr, raw.service_ns);
  place(ev, raw.nest, trace_event::parent_of::syscall);
  // The device's work: on the device's lanes, not inside the submitter's calls (requests of one
  // submitter run concurrently, and writeback happens while the thread does anything).
  ev.lane = lane_kind::device;
  ev.lane_dev = raw.dev;
  ev.bytes = raw.bytes;
  ev.dir = op.dir;
  ev.add_arg("bytes", raw.bytes);
  ev.add_arg("sector", static_cast<int64_t>(raw.sector));
  ev.add_arg("major", raw.dev >> 20);
  ev.add_arg("minor", raw.dev & 0xfffff);
  ev.add_arg("queue_us", static_cast<int64_t>(raw.queue_ns / 1000));
  ev.add_arg("writeback", raw.cause == DC_BLOCK_WRITEBACK ? 1 : 0);
  ev.add_arg("error", raw.error);
  if (raw.end == DC_BLOCK_END_UNSEEN) {
    ev.add_arg("end_unseen", 1);  // written when its address started another request: no service time
    ev.untimed = true;
  }
  ev.fhash = file_hash(raw.file, raw.hdr.tgid, -1);
  emit(ev);
}

}  // namespace dc
