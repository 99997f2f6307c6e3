// A layer is the loader of one BPF object (bpf/<name>.bpf.c); its records are decoded in collect/. Every
// layer loads onto the maps the session shares (ring, traced set, loss counters) and reports what it
// attached.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

extern "C" {
#include "events.h"
}

struct bpf_object;
struct bpf_link;
struct bpf_map;
struct bpf_program;

namespace dc {

struct layer_report {
  std::string name;
  std::string category;
  bool live = false;
  std::vector<std::string> hooks;  // "tp_btf/sys_enter", ...
  std::string why;                 // why it is not live, when it is not
  uint64_t attach_us = 0;          // time spent attaching its hooks
};

// One process's page-cache counts for one file, as the PAGECACHE layer aggregated them in the
// kernel (decoded in collect/ like a ring record).
using page_cache_entry = std::pair<dc_pagecache_key, dc_pagecache_counts>;

struct shared_maps {
  int events_fd = -1;
  int traced_fd = -1;
  int lost_fd = -1;
  int threads_fd = -1;
  int profile_fd = -1;
  int holds_fd = -1;
  int hold_gate_fd = -1;
  int held_fd = -1;
  uint64_t wake_mark = 0;
  bool hold_new = false;             // user-space probes are attached per process: hold new processes
  uint64_t profile_interval_ns = 0;  // 0: trace mode (one record per event)
  uint32_t page_shift = 12;          // log2 of the kernel's page size (sysconf)
};

class layer {
 public:
  virtual ~layer();
  virtual std::string_view name() const = 0;
  virtual std::string_view category() const = 0;
  // Opens the object, points its shared maps at `maps`, configures and loads it.
  virtual result<> load(const shared_maps& maps) = 0;
  // Attaches every program of the loaded object, one by one.
  virtual layer_report attach();
  // Detaches every program; in-flight runs have finished when it returns.
  virtual void detach();
  // Sends to the ring what the kernel side still holds back (call after detach).
  virtual result<> flush_stages() { return {}; }
  // Page-cache counts kept in the kernel (the PAGECACHE layer), read at the end of a run.
  virtual std::vector<page_cache_entry> page_cache_counts() { return {}; }
  // Program runs the kernel skipped (a program re-entered on one CPU): events never seen.
  uint64_t skipped_runs();

 protected:
  virtual bpf_object* object() = 0;
  void add_link(bpf_link* link) { links_.push_back(link); }
  void add_link_fd(int fd) { link_fds_.push_back(fd); }  // a link libbpf does not know (uprobe_multi)

 private:
  std::vector<bpf_link*> links_;
  std::vector<int> link_fds_;
};

// Runs a task iterator program once over every task (reading the iterator runs it); `what`
// names its purpose in the error.
result<> run_task_iterator(bpf_program* prog, std::string_view what);

// Sum of the kernel's recursion misses over every program of an object.
uint64_t skipped_runs(bpf_object* obj);

// Points an object's copy of the shared maps at the session's maps before load.
result<> reuse_shared_maps(bpf_object* obj, const shared_maps& maps);

// Every layer, in the order they load.
std::vector<std::unique_ptr<layer>> make_layers();

// Ok when every name is a layer's; the error names the first that is not, and the choices.
result<> check_layer_names(const std::vector<std::string>& names);

}  // namespace dc
