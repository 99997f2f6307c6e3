#include "probe/core_btf.h"

#include <bpf/btf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <vector>

extern char** environ;

namespace dc {

namespace {

constexpr const char* kernel_btf = "/sys/kernel/btf/vmlinux";

constexpr uint64_t fnv_prime = 0x100000001b3ULL;

// FNV-1a over 64-bit words (then the tail bytes).
uint64_t mix(uint64_t h, std::span<const std::byte> bytes)
{
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * fnv_prime;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<uint8_t>(bytes[i])) * fnv_prime;
  return h;
}

uint64_t mix(uint64_t h, std::string_view s)
{
  return mix(h, std::as_bytes(std::span(s.data(), s.size())));
}

// mix() in four interleaved lanes, folded at the end: the object is ~1.4 MB, hashed twice a run
// before the keeper is asked; one lane's chain of dependent multiplies took ~200 us of it, four
// independent chains ~50 us (docs/performance.md, session 48).
uint64_t mix_wide(uint64_t h, std::span<const std::byte> bytes)
{
  std::array<uint64_t, 4> lanes{h, h ^ 1, h ^ 2, h ^ 3};
  size_t i = 0;
  for (; i + 32 <= bytes.size(); i += 32)
    for (size_t k = 0; k < lanes.size(); ++k) {
      uint64_t word;
      std::memcpy(&word, bytes.data() + i + 8 * k, 8);
      lanes[k] = (lanes[k] ^ word) * fnv_prime;
    }
  for (uint64_t lane : lanes) h = (h ^ lane) * fnv_prime;
  return mix(h, bytes.subspan(i));
}

result<std::array<uint32_t, DC_CAST_COUNT>> read_ids(const std::string& path)
{
  std::ifstream in(path);
  std::array<uint32_t, DC_CAST_COUNT> ids{};
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string name;
    if (!(in >> name >> ids[i]) || name != cast_type_name(i))
      return fail(path + " does not list this build's cast types");
  }
  return ids;
}

// Runs bpftool (PATH, else /usr/sbin) with `args`; ok when it exits 0.
result<> run_bpftool(const std::vector<std::string>& args)
{
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // it is given paths, not this process's fds
  pid_t pid = -1;
  int err = posix_spawnp(&pid, "bpftool", &actions, nullptr, argv.data(), environ);
  if (err == ENOENT)
    err = posix_spawn(&pid, "/usr/sbin/bpftool", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err)
    return fail(std::string("cannot run bpftool: ") + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail("bpftool gen min_core_btf failed");
  return {};
}

// The kernel's ids of the cast types (0 for a type this kernel lacks: CO-RE then fails the
// program using it, as it would against the whole BTF).
result<std::array<uint32_t, DC_CAST_COUNT>> kernel_cast_ids()
{
  std::unique_ptr<btf, decltype(&btf__free)> vmlinux(btf__load_vmlinux_btf(), btf__free);
  if (!vmlinux)
    return fail(std::string("cannot read the kernel's BTF: ") + std::strerror(errno));
  std::array<uint32_t, DC_CAST_COUNT> ids{};
  for (size_t i = 0; i < ids.size(); ++i) {
    int id = btf__find_by_name_kind(vmlinux.get(), cast_type_name(i), BTF_KIND_STRUCT);
    ids[i] = id > 0 ? static_cast<uint32_t>(id) : 0;
  }
  return ids;
}

// Writes the cache files: the minimal BTF by bpftool, then the ids file (present: complete).
result<std::array<uint32_t, DC_CAST_COUNT>> write_cache(std::span<const std::byte> object,
                                                        const std::string& dir, const std::string& key,
                                                        const std::string& btf_path,
                                                        const std::string& ids_path)
{
  auto object_file = write_temp(dir, "core-btf-" + key + ".o", object);
  if (!object_file)
    return std::unexpected(object_file.error());
  auto btf_file = write_temp(dir, "core-btf-" + key + ".btf", {});
  result<> made = btf_file
                      ? run_bpftool({"bpftool", "gen", "min_core_btf", kernel_btf, *btf_file, *object_file})
                      : result<>(std::unexpected(btf_file.error()));
  unlink(object_file->c_str());
  if (!made) {
    if (btf_file)
      unlink(btf_file->c_str());
    return std::unexpected(made.error());
  }
  auto ids = kernel_cast_ids();
  std::ostringstream listed;
  for (size_t i = 0; ids && i < ids->size(); ++i) listed << cast_type_name(i) << ' ' << (*ids)[i] << '\n';
  std::string text = listed.str();
  result<std::string> ids_file = std::unexpected(error{});
  if (ids)
    ids_file =
        write_temp(dir, "core-btf-" + key + ".ids", std::as_bytes(std::span(text.data(), text.size())));
  if (ids_file && rename(btf_file->c_str(), btf_path.c_str()) == 0 &&
      rename(ids_file->c_str(), ids_path.c_str()) == 0)
    return ids;
  std::string why = !ids        ? ids.error().message
                    : !ids_file ? ids_file.error().message
                                : "cannot rename into " + dir + ": " + std::strerror(errno);
  unlink(btf_file->c_str());
  if (ids_file)
    unlink(ids_file->c_str());
  return fail(why);
}

}  // namespace

