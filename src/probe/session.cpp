#include "probe/session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <algorithm>
#include <bit>
#include <chrono>
#include <iterator>
#include <cstring>
#include <thread>

#include "probe/layers.h"
#include "probe/system_checks.h"
#include "process.skel.h"

extern "C" {
#include "events.h"
}

namespace dc {

namespace {

bool g_verbose = false;
constexpr uint32_t profile_map_entries = 1u << 18;

int libbpf_log(enum libbpf_print_level level, const char* fmt, va_list args)
{
  (void)level;  // failures surface through our own error values; details only when verbose
  return g_verbose ? vfprintf(stderr, fmt, args) : 0;
}

}  // namespace

result<std::unique_ptr<session>> session::open(const session_options& options)
{
  g_verbose = options.verbose;
  libbpf_set_print(libbpf_log);
  if (auto privileged = check_bpf_privileges(); !privileged)
    return std::unexpected(privileged.error());
  std::unique_ptr<session> s(new session());
  auto tracefs = ensure_tracefs();
  if (!tracefs)
    s->notes_.push_back(tracefs.error().message);
  else if (!tracefs->empty())
    s->notes_.push_back(*tracefs);

  if (options.uprobes)
    s->uprobe_targets_ = *options.uprobes;
  else if (options.config && options.layers.empty())
    s->uprobe_targets_ = plan_uprobes(*options.config, s->notes_);
  s->maps_.hold_new = !s->uprobe_targets_.empty();
  if (auto ok = s->open_process_tracking(options); !ok)
    return std::unexpected(ok.error());
  std::vector<std::string> wanted = options.layers;
  if (wanted.empty() && options.config)
    wanted = kernel_layers_in(*options.config);
  auto layers = make_layers();
  if (options.beacon) {
    layers.push_back(make_beacon_layer(*options.beacon));
    wanted.push_back("beacon");
  }
  if (!s->uprobe_targets_.empty()) {
    auto user = make_uprobe_layer(s->uprobe_targets_);
    s->user_probes_ = user.get();
    layers.push_back(std::move(user));
    wanted.push_back("uprobe");
  }
  for (auto& l : layers) {
    if ((!wanted.empty() || options.config || options.uprobes) &&
        std::ranges::find(wanted, l->name()) == wanted.end())
      continue;
    if (auto loaded = l->load(s->maps_); !loaded) {
      s->reports_.push_back(
          {std::string(l->name()), std::string(l->category()), false, {}, loaded.error().message});
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
  // A layer the user asked for by name must be live; otherwise only the system-call layer.
  for (const layer_report& r : s->reports_) {
    bool required = options.layers.empty() ? r.name == "syscall" : true;
    if (required && !r.live)
      return fail("layer '" + r.name + "' could not attach: " + r.why);
  }
  if (s->user_probes_) {
    auto holder = process_holder::start(s->maps_.holds_fd, s->maps_.held_fd, *s->user_probes_);
    if (!holder)
      return std::unexpected(holder.error());
    s->holder_ = std::move(*holder);
  }
  return s;
}

result<> session::open_process_tracking(const session_options& options)
{
  process_ = process_bpf__open();
  if (!process_)
    return fail(std::string("cannot open the process BPF object: ") + std::strerror(errno));
  maps_.wake_mark = options.ring_bytes / 4;
  process_->rodata->dc_wake_mark = maps_.wake_mark;
  process_->rodata->dc_hold_new = maps_.hold_new;
  // The kernel continues held processes if this one dies with the gate open (it names this
  // process by its pid in its own pid namespace, which may not be the kernel's).
  struct stat pidns {};
  if (maps_.hold_new && stat("/proc/self/ns/pid", &pidns) != 0)
    return fail(std::string("cannot read this process's pid namespace: ") + std::strerror(errno));
  process_->rodata->dc_holder_ns_dev = pidns.st_dev;
  process_->rodata->dc_holder_ns_ino = pidns.st_ino;
  maps_.page_shift = static_cast<uint32_t>(std::countr_zero(static_cast<uint64_t>(sysconf(_SC_PAGESIZE))));
  process_->rodata->dc_page_shift = maps_.page_shift;
  maps_.profile_interval_ns = options.profile_interval_ns;
  process_->rodata->dc_profile_interval_ns = maps_.profile_interval_ns;
  // About three intervals are in the map at once; an event that finds no room is counted lost.
  uint32_t profile_entries = maps_.profile_interval_ns ? profile_map_entries : 1;
  if (int err = bpf_map__set_max_entries(process_->maps.dc_profile, profile_entries); err)
    return fail(std::string("cannot size the profile map: ") + std::strerror(-err));
  if (int err = bpf_map__set_max_entries(process_->maps.dc_events, static_cast<uint32_t>(options.ring_bytes));
      err)
    return fail(std::string("cannot size the event ring: ") + std::strerror(-err));
  if (int err = process_bpf__load(process_); err)
    return fail(std::string("cannot load the process-tracking BPF programs: ") + std::strerror(-err));
  maps_.events_fd = bpf_map__fd(process_->maps.dc_events);
  maps_.traced_fd = bpf_map__fd(process_->maps.dc_traced);
  maps_.lost_fd = bpf_map__fd(process_->maps.dc_lost);
  maps_.threads_fd = bpf_map__fd(process_->maps.dc_threads);
  maps_.profile_fd = bpf_map__fd(process_->maps.dc_profile);
  maps_.holds_fd = bpf_map__fd(process_->maps.dc_holds);
  maps_.hold_gate_fd = bpf_map__fd(process_->maps.dc_hold_gate);
  maps_.held_fd = bpf_map__fd(process_->maps.dc_held);
  if (auto gate = set_hold_gate(maps_.hold_new); !gate)
    return gate;
  bpf_program* prog;
  bpf_object__for_each_program(prog, process_->obj)
  {
    bpf_link* link = bpf_program__attach(prog);
    if (!link)
      return fail(std::string("cannot attach ") + bpf_program__section_name(prog) + ": " +
                  std::strerror(errno) + "; processes cannot be followed");
    process_links_.push_back(link);
  }
  return {};
}

result<> session::attach_process(uint32_t pid)
{
  if (!user_probes_)
    return {};
  auto started = std::chrono::steady_clock::now();
  auto attached = user_probes_->attach_process(pid);
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

std::string session::hold_failures() const
{
  if (!holder_ || holder_->failures() == 0)
    return "";
  return std::to_string(holder_->failures()) +
         " new processes ran without their user-space probes: " + holder_->first_failure();
}

result<> session::set_hold_gate(bool open)
{
  uint32_t zero = 0, value = open ? static_cast<uint32_t>(getpid()) : 0;
  if (bpf_map_update_elem(maps_.hold_gate_fd, &zero, &value, BPF_ANY) != 0)
    return fail(std::string("cannot ") + (open ? "open" : "close") +
                " the gate that holds new processes: " + std::strerror(errno));
  return {};
}

result<> session::release_holds()
{
  if (!holder_)
    return {};
  // No new holds, then continue every process still held: a program that saw the gate open
  // has submitted its record well within the pause (programs run for microseconds).
  auto closed = set_hold_gate(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  holder_->stop();
  return closed;
}

result<> session::detach()
{
  // Every step runs even when an earlier one failed (a layer not flushed loses the records its
  // threads still hold back), and the error names every failure, in order.
  std::string failures;
  auto note = [&failures](const result<>& step) {
    if (!step)
      failures += (failures.empty() ? "" : "; ") + step.error().message;
  };
  note(release_holds());
  for (const auto& l : layers_) l->detach();
  for (const auto& l : layers_) note(l->flush_stages());
  if (!failures.empty())
    return fail(failures);
  return {};
}

session::~session()
{
  // Also on the way out of an error, before anything else goes; that error is the one reported.
  (void)release_holds();
  holder_.reset();
  layers_.clear();
  for (bpf_link* l : process_links_) bpf_link__destroy(l);
  process_bpf__destroy(process_);
}

std::vector<page_cache_entry> session::page_cache_counts()
{
  std::vector<page_cache_entry> all;
  for (const auto& l : layers_) std::ranges::move(l->page_cache_counts(), std::back_inserter(all));
  return all;
}

result<> session::arm(uint32_t pid)
{
  uint32_t state = DC_TRACE_ARMED;
  if (bpf_map_update_elem(maps_.traced_fd, &pid, &state, BPF_ANY) != 0)
    return fail(std::string("cannot add the command to the traced set: ") + std::strerror(errno));
  return {};
}

void session::disarm(uint32_t pid)
{
  bpf_map_delete_elem(maps_.traced_fd, &pid);
}

loss_counts session::losses()
{
  loss_counts total;
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0)
    return total;
  std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpu));
  for (uint32_t kind = 0; kind < DC_LOSS_KINDS; ++kind) {
    if (bpf_map_lookup_elem(maps_.lost_fd, &kind, per_cpu.data()) != 0)
      continue;
    uint64_t sum = 0;
    for (uint64_t v : per_cpu) sum += v;
    total.kernel[kind] = sum;
  }
  total.skipped = skipped_runs(process_->obj);
  for (const auto& l : layers_) total.skipped += l->skipped_runs();
  return total;
}

}  // namespace dc
