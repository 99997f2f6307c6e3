#include "probe/object_reset.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/link_closer.h"
#include "datacrumbs.skel.h"
#include "probe/layer.h"

namespace dc {

namespace {

// Each map whose storage lives with tasks or sockets, and the program that deletes it from all
// of them (a new storage map without one is not kept: reset_plan says so). None: its entries
// carry the run's epoch, and one of an earlier run is taken for none (dc_net_epoch; a socket
// storage iterator is refused here, EPERM).
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> forgetters{{
    {"dc_threads", "dc_process_forget"},
    {"dc_fault_states", "dc_fault_forget"},
    {"dc_net_sock_owners", ""},
}};

// The kernel keeps 15 characters of a name; libbpf takes the kernel's for a map it reuses.
bool same_name(std::string_view name, std::string_view full)
{
  return name == full || (name.size() == BPF_OBJ_NAME_LEN - 1 && full.starts_with(name));
}

constexpr std::string_view letters = "dzraptl";  // reset_step::kind, in order, for the plan text

result<bpf_map_info> map_info(int fd)
{
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
    return fail(std::string("cannot read a kept map: ") + std::strerror(errno));
  return info;
}

// An anonymous zeroed buffer (mmap: no heap, and the pages are zero until written).
struct zero_buffer {
  void* data = MAP_FAILED;
  size_t size = 0;
  explicit zero_buffer(size_t bytes) : size(bytes ? bytes : 1)
  {
    data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~zero_buffer()
  {
    if (data != MAP_FAILED)
      munmap(data, size);
  }
  zero_buffer(const zero_buffer&) = delete;
  zero_buffer& operator=(const zero_buffer&) = delete;
};

size_t value_bytes(const bpf_map_info& info)
{
  switch (info.type) {
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
      return ((info.value_size + 7) / 8 * 8) * static_cast<size_t>(std::max(1, libbpf_num_possible_cpus()));
    default: return info.value_size;
  }
}

constexpr uint32_t batch = 1024;

result<> drain(int fd)
{
  auto info = map_info(fd);
  if (!info)
    return std::unexpected(info.error());
  zero_buffer keys(size_t{batch} * info->key_size), values(batch * value_bytes(*info));
  if (keys.data == MAP_FAILED || values.data == MAP_FAILED)
    return fail("no memory to empty a kept map");
  // Deleted entries are gone: every batch starts from the first bucket again.
  for (;;) {
    uint32_t count = batch;
    uint64_t out = 0;
    int err = bpf_map_lookup_and_delete_batch(fd, nullptr, &out, keys.data, values.data, &count, nullptr);
    if (err && errno != ENOENT)
      return fail(std::string("cannot empty kept map ") + info->name + ": " + std::strerror(errno));
    if (err)
      break;  // ENOENT: the last bucket was reached
  }
  return {};
}

result<> zero(int fd)
{
  auto info = map_info(fd);
  if (!info)
    return std::unexpected(info.error());
  size_t each = value_bytes(*info);
  // A mappable array is cleared in place (65,536 uprobe specs: ~64 batches of 1,024 otherwise).
  if (info->map_flags & BPF_F_MMAPABLE) {
    long page = sysconf(_SC_PAGESIZE);
    size_t bytes = (size_t{info->value_size} + 7) / 8 * 8 * info->max_entries;
    bytes = (bytes + static_cast<size_t>(page) - 1) / static_cast<size_t>(page) * static_cast<size_t>(page);
    void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at != MAP_FAILED) {
      std::memset(at, 0, bytes);
      munmap(at, bytes);
      return {};
    }
  }
  zero_buffer keys(size_t{batch} * sizeof(uint32_t)), values(batch * each);
  if (keys.data == MAP_FAILED || values.data == MAP_FAILED)
    return fail("no memory to clear a kept map");
  auto* index = static_cast<uint32_t*>(keys.data);
  for (uint32_t first = 0; first < info->max_entries; first += batch) {
    uint32_t count = std::min(batch, info->max_entries - first);
    for (uint32_t i = 0; i < count; ++i) index[i] = first + i;
    if (bpf_map_update_batch(fd, keys.data, values.data, &count, nullptr) != 0)
      return fail(std::string("cannot clear kept map ") + info->name + ": " + std::strerror(errno));
  }
  return {};
}

// A ring's consumer position is the first page, writable; its producer's the second.
result<> catch_up(int fd)
{
  long page = sysconf(_SC_PAGESIZE);
  void* consumer = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  void* producer = mmap(nullptr, page, PROT_READ, MAP_SHARED, fd, page);
  bool mapped = consumer != MAP_FAILED && producer != MAP_FAILED;
  if (mapped)
    __atomic_store_n(static_cast<uint64_t*>(consumer),
                     __atomic_load_n(static_cast<const uint64_t*>(producer), __ATOMIC_ACQUIRE),
                     __ATOMIC_RELEASE);
  int err = errno;
  if (consumer != MAP_FAILED)
    munmap(consumer, page);
  if (producer != MAP_FAILED)
    munmap(producer, page);
  if (!mapped)
    return fail(std::string("cannot map a kept ring: ") + std::strerror(err));
  return {};
}

}  // namespace

result<std::vector<reset_step>> reset_plan(const datacrumbs_bpf& skel, const std::vector<int>& programs)
{
  std::vector<reset_step> steps;
  struct storage {
    std::string_view forget;  // the program that deletes it
    bool found = false;
  };
  std::vector<storage> storages;
  bpf_map* map;
  bpf_object__for_each_map(map, skel.obj)
  {
    int fd = bpf_map__fd(map);
    if (fd < 0)
      continue;  // not made (a layer left out)
    std::string_view name = bpf_map__name(map);
    reset_step step{reset_step::kind::as_is, fd};
    switch (bpf_map__type(map)) {
      case BPF_MAP_TYPE_HASH:
      case BPF_MAP_TYPE_LRU_HASH:
      case BPF_MAP_TYPE_PERCPU_HASH:
      case BPF_MAP_TYPE_LRU_PERCPU_HASH: step.what = reset_step::kind::drain; break;
      case BPF_MAP_TYPE_PERCPU_ARRAY: step.what = reset_step::kind::zero; break;
      case BPF_MAP_TYPE_RINGBUF: step.what = reset_step::kind::ring; break;
      case BPF_MAP_TYPE_ARRAY:
        if (!bpf_map__is_internal(map))
          step.what = reset_step::kind::zero;
        else if (bpf_map__map_flags(map) & BPF_F_RDONLY_PROG)
          step.what = reset_step::kind::as_is;  // .rodata: frozen, and part of the object's name
        else if (name.ends_with(".bss"))
          step.what = reset_step::kind::zero;
        else
          return fail("kept objects have no reset for the internal map " + std::string(name));
        break;
      case BPF_MAP_TYPE_TASK_STORAGE:
      case BPF_MAP_TYPE_SK_STORAGE: {
        auto f = std::ranges::find_if(forgetters, [&](const auto& p) { return same_name(name, p.first); });
        if (f == forgetters.end())
          return fail("kept objects have no forget iterator for " + std::string(name));
        if (!f->second.empty())
          storages.push_back({f->second});
        break;
      }
      default: return fail("kept objects have no reset for map " + std::string(name));
    }
    steps.push_back(step);
  }
  size_t i = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel.obj)
  {
    if (!bpf_program__autoload(prog))
      continue;
    if (i >= programs.size() || programs[i] < 0)
      return fail(std::string("program ") + bpf_program__name(prog) + " has no fd to keep");
    reset_step step{reset_step::kind::program, programs[i++]};
    auto s = std::ranges::find(storages, std::string_view(bpf_program__name(prog)), &storage::forget);
    if (s != storages.end()) {
      step.what = reset_step::kind::forget_task;
      s->found = true;
    }
    steps.push_back(step);
  }
  if (i != programs.size())
    return fail("more program fds than programs loaded");
  for (const auto& s : storages)
    if (!s.found)
      return fail("forget iterator " + std::string(s.forget) + " is not loaded");
  return steps;
}

