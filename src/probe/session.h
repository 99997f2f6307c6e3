// A tracing session: the process-tracking object that owns the shared maps, and every layer
// loaded onto them. Loading and attaching happen before the traced command starts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/result.h"
#include "config/probe_config.h"
#include "probe/layer.h"
#include "probe/layers.h"
#include "probe/process_holder.h"
#include "probe/uprobe_layer.h"
#include "probe/uprobe_warmup.h"
#include "core/loss_counts.h"

struct datacrumbs_bpf;

namespace dc {

struct session_options {
  uint64_t ring_bytes = 64ull << 20;
  bool verbose = false;
  std::vector<std::string> layers;       // empty: as the config says (or every layer without one)
  const probe_config* config = nullptr;  // kernel layers and user-space functions to trace
  const std::vector<uprobe_target>* uprobes = nullptr;        // already resolved (a probe file's)
  const std::vector<uprobe_entry>* uprobe_entries = nullptr;  // with `uprobes`: the probe file's
  const beacon_target* beacon = nullptr;                      // the daemon: trace registering processes
  uint64_t profile_interval_ns = 0;  // profile mode: count events per interval in the kernel
  // The hold ring's size, a power-of-two multiple of the page size; 0: the object's (64 KiB,
  // bpf/task_record.bpf.h: ~4,000 records).
  uint64_t hold_ring_bytes = 0;
  // Where the minimal BTF for CO-RE is cached (probe/core_btf.h); empty: relocate against the
  // kernel's whole BTF every time.
  std::string core_btf_dir = "/var/cache/datacrumbs";
  // Run on a thread of its own while libbpf loads the object (which uses one CPU), and joined
  // before open() returns: always run when open() succeeds, not run when it fails before the
  // load. The run's trace file and line index are made there.
  std::function<void()> beside_load = {};
  // Run on a thread of its own once the object is loaded (or taken), given its event ring, while
  // the layers attach; joined before open() returns. Run mode maps the ring there.
  std::function<void(int ring_fd)> beside_attach = {};
  // Objects kept between runs (probe/object_keeper.h): the object is taken from this user's
  // keeper when it keeps one configured the same way, and at the end handed to a new keeper,
  // `keeper_exe` started as `__keep-object`, for `keep_seconds`. 0: loaded and freed here.
  unsigned keep_seconds = 0;
  std::string keeper_exe = {};
  // A process's user-space probes are attached right after open() (run mode's command): the
  // kernel's uprobe registration is kept warm meanwhile (probe/uprobe_warmup.h) until then.
  bool attach_soon = false;
};

// The maps of the object that user space reads and writes, and the settings they were made with.
struct shared_maps {
  int events_fd = -1;
  int traced_fd = -1;
  int lost_fd = -1;
  int threads_fd = -1;
  int profile_fd = -1;
  int holds_fd = -1;
  int hold_gate_fd = -1;
  uint64_t wake_mark = 0;
  bool hold_new = false;             // user-space probes are attached per process: hold new processes
  uint64_t profile_interval_ns = 0;  // 0: trace mode (one record per event)
};

class session {
 public:
  static result<std::unique_ptr<session>> open(const session_options& options);
  ~session();

  int ring_fd() const { return maps_.events_fd; }
  // Profile mode: the map of per-interval counters, and the interval; -1 and 0 in trace mode.
  int profile_fd() const { return maps_.profile_interval_ns ? maps_.profile_fd : -1; }
  uint64_t profile_interval_ns() const { return maps_.profile_interval_ns; }
  // Profile mode: sends the counts threads coalesce in their own state for intervals before
  // `below_epoch` through the ring (bpf/profile.bpf.h). The collector's thread asks it each
  // interval, detach() once more for every interval: one at a time (the bound is a global).
  result<> flush_profile(uint64_t below_epoch);
  // Traces pid from its next exec on.
  result<> arm(uint32_t pid);
  void disarm(uint32_t pid);
  // Attaches the user-space probes for a process before it runs (the traced command, before its
  // exec: the named libraries, the objects its program maps at the exec's hold; processes that
  // join later are held and attached by the process holder). No-op without uprobes.
  result<> attach_process(uint32_t pid);
  // Detaches every layer and sends what they still hold back to the ring: call once the
  // traced command has ended, before draining the ring. One failing layer does not stop the
  // others; the error lists every failure.
  result<> detach();
  // After detach(): what went wrong attaching user-space probes to new processes, or "".
  std::string hold_failures() const;
  // User-space functions the kernel refused to probe (skipped), as "name (binary)".
  std::vector<std::string> refused_functions() const;
  loss_counts losses();
  // One kind of loss, summed over the CPUs (callable from any thread).
  uint64_t loss(uint32_t kind) const;
  // Processes whose end was not told (a full hold ring) found gone, and their links closed.
  sweep_counts uprobe_swept() const;
  std::vector<page_cache_entry> page_cache_counts();
  const std::vector<layer_report>& reports() const { return reports_; }
  const std::vector<std::string>& notes() const { return notes_; }
  // The planned user-space functions; an event's probe index points in here, or past them in
  // current_uprobe_targets(), which adds those found in the objects processes map.
  const std::vector<uprobe_target>& uprobe_targets() const { return uprobe_targets_; }
  std::vector<uprobe_target> current_uprobe_targets() const;
  const std::vector<uprobe_entry>& uprobe_entries() const { return uprobe_entries_; }
  // Where each uprobe entry's functions were probed (callable while tracing).
  std::vector<uprobe_placement> uprobe_placements() const;
  // Whether calls are linked as uprobe sessions (see user_probes::call_sessions).
  bool uprobe_call_sessions() const;
  // Whether the object was taken from a keeper (probe/object_keeper.h), not loaded.
  bool object_taken() const { return program_fds_.adopted(); }

 private:
  session() = default;
  // Loads the object with the programs of `layers` and the process tracker's, and attaches the
  // latter; the layers the kernel refused are reported.
  result<> load(const session_options& options, const std::vector<std::unique_ptr<layer>>& layers,
                std::function<void()> while_loading);
  result<> set_hold_gate(bool open);
  // Stops holding new processes and continues every one still held (idempotent); the error
  // says the gate could not be closed (processes forking later may stay stopped).
  result<> release_holds();

  datacrumbs_bpf* skel_ = nullptr;
  user_probes* user_probes_ = nullptr;  // owned by layers_
  std::unique_ptr<process_holder> holder_;
  std::unique_ptr<uprobe_warmup> warmup_;  // until the first attach_process()
  bool holds_released_ = false;            // release_holds() ran: its pause is not paid again at the end
  bool first_attached_ = false;
  std::vector<int> process_links_;
  program_fds program_fds_;
  std::string kept_key_;           // what names the object for a keeper; empty: not kept
  std::vector<int> handed_links_;  // for the keeper to close (layer::hand_over_links)
  unsigned keep_seconds_ = 0;
  bool verbose_ = false;
  std::string keeper_exe_;
  shared_maps maps_;
  std::mutex profile_flush_;  // flush_profile's bound and run, one caller at a time
  std::vector<std::unique_ptr<layer>> layers_;
  std::vector<layer_report> reports_;
  std::vector<std::string> notes_;
  std::vector<uprobe_target> uprobe_targets_;
  std::vector<uprobe_entry> uprobe_entries_;
};

}  // namespace dc
