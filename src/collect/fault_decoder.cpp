// Decoder of the page-fault layer (cat FAULT): one event per fault on a file-backed mapping,
// named by the kernel's own major/minor accounting of it.
#include "collect/decoder.h"
#include "core/category.h"

namespace dc {

layer_op fault_op(uint32_t op)
{
  // A fault moves no bytes of its own (the reads it causes are the page cache's and the block
  // layer's): no direction.
  return {op == DC_FAULT_MAJOR ? "major_fault" : "minor_fault"};
}

void decoder::decode_fault(const dc_fault_event& raw)
{
  // No tracepoint marks the end of a fault: the event is an instant at its start.
  layer_op op = fault_op(raw.major ? DC_FAULT_MAJOR : DC_FAULT_MINOR);
  trace_event ev = begin_event(op.name, category::fault, raw.hdr, 0);
  // In the kernel it happened inside a system call; in user mode inside a probed call, whose
  // record may have gone out before this one (the fault is sent when the next one begins).
  place(ev, raw.nest,
        raw.flags & DC_FAULT_KERNEL            ? trace_event::parent_of::syscall
        : raw.nest.flags & DC_NEST_PARENT_SENT ? trace_event::parent_of::call_sent
                                               : trace_event::parent_of::call);
  ev.fhash = file_hash(raw.file, raw.hdr.tgid, -1);
  ev.add_arg("address", static_cast<int64_t>(raw.address));
  ev.add_arg("write", (raw.error_code >> 1) & 1);
  if (raw.flags & DC_FAULT_FILEMAP)
    ev.add_arg("index", static_cast<int64_t>(raw.index));
  if (raw.flags & DC_FAULT_AROUND) {
    ev.add_arg("around_first", static_cast<int64_t>(raw.around_first));
    ev.add_arg("around_last", static_cast<int64_t>(raw.around_last));
  }
  if (!(raw.flags & DC_FAULT_MAPPED_UNKNOWN))
    ev.add_arg("pages_mapped", raw.pages_mapped);
  ev.add_arg("pages_read", raw.pages_read);
  ev.add_arg("major", raw.major);
  ev.add_arg("minor", raw.minor);
  if (raw.flags & DC_FAULT_KERNEL)
    ev.add_arg("in_kernel", 1);
  emit(ev);
}

}  // namespace dc
