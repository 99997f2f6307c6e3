// The decoded event every layer's decoder produces and every sink consumes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace dc {

// Which way data moves, for the bytes of an event: what amplification compares.
enum class io_dir : uint8_t { none, read, write };

// Work done for a thread but not on its call stack: drawn on lanes of its own (sink/lanes.h),
// since viewers nest a thread's spans by time alone.
enum class lane_kind : uint8_t {
  none,     // the thread's own track
  device,   // block requests and journal commits, per device (lane_dev)
  network,  // network work done in softirq context for the thread's sockets
};

// Trivially constructible (a pointer and a size, not a string_view), so that an event's args
// are left unset until added (arg_count says how many are): zeroing all ten was half the cost
// of building an event, once or twice per call.
struct event_arg {
  const char* key_data;
  size_t key_size;
  int64_t value;

  std::string_view key() const { return {key_data, key_size}; }
};

// A string arg: its text either fixed (static storage: an operation's or a state's name, no copy
// made; its bytes never change, so the writer checks it for escapes once) or owned (an address,
// a probed call's string).
struct event_text {
  std::string_view key;
  std::string_view fixed;
  std::string owned;

  std::string_view value() const { return fixed.empty() ? std::string_view(owned) : fixed; }
};

// An event's fields but its args: trivially copyable, so an event kept for reuse is made blank
// again by assigning a blank head (every field, whatever is added here later) and no args.
struct event_head {
  std::string_view name;      // the operation: "pread64", "write", ...
  std::string_view category;  // the layer (core/category.h), or a uprobe config entry's name
  uint32_t pid = 0;           // TGID
  uint64_t process = 0;       // which process with that pid (core/names.h process_key); 0: pid's
  uint32_t tid = 0;           // TID
  uint64_t ts_us = 0;         // epoch microseconds
  uint64_t dur_us = 0;
  uint64_t bytes = 0;          // data moved, for layers that move data
  io_dir dir = io_dir::none;   // which way `bytes` moved, for the file fhash
  io_dir dir2 = io_dir::none;  // and for fhash2: a copy between two files reads one, writes the other
  bool counter = false;        // a "ph":"C" counter sample (args are the counts), not a span
  uint64_t count = 1;          // calls the event stands for: a profile counter sums many
  // An operation carried in its call's event (a buffered read's FS part, in the read's args):
  // counted by the summary and the live views, not written to the trace on its own.
  bool folded = false;
  // Its time is not known (a block request whose completion ran no program: no service time):
  // dur_us is 0, and latencies leave it out.
  bool untimed = false;
  uint64_t fhash = 0;   // 0: no file
  uint64_t fhash2 = 0;  // second file (rename target, a copy's output)
  // Nesting, for events the kernel placed on their thread's call stack (level 0: not placed).
  // The kernel's id is then the event's id, so children can name a parent written after them.
  uint64_t id = 0;
  int64_t parent = -1;  // DFTracer p_idx
  uint32_t level = 0;
  // How the parent named by `parent` is known to stand to this event in the ring (collect's
  // thread_order uses it to write parents first): a system call, a user-space call, or none.
  enum class parent_of : uint8_t { none, syscall, call, call_sent } parent_kind = parent_of::none;
  lane_kind lane = lane_kind::none;
  uint32_t lane_dev = 0;  // lane_kind::device: the device (major << 20 | minor)

  // The process's key in the run's tables: `process`, or the pid where no decoder set one.
  uint64_t instance() const { return process ? process : pid; }
};

static_assert(std::is_trivially_copyable_v<event_head>);

struct trace_event : event_head {
  // The most any decoder adds: the page-fault layer's 10 (address, write, index, around_first,
  // around_last, pages_mapped, pages_read, major, minor, in_kernel); add_arg drops any more.
  std::array<event_arg, 10> args;  // only the first arg_count are set
  uint8_t arg_count = 0;
  size_t arg_key_bytes = 0;           // the sum of the set args' key sizes: what a writer reserves room by
  std::array<event_text, 4> texts{};  // string args (addresses, ...)
  uint8_t text_count = 0;

  // As a new event, the storage of its owned texts kept.
  void clear()
  {
    static_cast<event_head&>(*this) = event_head{};
    arg_count = 0;
    arg_key_bytes = 0;
    text_count = 0;
  }

  void add_text(std::string_view key, std::string value)
  {
    if (text_count < texts.size())
      texts[text_count++] = {key, {}, std::move(value)};
  }

  // `value` must outlive the event (a literal, a table's name).
  void add_fixed_text(std::string_view key, std::string_view value)
  {
    if (text_count < texts.size()) {
      event_text& t = texts[text_count++];
      t.key = key;
      t.fixed = value;
      t.owned.clear();
    }
  }

  void add_arg(std::string_view key, int64_t value)
  {
    if (arg_count < args.size()) {
      args[arg_count++] = {key.data(), key.size(), value};
      arg_key_bytes += key.size();
    }
  }
};

// Calls `f(fhash, dir)` for each file whose data an event moved: fhash, then fhash2 (a copy).
template <class F>
void for_each_moved_file(const trace_event& ev, F&& f)
{
  if (ev.dir != io_dir::none)
    f(ev.fhash, ev.dir);
  if (ev.dir2 != io_dir::none)
    f(ev.fhash2, ev.dir2);
}

}  // namespace dc
