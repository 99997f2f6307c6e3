#include "probe/session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <iterator>
#include <optional>
#include <cstdio>
#include <cstring>
#include <future>
#include <system_error>
#include <thread>
#include <utility>
#include <string>

#include "probe/layers.h"
#include "probe/system_checks.h"
#include "datacrumbs.skel.h"
#include "probe/kernel_object.h"
#include "probe/object_keeper.h"

extern "C" {
#include "events.h"
}

namespace dc {

namespace {

// Profile counters of events other contexts end (block completions, network: a thread's own go
// through the ring) the kernel holds at once: about four intervals' worth (an interval is read
// two to three intervals after it ends). 2^20 (sized when threads' counters churned it too: an
// open/close storm over 100,000 files, ~200,000 new counters an interval) costs a 16 MiB bucket
// array (5 ms to make at a fresh load) and ~1 ms a read of the empty map (docs/performance.md).
constexpr uint32_t profile_map_entries = 1u << 20;

// plan_uprobes(config, notes) on a thread of its own, or here when no thread can be had.
std::future<std::vector<uprobe_target>> plan_beside(const probe_config& config,
                                                    std::vector<std::string>& notes)
{
  try {
    return std::async(std::launch::async, [&config, &notes] { return plan_uprobes(config, notes); });
  } catch (const std::system_error&) {
    std::promise<std::vector<uprobe_target>> done;
    done.set_value(plan_uprobes(config, notes));
    return done.get_future();
  }
}

// `work` on a thread of its own, joined when the returned thread goes; here, before returning,
// when no thread can be had.
std::optional<std::jthread> on_thread_or_here(const std::function<void()>& work)
{
  try {
    return std::optional<std::jthread>(std::in_place, work);
  } catch (const std::system_error&) {
    work();
    return std::nullopt;
  }
}

}  // namespace

result<std::unique_ptr<session>> session::open(const session_options& options)
{
  if (auto privileged = check_bpf_privileges(); !privileged)
    return std::unexpected(privileged.error());
  std::unique_ptr<session> s(new session());
  auto tracefs = ensure_tracefs();
  if (!tracefs)
    s->notes_.push_back(tracefs.error().message);
  else if (!tracefs->empty())
    s->notes_.push_back(*tracefs);

  std::vector<uprobe_entry> entries;
  std::vector<std::string> plan_notes;  // before `planned`, whose end waits for the plan
  std::future<std::vector<uprobe_target>> planned;
  std::function<void()> start_plan;
  if (options.uprobes) {
    s->uprobe_targets_ = *options.uprobes;
    if (options.uprobe_entries)
      entries = *options.uprobe_entries;
  } else if (options.config && options.layers.empty()) {
    entries = uprobe_entries_of(*options.config);
    // Reading the named libraries' symbols (~12 ms for the default config's MPI and HDF5) goes
    // on beside libbpf's load when the layer is there whatever it finds (it has entries).
    if (entries.empty())
      s->uprobe_targets_ = plan_uprobes(*options.config, s->notes_);
    else
      start_plan = [&] { planned = plan_beside(*options.config, plan_notes); };
  }
  s->uprobe_entries_ = entries;
  // The first attach follows the load: its grace period is paid beside it (uprobe_warmup.h).
  if (options.attach_soon && options.keep_seconds > 0 && !options.keeper_exe.empty() &&
      (!s->uprobe_targets_.empty() || !entries.empty() || start_plan))
    s->warmup_ = std::make_unique<uprobe_warmup>();
  std::vector<std::string> wanted = options.layers;
  if (wanted.empty() && options.config)
    wanted = kernel_layers_in(*options.config);
  auto layers = make_layers();
  if (options.beacon) {
    layers.push_back(make_beacon_layer(*options.beacon));
    wanted.push_back("beacon");
  }
  // An entry whose library is missing may still find its functions in the traced programs.
  if (!s->uprobe_targets_.empty() || !entries.empty()) {
    auto user = make_uprobe_layer(s->uprobe_targets_, std::move(entries));
    s->user_probes_ = user.get();
    layers.push_back(std::move(user));
    wanted.push_back("uprobe");
  }
  std::erase_if(layers, [&](const std::unique_ptr<layer>& l) {
    return (!wanted.empty() || options.config || options.uprobes) &&
           std::ranges::find(wanted, l->name()) == wanted.end();
  });
  std::optional<std::jthread> beside;
  bool beside_started = false;
  auto start_beside = [&] {
    if (options.beside_load && !std::exchange(beside_started, true))
      beside = on_thread_or_here(options.beside_load);
  };
  // With objects kept between runs, the object is likely taken from a keeper in a few ms, not
  // loaded: the plan and the trace file start at once, or the run would wait for them (~15 ms
  // with the default config, ~12 ms) after taking it.
  if (options.keep_seconds > 0 && !options.keeper_exe.empty()) {
    if (start_plan)
      std::exchange(start_plan, nullptr)();
    start_beside();
  }
  auto while_loading = [&] {
    if (start_plan)
      start_plan();
    start_beside();
  };
  auto loaded = s->load(options, layers, while_loading);
  beside.reset();  // joined
  if (!loaded)
    return std::unexpected(loaded.error());
  std::optional<std::jthread> attaching_beside;  // joined when open() returns
  if (options.beside_attach)
    attaching_beside = on_thread_or_here(  // the fd by value: `s` is moved out as open() returns
        [&options, fd = s->maps_.events_fd] { options.beside_attach(fd); });
  if (planned.valid()) {
    s->uprobe_targets_ = planned.get();
    std::ranges::move(plan_notes, std::back_inserter(s->notes_));
    if (s->user_probes_)
      s->user_probes_->take_planned(s->uprobe_targets_);
  }
  for (auto& l : layers) {
    auto refused = std::ranges::find(s->reports_, l->name(), &layer_report::name);
    if (refused == s->reports_.end()) {
      if (auto ready = l->loaded(*s->skel_, s->program_fds_); !ready)
        s->reports_.push_back(
            {std::string(l->name()), std::string(l->category()), false, {}, ready.error().message});
    }
    if (std::ranges::find(s->reports_, l->name(), &layer_report::name) != s->reports_.end()) {
      if (l.get() == s->user_probes_)
        s->user_probes_ = nullptr;
      continue;
    }
    auto started = std::chrono::steady_clock::now();
    layer_report report = l->attach();
    report.attach_us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
            .count());
    s->reports_.push_back(std::move(report));
    s->layers_.push_back(std::move(l));
  }
  // Reported in the order the layers are listed, those left out among them.
  const auto names = all_layer_names();
  std::ranges::stable_sort(s->reports_, {}, [&](const layer_report& r) {
    return std::ranges::find(names, r.name) - names.begin();
  });
  // A layer the user asked for by name must be live; otherwise only the system-call layer.
  for (const layer_report& r : s->reports_) {
    bool required = options.layers.empty() ? r.name == "syscall" : true;
    if (required && !r.live)
      return fail("layer '" + r.name + "' could not attach: " + r.why);
  }
  if (!s->user_probes_ && s->warmup_)
    s->warmup_->stop();  // no process will be attached
  // Without a live user-space layer no one would continue a held process: hold none.
  if (!s->user_probes_ && s->maps_.hold_new)
    if (auto gate = s->set_hold_gate(false); !gate)
      return std::unexpected(gate.error());
  if (s->user_probes_) {
    auto holder = process_holder::start(s->maps_.holds_fd, *s->user_probes_,
                                        [raw = s.get()] { return raw->loss(DC_LOSS_GONE_UNSAID); });
    if (!holder)
      return std::unexpected(holder.error());
    s->holder_ = std::move(*holder);
  }
  return s;
}

