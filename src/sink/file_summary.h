// Bytes per file, layer by layer: what the application read and wrote (POSIX), what the
// filesystem moved for it (FS) and what reached the device (BLOCK), side by side for each path,
// for the run and per process, so amplification can be read file by file.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "core/event.h"
#include "core/names.h"

namespace dc {

// Bytes a layer moved each way.
struct layer_flow {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t read_ops = 0;   // operations that moved data in
  uint64_t write_ops = 0;  // operations that moved data out
};

// Adds an event's bytes and calls to a flow, the way `dir` (one of the event's directions) says.
void add_flow(layer_flow& f, io_dir dir, const trace_event& ev);

// layer -> bytes each way
using layer_flows = std::map<std::string, layer_flow, std::less<>>;
// Adds every layer's flow of `from` to `into`'s.
void add_flows(layer_flows& into, const layer_flows& from);

class file_tally {
 public:
  file_tally() = default;
  file_tally(const file_tally&) = delete;  // recent_ points into its own maps
  file_tally& operator=(const file_tally&) = delete;
  // Events that moved a file's data (a copy: both files); others are ignored.
  void add(const trace_event& ev);
  bool empty() const { return by_file_.empty(); }
  // {path: {layer: {read_bytes, write_bytes, reads, writes}, amplification: {read, write}}}
  nlohmann::json json(const name_table& names) const;
  nlohmann::json process_json(process_key process, const name_table& names) const;
  // Adds what process `from` moved to process `into` (a fold, core/names.h) and forgets `from`.
  void fold(process_key from, process_key into);
  // The `n` files with the most bytes at any layer, a line each, for the text summary.
  std::string top_text(const name_table& names, size_t n) const;

 private:
  using flows = layer_flows;
  std::map<std::pair<process_key, uint64_t>, flows> by_file_;  // (process, fhash) -> layer -> flow
  // The flows of the last two (process, file, layer) added to, tried before the maps: a call
  // and its folded FS part alternate. Map nodes stay put until erased (fold clears these).
  struct recent_flow {
    process_key process = 0;
    uint64_t fhash = 0;
    std::string layer;
    layer_flow* flow = nullptr;
  };
  std::array<recent_flow, 2> recent_{};
  size_t last_ = 0;
  layer_flow& flow_of(process_key process, uint64_t fhash, std::string_view layer);
};

}  // namespace dc
