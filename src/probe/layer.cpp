#include "probe/layer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
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

void close_links_in_reverse(std::vector<int>& link_fds)
{
  for (auto l = link_fds.rbegin(); l != link_fds.rend(); ++l) close(*l);
  link_fds.clear();
}

namespace {

uint64_t recursion_misses(int fd)
{
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  return fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.recursion_misses : 0;
}

}  // namespace

program_fds::~program_fds()
{
  for (const auto& e : adopted_) close(e.fd);
}

void program_fds::adopt(bpf_object* obj, std::vector<int> fds)
{
  size_t i = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) if (bpf_program__autoload(prog) && i < fds.size())
  {
    adopted_.push_back({prog, fds[i], recursion_misses(fds[i])});
    ++i;
  }
  for (; i < fds.size(); ++i) close(fds[i]);
}

int program_fds::fd(const bpf_program* prog) const
{
  if (adopted_.empty())
    return bpf_program__fd(prog);
  auto e = std::ranges::find(adopted_, prog, &entry::prog);
  return e == adopted_.end() ? -1 : e->fd;
}

uint64_t program_fds::skipped_before(const bpf_program* prog) const
{
  auto e = std::ranges::find(adopted_, prog, &entry::prog);
  return e == adopted_.end() ? 0 : e->skipped_before;
}

std::vector<int> program_fds::in_order(bpf_object* obj) const
{
  std::vector<int> fds;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) if (bpf_program__autoload(prog)) fds.push_back(fd(prog));
  return fds;
}

result<int> attach_tracing_program(const program_fds& fds, const bpf_program* prog)
{
  if (bpf_program__type(prog) != BPF_PROG_TYPE_TRACING ||
      bpf_program__expected_attach_type(prog) != BPF_TRACE_RAW_TP)
    return fail(std::string(bpf_program__name(prog)) + " is not a tp_btf program");
  int link = bpf_link_create(fds.fd(prog), 0, BPF_TRACE_RAW_TP, nullptr);
  if (link < 0)
    return fail(std::strerror(errno));
  return link;
}

bool layer::owns(const bpf_program* prog) const
{
  return program_of(prog, name());
}

result<> layer::loaded(datacrumbs_bpf& skel, const program_fds& fds)
{
  skel_ = &skel;
  fds_ = &fds;
  return after_load(skel);
}

int layer::fd_of(const bpf_program* prog) const
{
  return fds_ ? fds_->fd(prog) : -1;
}

void layer::detach()
{
  close_links_in_reverse(link_fds_);
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
    auto link = attach_tracing_program(*fds_, prog);
    if (!link) {
      r.live = false;
      if (!r.why.empty())
        r.why += "; ";
      r.why += hook + ": " + link.error().message;
      continue;
    }
    link_fds_.push_back(*link);
    r.hooks.push_back(hook);
  }
  return r;
}

result<> run_task_iterator(int prog_fd, std::string_view what)
{
  int link = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, nullptr);
  if (link < 0)
    return fail("cannot attach the iterator that " + std::string(what) + ": " + std::strerror(errno));
  int fd = bpf_iter_create(link);
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
  close(link);
  if (err)
    return fail("the iterator that " + std::string(what) + " failed: " + std::strerror(err));
  return {};
}

uint64_t skipped_runs(bpf_object* obj, const program_fds& fds, std::string_view name)
{
  uint64_t total = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj)
  {
    if (program_of(prog, name))
      total += recursion_misses(fds.fd(prog)) - fds.skipped_before(prog);
  }
  return total;
}

uint64_t layer::skipped_runs()
{
  return skel_ && fds_ ? dc::skipped_runs(skel_->obj, *fds_, name()) : 0;
}

}  // namespace dc