result<> session::load(const session_options& options, const std::vector<std::unique_ptr<layer>>& layers,
                       std::function<void()> while_loading)
{
  maps_.hold_new = !uprobe_targets_.empty() || !uprobe_entries_.empty();
  maps_.wake_mark = options.ring_bytes / 4;
  maps_.profile_interval_ns = options.profile_interval_ns;
  // The kernel continues held processes if this one dies with the gate open (it names this
  // process by its pid in its own pid namespace, which may not be the kernel's).
  struct stat pidns {};
  if (maps_.hold_new && stat("/proc/self/ns/pid", &pidns) != 0)
    return fail(std::string("cannot read this process's pid namespace: ") + std::strerror(errno));
  object_settings settings{
      options.ring_bytes,
      options.hold_ring_bytes,
      maps_.wake_mark,
      maps_.hold_new,
      maps_.profile_interval_ns,
      maps_.profile_interval_ns ? profile_map_entries : 1,
      options.verbose,
      static_cast<uint32_t>(std::countr_zero(static_cast<uint64_t>(sysconf(_SC_PAGESIZE)))),
      pidns.st_dev,
      pidns.st_ino,
      0,
      std::move(while_loading),
      options.core_btf_dir,
      options.keep_seconds > 0 && !options.keeper_exe.empty()};
  auto object = load_object(settings, layers, all_layer_names());
  if (!object)
    return std::unexpected(object.error());
  skel_ = object->skel;
  reports_ = std::move(object->refused);
  if (object->adopted)
    program_fds_.adopt(skel_->obj, std::move(object->adopted_programs));
  else if (!object->keeper_note.empty() && options.verbose)
    std::fprintf(stderr, "datacrumbs: no kept object taken: %s\n", object->keeper_note.c_str());
  verbose_ = options.verbose;
  if (settings.kept_objects) {
    kept_key_ = object->kept_key;
    keep_seconds_ = options.keep_seconds;
    keeper_exe_ = options.keeper_exe;
  }
  maps_.events_fd = bpf_map__fd(skel_->maps.dc_events);
  maps_.traced_fd = bpf_map__fd(skel_->maps.dc_traced);
  maps_.lost_fd = bpf_map__fd(skel_->maps.dc_lost);
  maps_.threads_fd = bpf_map__fd(skel_->maps.dc_threads);
  maps_.profile_fd = bpf_map__fd(skel_->maps.dc_profile);
  maps_.holds_fd = bpf_map__fd(skel_->maps.dc_holds);
  maps_.hold_gate_fd = bpf_map__fd(skel_->maps.dc_hold_gate);
  if (auto gate = set_hold_gate(maps_.hold_new); !gate)
    return gate;
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj)
  {
    // Iterators are not hooks: they run when asked (flush_profile).
    if (!program_of(prog, "process") || bpf_program__expected_attach_type(prog) == BPF_TRACE_ITER)
      continue;
    auto link = attach_tracing_program(program_fds_, prog);
    if (!link)
      return fail(std::string("cannot attach ") + bpf_program__section_name(prog) + ": " +
                  link.error().message + "; processes cannot be followed");
    process_links_.push_back(*link);
  }
  return {};
}

