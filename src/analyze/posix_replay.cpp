#include "analyze/posix_replay.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace dc::analyze {

namespace {

constexpr int64_t o_append = 02000;
constexpr int64_t map_anonymous = 0x20;
constexpr int64_t small_io_bytes = 4096;

}  // namespace

void process_replay::apply(const posix_op& op, bool late)
{
  if (op.fhash == 0 || (op.has_ret && op.ret < 0 && op.kind != posix_kind::close))
    return;
  file_state& f = files_[op.fhash];
  darshan_record& r = f.rec;
  if (late)
    ++r.out_of_order_ops;
  int64_t tm1 = op.ts_us, tm2 = op.ts_us + op.dur_us;
  switch (op.kind) {
    case posix_kind::open:
      if (!op.has_ret)
        return;
      bind(static_cast<int32_t>(op.ret), op.fhash,
           new_desc(op.flags & o_append ? std::nullopt : std::optional<int64_t>(0)));
      f.last_byte_read = f.last_byte_written = 0;
      ++r.c[c_opens];
      stamp(r, t_open_start, t_open_end, tm1, tm2);
      add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
      return;
    case posix_kind::dup:
      if (!op.has_ret)
        return;
      bind(static_cast<int32_t>(op.ret), op.fhash, fd_of(op).desc);
      ++r.c[c_opens];
      ++r.c[c_dups];
      stamp(r, t_open_start, t_open_end, tm1, tm2);
      add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
      return;
    case posix_kind::close:
      unbind(op.fd);
      f.last_byte_read = f.last_byte_written = 0;
      stamp(r, t_close_start, t_close_end, tm1, tm2);
      add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
      return;
    case posix_kind::seek:
      if (op.has_ret)
        descs_[fd_of(op).desc].pos = op.ret;
      ++r.c[c_seeks];
      add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
      return;
    case posix_kind::stat:
      ++r.c[c_stats];
      add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
      return;
    case posix_kind::mmap:
      if (op.fd >= 0 && !(op.flags & map_anonymous))
        ++r.c[c_mmaps];
      return;
    case posix_kind::fsync:
    case posix_kind::fdatasync:
      ++r.c[op.kind == posix_kind::fsync ? c_fsyncs : c_fdsyncs];
      add_time(r.t[t_write_time], tm1, tm2, f.last_write_end);
      return;
    case posix_kind::read:
    case posix_kind::write: data(op, f, tm1, tm2); return;
  }
}

size_t process_replay::new_desc(std::optional<int64_t> pos)
{
  if (!free_descs_.empty()) {
    size_t d = free_descs_.back();
    free_descs_.pop_back();
    descs_[d] = {pos, 0};
    return d;
  }
  descs_.push_back({pos, 0});
  return descs_.size() - 1;
}

void process_replay::bind(int32_t fd, uint64_t fhash, size_t desc)
{
  ++descs_[desc].fds;  // first, so rebinding an fd to its own description keeps it
  unbind(fd);
  fds_[fd] = {fhash, desc};
}

void process_replay::unbind(int32_t fd)
{
  auto it = fds_.find(fd);
  if (it == fds_.end())
    return;
  if (--descs_[it->second.desc].fds == 0)
    free_descs_.push_back(it->second.desc);
  fds_.erase(it);
}

// The descriptor a call used; one the trace never saw opened (before tracing, inherited) or
// saw opened on another file has an unknown position.
process_replay::open_fd& process_replay::fd_of(const posix_op& op)
{
  auto it = fds_.find(op.fd);
  if (it == fds_.end() || it->second.fhash != op.fhash) {
    bind(op.fd, op.fhash, new_desc(std::nullopt));
    it = fds_.find(op.fd);
  }
  return it->second;
}