// The BTF a cache file holds decides which kernel fields the programs read: see core_btf.h.
result<> check_private(const std::string& path, bool directory)
{
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0)
    return fail(path + ": " + std::strerror(errno));
  if ((directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) || st.st_uid != geteuid() ||
      (st.st_mode & 022))
    return fail(path + " is not a " + (directory ? "directory" : "file") + " only this user can write");
  return {};
}

result<std::string> write_temp(const std::string& dir, std::string_view stem,
                               std::span<const std::byte> bytes)
{
  std::string path = dir + "/." + std::string(stem) + ".XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0)
    return fail("cannot write in " + dir + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      close(fd);
      unlink(path.c_str());
      return fail("cannot write " + path + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return path;
}

const char* cast_type_name(size_t i)
{
  static constexpr const char* names[] = {
#define DC_CAST_NAME(suffix, name) #name,
      DC_CAST_TYPE_TABLE(DC_CAST_NAME)
#undef DC_CAST_NAME
  };
  static_assert(std::size(names) == DC_CAST_COUNT);
  return names[i];
}

std::string core_btf_key(std::span<const std::byte> object)
{
  uint64_t h = mix_wide(0xcbf29ce484222325ULL, object);
  utsname u{};
  uname(&u);
  h = mix(mix(h, u.release), u.version);
  int fd = open(kernel_btf, O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    if (fd >= 0)
      close(fd);
    return {};
  }
  std::vector<std::byte> tail(static_cast<size_t>(std::min<off_t>(st.st_size, 4096)));
  ssize_t n = pread(fd, tail.data(), tail.size(), st.st_size - static_cast<off_t>(tail.size()));
  close(fd);
  if (n != static_cast<ssize_t>(tail.size()))
    return {};
  h = mix(mix(h, std::to_string(st.st_size)), tail);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

result<core_btf> cached_core_btf(std::span<const std::byte> object, const std::string& key,
                                 const std::string& dir)
{
  if (key.empty())
    return fail(std::string("cannot read ") + kernel_btf);
  core_btf out;
  out.path = dir + "/core-btf-" + key + ".btf";
  std::string ids_path = dir + "/core-btf-" + key + ".ids";
  if (check_private(dir, true) && check_private(out.path, false) && check_private(ids_path, false))
    if (auto ids = read_ids(ids_path)) {
      out.cast_ids = *ids;
      return out;
    }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail("cannot make " + dir + ": " + std::strerror(errno));
  if (auto ok = check_private(dir, true); !ok)
    return std::unexpected(ok.error());
  auto ids = write_cache(object, dir, key, out.path, ids_path);
  if (!ids)
    return std::unexpected(ids.error());
  out.cast_ids = *ids;
  out.made = true;
  return out;
}

}  // namespace dc