result<> session::flush_profile(uint64_t below_epoch)
{
  std::lock_guard lock(profile_flush_);
  skel_->bss->dc_profile_flush_below = below_epoch;
  return run_task_iterator(program_fds_.fd(skel_->progs.dc_process_profile_flush),
                           "sends threads' profile counts through the ring");
}

result<> session::attach_process(uint32_t pid)
{
  if (!user_probes_)
    return {};
  auto started = std::chrono::steady_clock::now();
  if (!kept_key_.empty())
    user_probes_->keep_links_to_the_end(pid);  // detach() hands them to the keeper
  auto attached = user_probes_->attach_before_exec(pid);
  if (warmup_)
    warmup_->stop();                // its links go to the keeper with the others (detach)
  for (layer_report& r : reports_)  // the first process's attach time is the layer's
    if (r.name == "uprobe" && !first_attached_)
      r.attach_us = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
              .count());
  first_attached_ = true;
  return attached;
}

std::vector<std::string> session::refused_functions() const
{
  return user_probes_ ? user_probes_->refused_functions() : std::vector<std::string>{};
}

std::vector<uprobe_target> session::current_uprobe_targets() const
{
  return user_probes_ ? user_probes_->targets() : uprobe_targets_;
}

std::vector<uprobe_placement> session::uprobe_placements() const
{
  return user_probes_ ? user_probes_->placements() : std::vector<uprobe_placement>{};
}

bool session::uprobe_call_sessions() const
{
  return user_probes_ && user_probes_->call_sessions();
}

std::string session::hold_failures() const
{
  if (!holder_ || holder_->failures() == 0)
    return "";
  return std::to_string(holder_->failures()) +
         " new processes ran without their user-space probes: " + holder_->first_failure();
}

std::vector<page_cache_entry> session::page_cache_counts()
{
  std::vector<page_cache_entry> all;
  for (const auto& l : layers_) std::ranges::move(l->page_cache_counts(), std::back_inserter(all));
  return all;
}

result<> session::arm(uint32_t pid)
{
  // The traced set's filter first, as the programs add (common.bpf.h dc_traced_slot_add).
  std::atomic_ref<uint32_t> slot(skel_->bss->dc_traced_slots[pid & (DC_TRACED_SLOTS - 1)]);
  uint32_t was = 0;
  if (!slot.compare_exchange_strong(was, pid) && was != pid)
    slot.store(DC_TRACED_SHARED);
  uint32_t state = DC_TRACE_ARMED;
  if (bpf_map_update_elem(maps_.traced_fd, &pid, &state, BPF_ANY) != 0)
    return fail(std::string("cannot add the command to the traced set: ") + std::strerror(errno));
  return {};
}

void session::disarm(uint32_t pid)
{
  bpf_map_delete_elem(maps_.traced_fd, &pid);
  std::atomic_ref<uint32_t> slot(skel_->bss->dc_traced_slots[pid & (DC_TRACED_SLOTS - 1)]);
  uint32_t was = pid;
  slot.compare_exchange_strong(was, 0);
}

uint64_t session::loss(uint32_t kind) const
{
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0)
    return 0;
  std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpu));
  if (bpf_map_lookup_elem(maps_.lost_fd, &kind, per_cpu.data()) != 0)
    return 0;
  uint64_t sum = 0;
  for (uint64_t v : per_cpu) sum += v;
  return sum;
}

sweep_counts session::uprobe_swept() const
{
  return user_probes_ ? user_probes_->swept() : sweep_counts{};
}

loss_counts session::losses()
{
  loss_counts total;
  for (uint32_t kind = 0; kind < DC_LOSS_KINDS; ++kind) total.kernel[kind] = loss(kind);
  total.skipped = skipped_runs(skel_->obj, program_fds_, "process");
  for (const auto& l : layers_) {
    total.skipped += l->skipped_runs();
    l->add_losses(total);
  }
  return total;
}

}  // namespace dc