void process_replay::data(const posix_op& op, file_state& f, int64_t tm1, int64_t tm2)
{
  darshan_record& r = f.rec;
  bool read = op.kind == posix_kind::read;
  std::optional<int64_t> offset;
  if (op.offset >= 0) {
    offset = op.offset;
  } else {
    description& d = descs_[fd_of(op).desc];
    offset = d.pos;
    if (d.pos)
      d.pos = *d.pos + op.ret;
  }
  int64_t& last_byte = read ? f.last_byte_read : f.last_byte_written;
  if (offset) {
    int64_t off = *offset;
    if (off > last_byte)
      ++r.c[read ? c_seq_reads : c_seq_writes];
    if (off == last_byte + 1)
      ++r.c[read ? c_consec_reads : c_consec_writes];
    int64_t stride = off > 0 && off > last_byte && last_byte != 0 ? off - last_byte - 1 : 0;
    if (stride != 0)
      ++r.strides[stride];
    last_byte = off + op.ret - 1;
    int64_t& max_byte = r.c[read ? c_max_byte_read : c_max_byte_written];
    max_byte = std::max(max_byte, off + op.ret - 1);
  } else {
    ++r.unknown_offset_ops;
  }
  ++r.c[read ? c_reads : c_writes];
  r.c[read ? c_bytes_read : c_bytes_written] += op.ret;
  ++r.c[(read ? c_size_read_0 : c_size_write_0) + size_bin(op.ret)];
  if (op.ret != 0)
    ++r.access_sizes[op.ret];
  if (op.ret < small_io_bytes)
    ++r.ops_under_4k;
  if (f.last_io == (read ? 2 : 1))
    ++r.c[c_rw_switches];
  f.last_io = read ? 1 : 2;
  stamp(r, read ? t_read_start : t_write_start, read ? t_read_end : t_write_end, tm1, tm2);
  int64_t& slowest = r.t[read ? t_max_read_time : t_max_write_time];
  if (slowest < op.dur_us) {
    slowest = op.dur_us;
    r.c[read ? c_max_read_time_size : c_max_write_time_size] = op.ret;
  }
  add_time(r.t[read ? t_read_time : t_write_time], tm1, tm2, read ? f.last_read_end : f.last_write_end);
}

void process_replay::add_records_to(std::map<uint64_t, darshan_record>& out) const
{
  for (const auto& [fhash, f] : files_) out[fhash].merge(f.rec);
}

namespace {

auto call_order(const posix_op& op)
{
  return std::tie(op.ts_us, op.tid, op.id);
}

}  // namespace

void process_stream::push(const posix_op& op)
{
  queues[op.tid].push_back(op);
  if (++waiting > window)
    replay_next();
}

void process_stream::replay_next()
{
  std::deque<posix_op>* first = nullptr;
  for (auto& [tid, q] : queues)
    if (!q.empty() && (!first || call_order(q.front()) < call_order(first->front())))
      first = &q;
  if (!first)
    return;
  posix_op op = first->front();
  first->pop_front();
  --waiting;
  bool late = replayed_any && call_order(op) < call_order(last);
  replay.apply(op, late);
  if (!late)
    last = op;
  replayed_any = true;
}

void process_stream::flush()
{
  while (waiting > 0) replay_next();
  queues.clear();
}

std::map<uint64_t, darshan_record> process_stream::records() const
{
  process_stream copy = *this;
  copy.flush();
  std::map<uint64_t, darshan_record> out;
  copy.replay.add_records_to(out);
  return out;
}

std::optional<posix_kind> posix_kind_of(std::string_view name)
{
  using enum posix_kind;
  static const std::unordered_map<std::string_view, posix_kind> kinds = {
      {"open", open},       {"open64", open},       {"openat", open},
      {"openat64", open},   {"openat2", open},      {"creat", open},
      {"creat64", open},    {"__open_2", open},     {"dup", dup},
      {"dup2", dup},        {"dup3", dup},          {"fcntl", dup},
      {"close", close},     {"read", read},         {"readv", read},
      {"pread", read},      {"pread64", read},      {"preadv", read},
      {"preadv64", read},   {"preadv2", read},      {"write", write},
      {"writev", write},    {"pwrite", write},      {"pwrite64", write},
      {"pwritev", write},   {"pwritev64", write},   {"pwritev2", write},
      {"lseek", seek},      {"lseek64", seek},      {"stat", stat},
      {"stat64", stat},     {"lstat", stat},        {"lstat64", stat},
      {"fstat", stat},      {"fstat64", stat},      {"newfstatat", stat},
      {"fstatat", stat},    {"fstatat64", stat},    {"statx", stat},
      {"__xstat", stat},    {"__xstat64", stat},    {"__lxstat", stat},
      {"__lxstat64", stat}, {"__fxstat", stat},     {"__fxstat64", stat},
      {"__fxstatat", stat}, {"__fxstatat64", stat}, {"mmap", mmap},
      {"mmap64", mmap},     {"fsync", fsync},       {"fdatasync", fdatasync},
  };
  auto it = kinds.find(name);
  return it == kinds.end() ? std::nullopt : std::optional<posix_kind>(it->second);
}

}  // namespace dc::analyze
