// A layer is one group of programs of the BPF object (bpf/<name>.bpf.c, all of them in one object,
// bpf/datacrumbs.bpf.c): the programs named dc_<name>_...; its records are decoded in collect/.
// The session loads the object with the programs of the layers asked for, then each layer
// attaches its own and reports what it attached.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/loss_counts.h"
#include "core/result.h"

extern "C" {
#include "counters.h"
}

struct bpf_link;
struct bpf_object;
struct bpf_map;
struct bpf_program;
struct datacrumbs_bpf;

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

// The fds of the object's loaded programs: libbpf's after a load; after an adoption (a kept
// object, probe/object_keeper.h: libbpf 1.1 cannot take a loaded program) those the keeper
// handed over, owned here, with the runs each had skipped before (the kernel counts on).
class program_fds {
 public:
  program_fds() = default;
  program_fds(const program_fds&) = delete;
  program_fds& operator=(const program_fds&) = delete;
  ~program_fds();
  // Takes `fds`, the fds of `obj`'s programs that load, in the object's order.
  void adopt(bpf_object* obj, std::vector<int> fds);
  bool adopted() const { return !adopted_.empty(); }
  int fd(const bpf_program* prog) const;
  uint64_t skipped_before(const bpf_program* prog) const;
  // The fds of `obj`'s loaded programs in the object's order (to keep the object).
  std::vector<int> in_order(bpf_object* obj) const;

 private:
  struct entry {
    const bpf_program* prog;
    int fd;
    uint64_t skipped_before;
  };
  std::vector<entry> adopted_;
};

// Attaches a loaded tp_btf program by its fd (an adopted program has no libbpf link): the
// link's fd, or the error.
result<int> attach_tracing_program(const program_fds& fds, const bpf_program* prog);

class layer {
 public:
  virtual ~layer();
  virtual std::string_view name() const = 0;
  virtual std::string_view category() const = 0;
  // Whether a program of the object is this layer's: its name starts with dc_<name>_.
  bool owns(const bpf_program* prog) const;
  // The object, opened and not loaded yet: the layer's settings (rodata, program types).
  virtual result<> before_load(datacrumbs_bpf&) { return {}; }
  // The object, loaded with this layer's programs whose fds are `fds` (both kept for attach and
  // detach): fills its maps.
  result<> loaded(datacrumbs_bpf& skel, const program_fds& fds);
  // Attaches every program of the layer, one by one.
  virtual layer_report attach();
  // Detaches every program; in-flight runs have finished when it returns.
  virtual void detach();
  // Whether `prog` (one of the layer's) is a faster way the layer can do without: a kernel
  // that refuses it loads the object again without it, the layer kept.
  virtual bool optional(const bpf_program*) const { return false; }
  // Whether `prog` (one of the layer's) does work only trace mode's records use: profile mode
  // does not load it. Each hook attached costs a run its attach and detach (the kernel's text
  // patching, ~0.3 ms a tracepoint on a VM: docs/performance.md).
  virtual bool trace_only(const bpf_program*) const { return false; }
  // Sends to the ring what the kernel side still holds back (call after detach).
  virtual result<> flush_stages() { return {}; }
  // Page-cache counts kept in the kernel (the PAGECACHE layer), read at the end of a run.
  virtual std::vector<page_cache_entry> page_cache_counts() { return {}; }
  // Links that can no longer run a program and only wait to be closed, taken out unclosed (the
  // caller's to close, or to hand to a kept object's keeper, which closes them for the run).
  virtual std::vector<int> hand_over_links() { return {}; }
  // Program runs the kernel skipped (a program re-entered on one CPU): events never seen.
  uint64_t skipped_runs();
  // Adds what the layer found missing at its detach (call after detach).
  virtual void add_losses(loss_counts&) const {}

 protected:
  virtual result<> after_load(datacrumbs_bpf&) { return {}; }
  // The loaded object (null before loaded()).
  datacrumbs_bpf* skel() const { return skel_; }
  // A loaded program's fd (libbpf's, or the kept object's).
  int fd_of(const bpf_program* prog) const;
  void add_link(bpf_link* link) { links_.push_back(link); }

 private:
  datacrumbs_bpf* skel_ = nullptr;
  const program_fds* fds_ = nullptr;
  std::vector<int> link_fds_;  // attached by program fd
  std::vector<bpf_link*> links_;
};

// A layer that is only its name and category: its programs need nothing else.
class plain_layer final : public layer {
 public:
  plain_layer(std::string_view name, std::string_view category) : name_(name), category_(category) {}
  std::string_view name() const override { return name_; }
  std::string_view category() const override { return category_; }

 private:
  std::string_view name_, category_;
};

// Whether prog's name starts with dc_<name>_ (the programs of layer `name`, or of the process
// tracker, "process").
bool program_of(const bpf_program* prog, std::string_view name);

// Whether map's name starts with dc_<name>_: a map only layer `name`'s programs use, made only
// when they load (any other map is shared by every layer).
bool map_of(const bpf_map* map, std::string_view name);

// Destroys `links` last first and empties it. Hooks go in the reverse of the order they came:
// session::detach says why.
void destroy_links_in_reverse(std::vector<bpf_link*>& links);
void close_links_in_reverse(std::vector<int>& link_fds);

// Runs a task iterator program once over every task (reading the iterator runs it); `what`
// names its purpose in the error.
result<> run_task_iterator(int prog_fd, std::string_view what);

// Sum of the kernel's recursion misses over the loaded programs of `obj` named dc_<name>_...,
// since this run loaded or adopted them.
uint64_t skipped_runs(bpf_object* obj, const program_fds& fds, std::string_view name);

// Every layer, in the order they are reported.
std::vector<std::unique_ptr<layer>> make_layers();

// Ok when every name is a layer's; the error names the first that is not, and the choices.
result<> check_layer_names(const std::vector<std::string>& names);

}  // namespace dc
