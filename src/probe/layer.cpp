#include "probe/layer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "datacrumbs.skel.h"

namespace dc {

layer::~layer()
{
  detach();
}

namespace {

bool named_for(std::string_view n, std::string_view name)
{
  return n.starts_with("dc_") && n.substr(3).starts_with(name) && n.size() > 3 + name.size() &&
         n[3 + name.size()] == '_';
}

}  // namespace

bool program_of(const bpf_program* prog, std::string_view name)
{
  return named_for(bpf_program__name(prog), name);
}

bool map_of(const bpf_map* map, std::string_view name)
{
  return named_for(bpf_map__name(map), name);
}

void destroy_links_in_reverse(std::vector<bpf_link*>& links)
{
  for (auto l = links.rbegin(); l != links.rend(); ++l) bpf_link__destroy(*l);
  links.clear();
}

bool layer::owns(const bpf_program* prog) const
{
  return program_of(prog, name());
}

result<> layer::loaded(datacrumbs_bpf& skel)
{
  skel_ = &skel;
  return after_load(skel);
}

void layer::detach()
{
  destroy_links_in_reverse(links_);
}

layer_report layer::attach()
{
  layer_report r{std::string(name()), std::string(category()), true, {}, {}};
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj)
  {
    // Iterators are not hooks: a layer runs them itself (run_task_iterator).
    if (!owns(prog) || !bpf_program__autoload(prog) ||
        bpf_program__expected_attach_type(prog) == BPF_TRACE_ITER)
      continue;
    std::string hook = bpf_program__section_name(prog);
    bpf_link* link = bpf_program__attach(prog);
    if (!link) {
      r.live = false;
      if (!r.why.empty())
        r.why += "; ";
      r.why += hook + ": " + std::strerror(errno);
      continue;
    }
    links_.push_back(link);
    r.hooks.push_back(hook);
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

uint64_t skipped_runs(bpf_object* obj, std::string_view name)
{
  uint64_t total = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj)
  {
    int fd = bpf_program__fd(prog);
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (program_of(prog, name) && fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
      total += info.recursion_misses;
  }
  return total;
}

uint64_t layer::skipped_runs()
{
  return skel_ ? dc::skipped_runs(skel_->obj, name()) : 0;
}

}  // namespace dc
