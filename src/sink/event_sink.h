// A sink beside the trace and the summary (the --print lines, the live view): fed every event
// the decoder emits and ticked after every batch the collector decodes (at least every 100 ms),
// both on the decoding thread. Such a sink must never block that thread: what it writes goes
// through an async_output (sink/async_output.h).
#pragma once

#include <chrono>

#include "core/event.h"
#include "core/names.h"

namespace dc {

class event_sink {
 public:
  virtual ~event_sink() = default;
  virtual void add(const trace_event& ev, const trace_names& names) = 0;
  virtual void tick(std::chrono::steady_clock::time_point now, const trace_names& names) = 0;
  // After the last event (the ring drained, the trace's held spans written).
  virtual void finish(const trace_names& names) = 0;
  // A process that ended a minute ago (collect/decoder.h): what is kept per pid for it may go.
  virtual void forget_process(uint32_t /*pid*/, process_key /*process*/) {}
};

}  // namespace dc
