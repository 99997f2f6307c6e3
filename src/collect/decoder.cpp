#include "collect/decoder.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "sink/event_sink.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"

namespace dc {

decoder::decoder(clock_offset clock, event_sinks sinks) : sinks_(sinks)
{
  state_.clock = clock;
}

namespace {

// Calls decode_fn with the record as a T when it is long enough to be one. Ring records are
// 8-byte aligned, so the record is used in place.
template <class T>
bool decode_as(const void* data, size_t size, decoder& d, void (decoder::*decode_fn)(const T&))
{
  if (size < sizeof(T))
    return false;
  (d.*decode_fn)(*static_cast<const T*>(data));
  return true;
}

}  // namespace

void decoder::decode(const void* data, size_t size)
{
  dc_record_header h;
  if (size < sizeof(h)) {
    ++malformed_;
    return;
  }
  std::memcpy(&h, data, sizeof(h));
  bool ok = false;
  switch (h.kind) {
    case DC_REC_STAGED:
      // A run of one thread's records, staged in the kernel and sent together.
      ok = decode_staged(data, size);
      break;
    case DC_REC_BLOCK: ok = decode_as(data, size, *this, &decoder::decode_block); break;
    case DC_REC_NET: ok = decode_as(data, size, *this, &decoder::decode_net); break;
    case DC_REC_UPROBE: ok = decode_as(data, size, *this, &decoder::decode_uprobe); break;
    case DC_REC_FS: ok = decode_as(data, size, *this, &decoder::decode_fs); break;
    case DC_REC_FAULT: ok = decode_as(data, size, *this, &decoder::decode_fault); break;
    case DC_REC_TASK: ok = decode_as(data, size, *this, &decoder::decode_task); break;
    case DC_REC_PROFILE:
      ok = size >= sizeof(dc_profile_record);
      if (ok) {
        const auto& rec = *static_cast<const dc_profile_record*>(data);
        profile_records_.push_back({rec.key, rec.counts});
      }
      break;
    case DC_REC_FILE_NAME:
    case DC_REC_CALL_PATH:
      // Variable length: only the used part of data[] is in the ring.
      ok = size >= offsetof(dc_path_record, data) && size <= sizeof(dc_path_record);
      if (ok)
        decode_path(*static_cast<const dc_path_record*>(data), size);
      break;
    default: break;
  }
  if (!ok)
    ++malformed_;
}

std::string join_components(std::string_view leaf_first)
{
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start < leaf_first.size()) {
    size_t end = leaf_first.find('\0', start);
    if (end == std::string_view::npos)
      end = leaf_first.size();
    if (end > start)
      parts.push_back(leaf_first.substr(start, end - start));
    start = end + 1;
  }
  std::string path;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (*it == "/")
      continue;  // the root dentry of a pseudo filesystem is named "/"
    path.push_back('/');
    path.append(*it);
  }
  return path.empty() ? "/" : path;
}

std::string resolve_path(std::string_view raw, std::string_view base)
{
  std::filesystem::path p(raw);
  if (!p.is_absolute())
    p = std::filesystem::path(base.empty() ? "/" : base) / p;
  std::string s = p.lexically_normal().string();
  if (s.size() > 1 && s.back() == '/')
    s.pop_back();
  return s;
}

std::string fallback_name(const dc_file_ref& ref)
{
  std::string ino = std::to_string(ref.ino);
  switch (ref.mode & S_IFMT) {
    case S_IFSOCK: return "socket:[" + ino + "]";
    case S_IFIFO: return "pipe:[" + ino + "]";
    default:
      return "anon:[" + std::to_string(ref.dev >> 20) + ":" + std::to_string(ref.dev & 0xfffff) + ":" + ino +
             "]";
  }
}

void decoder::decode_path(const dc_path_record& rec, size_t size)
{
  size_t len = std::min<size_t>({rec.len, size - offsetof(dc_path_record, data), sizeof(rec.data)});
  std::string_view data(rec.data, len);
  if (rec.hdr.kind == DC_REC_FILE_NAME) {
    std::string path = join_components(data);
    // Sockets, pipes and other pseudo files have no path: name them as /proc does.
    if (path == "/" && (rec.file.mode & S_IFMT) != S_IFDIR)
      path = fallback_name(rec.file);
    if (rec.truncated)
      path = "..." + path;
    state_.files.name({rec.file.dev, rec.file.ino}, state_.names.add(path));
    return;
  }
  size_t raw_len = std::min<size_t>(rec.raw_len, len);
  std::string_view raw = data.substr(0, raw_len);
  if (!raw.empty() && raw.back() == '\0')
    raw.remove_suffix(1);
  std::string base = raw.starts_with('/') ? std::string() : join_components(data.substr(raw_len));
  std::string path = resolve_path(raw, base);
  state_.call_paths[rec.hdr.tid][rec.slot & 1] = state_.names.add(path);
}

std::string proc_fd_path(const std::string& link, const file_key* expected, file_key* found)
{
  char target[4096];
  struct stat st {};
  ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0 || stat(link.c_str(), &st) != 0)
    return "";
  *found = {kernel_dev(major(st.st_dev), minor(st.st_dev)), st.st_ino};
  if (expected && !(*expected == *found))
    return "";
  return std::string(target, static_cast<size_t>(n));
}

void decoder::snapshot_fds(uint32_t pid)
{
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.')
      continue;
    file_key key{};
    std::string path = proc_fd_path(dir + "/" + e->d_name, nullptr, &key);
    if (!path.empty() && !state_.files.find(key))
      state_.files.name(key, state_.names.add(path));
  }
  closedir(d);
}

trace_event decoder::begin_event(std::string_view name, std::string_view category,
                                 const dc_record_header& hdr, uint64_t dur_ns) const
{
  trace_event ev;
  begin_event(ev, name, category, hdr, dur_ns);
  return ev;
}

void decoder::begin_event(trace_event& ev, std::string_view name, std::string_view category,
                          const dc_record_header& hdr, uint64_t dur_ns) const
{
  ev.clear();
  ev.name = name;
  ev.category = category;
  ev.pid = hdr.tgid;
  ev.process = process_of(hdr.tgid);
  ev.tid = hdr.tid;
  us_span span = to_span(hdr.ts_ns, dur_ns, state_.clock);
  ev.ts_us = span.ts_us;
  ev.dur_us = span.dur_us;
}

void decoder::place(trace_event& ev, const dc_nesting& nest, trace_event::parent_of kind)
{
  if (nest.level == 0)
    return;
  ev.id = nest.id;
  ev.parent = nest.parent;
  ev.level = nest.level;
  ev.parent_kind = nest.parent >= 0 ? kind : trace_event::parent_of::none;
}

void decoder::finish_trace()
{
  trace_names names = trace_names_now();
  if (sinks_.trace)
    sinks_.trace->flush_held(names);
  for (event_sink* v : views_) v->finish(names);
}

void decoder::tick(std::chrono::steady_clock::time_point now)
{
  for (event_sink* v : views_) v->tick(now, trace_names_now());
}

void decoder::emit(const trace_event& ev)
{
  trace_names names = trace_names_now();
  if (sinks_.trace && !ev.folded)
    sinks_.trace->write_event(ev, names);
  if (sinks_.summary)
    sinks_.summary->add(ev);
  for (event_sink* v : views_) v->add(ev, names);
}

}  // namespace dc
