#include "probe/layer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dc {

layer::~layer()
{
  detach();
}

void layer::detach()
{
  for (bpf_link* l : links_) bpf_link__destroy(l);
  links_.clear();
  for (int fd : link_fds_) close(fd);
  link_fds_.clear();
}

namespace {

std::string hook_name(const bpf_program* prog)
{
  std::string sec = bpf_program__section_name(prog);
  return sec;
}

}  // namespace

layer_report layer::attach()
{
  layer_report r{std::string(name()), std::string(category()), true, {}, {}};
  bpf_program* prog;
  bpf_object__for_each_program(prog, object())
  {
    // Iterators are not hooks: a layer runs them itself (run_task_iterator).
    if (!bpf_program__autoload(prog) || bpf_program__expected_attach_type(prog) == BPF_TRACE_ITER)
      continue;
    bpf_link* link = bpf_program__attach(prog);
    if (!link) {
      r.live = false;
      if (!r.why.empty())
        r.why += "; ";
      r.why += hook_name(prog) + ": " + std::strerror(errno);
      continue;
    }
    links_.push_back(link);
    r.hooks.push_back(hook_name(prog));
  }
  return r;
}

result<> run_task_iterator(bpf_program* prog, std::string_view what)
{
  bpf_link* link = bpf_program__attach_iter(prog, nullptr);
  if (!link)
    return fail("cannot attach the iterator that " + std::string(what) + ": " + std::strerror(errno));
  int fd = bpf_iter_create(bpf_link__fd(link));
  int err = fd < 0 ? errno : 0;
  char buf[64];
  while (fd >= 0) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0 || (n < 0 && errno == EINTR))
      continue;
    if (n < 0)
      err = errno;
    break;
  }
  if (fd >= 0)
    close(fd);
  bpf_link__destroy(link);
  if (err)
    return fail("the iterator that " + std::string(what) + " failed: " + std::strerror(err));
  return {};
}

uint64_t skipped_runs(bpf_object* obj)
{
  uint64_t total = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj)
  {
    int fd = bpf_program__fd(prog);
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
      total += info.recursion_misses;
  }
  return total;
}

uint64_t layer::skipped_runs()
{
  return dc::skipped_runs(object());
}

result<> reuse_shared_maps(bpf_object* obj, const shared_maps& maps)
{
  struct {
    const char* name;
    int fd;
  } shared[] = {{"dc_events", maps.events_fd},       {"dc_traced", maps.traced_fd},
                {"dc_lost", maps.lost_fd},           {"dc_threads", maps.threads_fd},
                {"dc_profile", maps.profile_fd},     {"dc_holds", maps.holds_fd},
                {"dc_hold_gate", maps.hold_gate_fd}, {"dc_held", maps.held_fd}};
  for (const auto& m : shared) {
    bpf_map* map = bpf_object__find_map_by_name(obj, m.name);
    if (!map)
      continue;
    if (int err = bpf_map__reuse_fd(map, m.fd); err)
      return fail(std::string("cannot share map ") + m.name + ": " + std::strerror(-err));
  }
  return {};
}

}  // namespace dc