std::string plan_text(const std::vector<reset_step>& steps)
{
  std::string text;
  for (const auto& s : steps) {
    if (!text.empty())
      text += ',';
    text += letters[static_cast<size_t>(s.what)];
    text += std::to_string(s.fd);
  }
  return text;
}

result<std::vector<reset_step>> parse_plan(const std::string& text)
{
  std::vector<reset_step> steps;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view item = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), item.size() + 1));
    auto kind = item.empty() ? std::string_view::npos : letters.find(item[0]);
    reset_step step;
    const char* end = item.data() + item.size();
    auto [p, ec] = kind == std::string_view::npos
                       ? std::from_chars_result{item.data(), std::errc::invalid_argument}
                       : std::from_chars(item.data() + 1, end, step.fd);
    if (ec != std::errc{} || p != end || step.fd < 0)
      return fail("bad keeper plan item '" + std::string(item) + "'");
    step.what = static_cast<reset_step::kind>(kind);
    steps.push_back(step);
  }
  return steps;
}

result<> reset_object(const std::vector<reset_step>& steps, link_closer* beside)
{
  {
    std::vector<int> links;
    for (const auto& s : steps)
      if (s.what == reset_step::kind::link)
        links.push_back(s.fd);
    link_closer closer;  // joined here: every link closed, unless they close beside
    (beside ? *beside : closer).close_later(std::move(links));
  }
  // The maps next; the forget iterators then run over storage nothing else writes.
  for (const auto& s : steps) {
    result<> done;
    switch (s.what) {
      case reset_step::kind::drain: done = drain(s.fd); break;
      case reset_step::kind::zero: done = zero(s.fd); break;
      case reset_step::kind::ring: done = catch_up(s.fd); break;
      default: break;
    }
    if (!done)
      return done;
  }
  for (const auto& s : steps)
    if (s.what == reset_step::kind::forget_task)
      if (auto done = run_task_iterator(s.fd, "deletes a kept object's task storage"); !done)
        return done;
  return {};
}

}  // namespace dc
