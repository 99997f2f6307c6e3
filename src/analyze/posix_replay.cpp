#include "analyze/posix_replay.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace dc::analyze {

namespace {

constexpr int64_t o_append = 02000;
constexpr int64_t map_anonymous = 0x20;
constexpr int64_t small_io_bytes = 4096;

struct description {
  std::optional<int64_t> pos;  // the file position, when the trace establishes it
};

struct open_fd {
  uint64_t fhash;
  size_t desc;
};

// Darshan's per-file runtime state (posix_file_record_ref), one per file of the process.
struct file_state {
  darshan_record rec;
  int64_t last_byte_read = 0;
  int64_t last_byte_written = 0;
  int last_io = 0;  // 0 none, 1 read, 2 write
  int64_t last_read_end = 0, last_write_end = 0, last_meta_end = 0;
};

// The time of [tm1, tm2] not already counted since `last`: intervals are taken in start order,
// so this sums their union (Darshan's DARSHAN_TIMER_INC_NO_OVERLAP, clamped at zero).
void add_time(int64_t& timer, int64_t tm1, int64_t tm2, int64_t& last)
{
  int64_t from = std::max(tm1, last);
  if (tm2 > from)
    timer += tm2 - from;
  last = std::max(last, tm2);
}

void stamp(darshan_record& r, time_counter start, time_counter end, int64_t tm1, int64_t tm2)
{
  if (r.t[start] == 0 || r.t[start] > tm1)
    r.t[start] = tm1;
  r.t[end] = std::max(r.t[end], tm2);
}

class process_replay {
 public:
  explicit process_replay(std::map<uint64_t, darshan_record>& out) : out_(out) {}
  ~process_replay()
  {
    for (auto& [fhash, f] : files_) out_[fhash].merge(f.rec);
  }

  void apply(const posix_op& op)
  {
    if (op.fhash == 0 || (op.has_ret && op.ret < 0 && op.kind != posix_kind::close))
      return;
    file_state& f = files_[op.fhash];
    darshan_record& r = f.rec;
    int64_t tm1 = op.ts_us, tm2 = op.ts_us + op.dur_us;
    switch (op.kind) {
      case posix_kind::open:
        if (!op.has_ret)
          return;
        fds_[static_cast<int32_t>(op.ret)] = {
            op.fhash, new_desc(op.flags & o_append ? std::nullopt : std::optional<int64_t>(0))};
        f.last_byte_read = f.last_byte_written = 0;
        ++r.c[c_opens];
        stamp(r, t_open_start, t_open_end, tm1, tm2);
        add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
        return;
      case posix_kind::dup:
        if (!op.has_ret)
          return;
        fds_[static_cast<int32_t>(op.ret)] = {op.fhash, fd_of(op).desc};
        ++r.c[c_opens];
        ++r.c[c_dups];
        stamp(r, t_open_start, t_open_end, tm1, tm2);
        add_time(r.t[t_meta_time], tm1, tm2, f.last_meta_end);
        return;
      case posix_kind::close:
        fds_.erase(op.fd);
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

 private:
  size_t new_desc(std::optional<int64_t> pos)
  {
    descs_.push_back({pos});
    return descs_.size() - 1;
  }

  // The descriptor a call used; one the trace never saw opened (before tracing, inherited) or
  // saw opened on another file has an unknown position.
  open_fd& fd_of(const posix_op& op)
  {
    auto it = fds_.find(op.fd);
    if (it == fds_.end() || it->second.fhash != op.fhash)
      it = fds_.insert_or_assign(op.fd, open_fd{op.fhash, new_desc(std::nullopt)}).first;
    return it->second;
  }

  void data(const posix_op& op, file_state& f, int64_t tm1, int64_t tm2)
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

  std::map<uint64_t, darshan_record>& out_;
  std::unordered_map<uint64_t, file_state> files_;
  std::unordered_map<int32_t, open_fd> fds_;
  std::vector<description> descs_;
};

}  // namespace

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

void replay_process(std::vector<posix_op>& ops, std::map<uint64_t, darshan_record>& out)
{
  std::sort(ops.begin(), ops.end(), [](const posix_op& a, const posix_op& b) {
    return std::tie(a.ts_us, a.tid, a.id) < std::tie(b.ts_us, b.tid, b.id);
  });
  process_replay replay(out);
  for (const posix_op& op : ops) replay.apply(op);
}

}  // namespace dc::analyze
