// A developer's recording of the raw ring: every batch of records the formatter takes, appended
// to a file as it is taken, so that the collector can be measured alone by replaying a real run
// (bench/collector_bench.cpp). Turned on by DATACRUMBS_RECORD_RING=FILE in `datacrumbs run` or
// the daemon; nothing else reads it. The records are the kernel's structs (bpf/events.h) as
// this build lays them out: a recording is only good for the build that made it.
//
// File: "DCRING01", then per batch its byte count (u64) and its bytes. A batch is what
// decode_batch() decodes: [u32 size][u32 0][record, padded to 8 bytes] ...
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace dc {

class decoder;

// Decodes every record of one batch, in order.
void decode_batch(decoder& dec, std::string_view batch);

class ring_recorder {
 public:
  // The recorder DATACRUMBS_RECORD_RING asks for (an unset variable: none, not an error).
  static result<ring_recorder> from_environment();
  ring_recorder(ring_recorder&&) noexcept;
  ring_recorder& operator=(ring_recorder&&) noexcept;
  ~ring_recorder();

  bool active() const { return fd_ >= 0; }
  // Appends one batch; the first failure stops the recording (a trace is never harmed by it).
  void append(std::string_view batch);
  // The first write error, if any ("" when none).
  const std::string& trouble() const { return trouble_; }

 private:
  ring_recorder() = default;
  int fd_ = -1;
  std::string path_;
  std::string trouble_;
};

// Every batch of a recording, in order; a file that is not one is an error naming it.
result<std::vector<std::string>> read_ring_recording(const std::string& path);

}  // namespace dc
