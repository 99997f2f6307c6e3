// A kept object made the run's: probe/object_keeper.h.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "datacrumbs.skel.h"
#include "probe/object_keeper.h"

namespace dc {

namespace {

result<> check_map(const bpf_map* map, int fd)
{
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
    return fail(std::string("cannot read kept map ") + bpf_map__name(map) + ": " + std::strerror(errno));
  if (info.type != bpf_map__type(map) || info.key_size != bpf_map__key_size(map) ||
      info.value_size != bpf_map__value_size(map) || info.max_entries != bpf_map__max_entries(map))
    return fail(std::string("the kept map for ") + bpf_map__name(map) + " is another map");
  return {};
}

result<> check_program(const bpf_program* prog, int fd)
{
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
    return fail(std::string("cannot read kept program ") + bpf_program__name(prog) + ": " +
                std::strerror(errno));
  // The kernel keeps 15 characters of a name.
  if (info.type != bpf_program__type(prog) ||
      std::strncmp(info.name, bpf_program__name(prog), sizeof(info.name) - 1) != 0)
    return fail(std::string("the kept program for ") + bpf_program__name(prog) + " is another program");
  return {};
}

// Maps the kernel's map where the skeleton points (skel->bss, skel->rodata), as libbpf's load
// does: read-only when programs cannot write it.
result<> map_where_skeleton_points(bpf_map* map)
{
  size_t size = 0;
  void* at = const_cast<void*>(bpf_map__initial_value(map, &size));
  if (!at || !(bpf_map__map_flags(map) & BPF_F_MMAPABLE))
    return {};
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = (size_t{bpf_map__value_size(map)} + 7) / 8 * 8 * bpf_map__max_entries(map);
  bytes = (bytes + static_cast<size_t>(page) - 1) / static_cast<size_t>(page) * static_cast<size_t>(page);
  int prot = PROT_READ | ((bpf_map__map_flags(map) & BPF_F_RDONLY_PROG) ? 0 : PROT_WRITE);
  if (mmap(at, bytes, prot, MAP_SHARED | MAP_FIXED, bpf_map__fd(map), 0) == MAP_FAILED)
    return fail(std::string("cannot map kept map ") + bpf_map__name(map) + ": " + std::strerror(errno));
  return {};
}

}  // namespace

result<std::vector<int>> adopt_kept_object(datacrumbs_bpf& skel, kept_object kept)
{
  auto give_back = [&kept](const error& e) {
    for (int fd : kept.maps) close(fd);
    for (int fd : kept.programs) close(fd);
    return std::unexpected(e);
  };
  std::vector<bpf_map*> maps;
  bpf_map* map;
  bpf_object__for_each_map(map, skel.obj) if (bpf_map__autocreate(map)) maps.push_back(map);
  std::vector<bpf_program*> programs;
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel.obj) if (bpf_program__autoload(prog)) programs.push_back(prog);
  if (maps.size() != kept.maps.size() || programs.size() != kept.programs.size())
    return give_back(error{"the kept object has other maps or programs"});
  for (size_t i = 0; i < maps.size(); ++i)
    if (auto ok = check_map(maps[i], kept.maps[i]); !ok)
      return give_back(ok.error());
  for (size_t i = 0; i < programs.size(); ++i)
    if (auto ok = check_program(programs[i], kept.programs[i]); !ok)
      return give_back(ok.error());
  for (size_t i = 0; i < maps.size(); ++i) {
    int err = bpf_map__reuse_fd(maps[i], kept.maps[i]);
    close(kept.maps[i]);
    kept.maps[i] = -1;
    if (err)
      return give_back(error{std::string("cannot take kept map: ") + std::strerror(-err)});
    if (auto mapped = map_where_skeleton_points(maps[i]); !mapped)
      return give_back(mapped.error());
  }
  return std::move(kept.programs);
}

}  // namespace dc
