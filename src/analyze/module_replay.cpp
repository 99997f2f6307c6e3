#include "analyze/module_replay.h"

#include <unordered_map>

namespace dc::analyze {

namespace {

enum class call : uint8_t {
  open,
  fdopen,
  reopen,
  close,
  close_all,
  flush,
  write,
  read,
  seek,
  seek_start,
  set_pos,
  tell,
};

// stdio calls, with how many bytes a read or write moved when the trace can say (below).
const std::unordered_map<std::string_view, call>& stdio_calls()
{
  using enum call;
  static const std::unordered_map<std::string_view, call> m = {
      {"fopen", open},          {"fopen64", open},
      {"freopen", reopen},      {"freopen64", reopen},
      {"fdopen", fdopen},       {"fclose", close},
      {"fcloseall", close_all}, {"fflush", flush},
      {"fwrite", write},        {"fwrite_unlocked", write},
      {"fputs", write},         {"fprintf", write},
      {"vfprintf", write},      {"printf", write},
      {"vprintf", write},       {"fread", read},
      {"fread_unlocked", read}, {"fgets", read},
      {"fscanf", read},         {"vfscanf", read},
      {"getline", read},        {"getdelim", read},
      {"fseek", seek},          {"fseeko", seek},
      {"fseeko64", seek},       {"rewind", seek_start},
      {"fsetpos", set_pos},     {"fsetpos64", set_pos},
      {"ftell", tell},          {"ftello", tell},
      {"ftello64", tell},
  };
  return m;
}

std::optional<int64_t> stdio_bytes(const record& r, int64_t ret)
{
  std::string_view n = r.name;
  if (n.starts_with("fread") || n.starts_with("fwrite"))
    return ret * r.arg("size").value_or(0);
  if (n.ends_with("printf") || n == "getline" || n == "getdelim")
    return ret;
  return std::nullopt;
}

// Whether a stdio call succeeded as Darshan counts it (fwrite/fread: something moved).
bool stdio_counted(const record& r, int64_t ret)
{
  std::string_view n = r.name;
  if (n == "fgets")
    return ret != 0;  // a pointer; NULL at end of file or error
  if (n.ends_with("scanf") || n == "fputs")
    return ret >= 0;
  return ret > 0;
}

}  // namespace

std::string_view module_name(module_kind m)
{
  static constexpr std::string_view names[] = {"STDIO", "MPIIO", "H5F", "H5D"};
  return names[static_cast<size_t>(m)];
}

std::optional<module_kind> module_of(std::string_view function)
{
  if (function.starts_with("MPI_File_"))
    return module_kind::mpiio;
  if (function.starts_with("H5"))
    return is_hdf5_call(function) ? std::optional(module_kind::h5f) : std::nullopt;  // H5F or H5D
  return stdio_calls().contains(function) ? std::optional(module_kind::stdio) : std::nullopt;
}

void nested_summary::add_bytes(uint64_t file, uint64_t read, uint64_t written)
{
  for (file_bytes& b : bytes)
    if (b.fhash == file) {
      b.read += read;
      b.written += written;
      return;
    }
  bytes.push_back({file, read, written});
}

void nested_summary::add(const nested_summary& o)
{
  if (fhash == 0)
    fhash = o.fhash;
  for (const file_bytes& b : o.bytes) add_bytes(b.fhash, b.read, b.written);
  mpi_open = mpi_open || o.mpi_open;
  mpi_collective = mpi_collective || o.mpi_collective;
}

module_replay::file_state& module_replay::file(module_kind m, uint64_t fhash, const std::string& object)
{
  charged_ = module_file_key{m, fhash, object};
  return files_[*charged_];
}

std::optional<module_file_key> module_replay::apply(module_kind m, const record& r,
                                                    const nested_summary& below)
{
  charged_.reset();
  if (m == module_kind::stdio)
    stdio(r, below);
  else if (m == module_kind::mpiio)
    mpiio(r, below);
  else
    hdf5(r, below);
  return charged_;
}

void module_replay::credit(const module_file_key& key, const nested_summary& below)
{
  auto it = files_.find(key);
  if (it == files_.end())
    return;
  darshan_record& r = it->second.rec;
  for (const nested_summary::file_bytes& b : below.bytes)
    if (b.fhash == std::get<1>(key)) {  // the record's own file (not a lock or shared-memory file)
      r.c[c_posix_bytes_read] += static_cast<int64_t>(b.read);
      r.c[c_posix_bytes_written] += static_cast<int64_t>(b.written);
    }
  if (std::get<0>(key) == module_kind::h5f && below.mpi_open)
    r.c[c_use_mpiio] = 1;
  if (std::get<0>(key) == module_kind::h5d && below.mpi_collective)
    r.c[c_use_mpiio_collective] = 1;
}

void module_replay::data(file_state& f, bool read, int64_t tm1, int64_t tm2, int64_t dur)
{
  darshan_record& r = f.rec;
  if (f.last_io == (read ? 2 : 1))
    ++r.c[c_rw_switches];
  f.last_io = read ? 1 : 2;
  stamp(r, read ? t_read_start : t_write_start, read ? t_read_end : t_write_end, tm1, tm2);
  add_time(r.t[read ? t_read_time : t_write_time], tm1, tm2, read ? f.last_read_end : f.last_write_end);
  int64_t& slowest = r.t[read ? t_max_read_time : t_max_write_time];
  slowest = std::max(slowest, dur);
}

void module_replay::stdio(const record& r, const nested_summary& below)
{
  using enum call;
  call kind = stdio_calls().at(r.name);
  int64_t ret = r.arg("ret").value_or(0);
  int64_t tm1 = r.ts_us, tm2 = r.ts_us + r.dur_us;
  uint64_t sp = static_cast<uint64_t>(r.arg("stream").value_or(0));
  if (kind == open || kind == reopen || kind == fdopen) {
    if (kind == reopen)
      streams_.erase(sp);
    if (ret == 0)
      return;                                          // NULL: it failed
    uint64_t fhash = r.fhash ? r.fhash : below.fhash;  // fdopen: the fcntl glibc makes beneath
    if (fhash == 0) {
      ++unattributed_[static_cast<size_t>(module_kind::stdio)];
      return;
    }
    // fopen's stream starts at 0 (as Darshan has it, "a" mode included); fdopen's descriptor
    // may be anywhere.
    streams_[static_cast<uint64_t>(ret)] = {fhash, kind == fdopen ? std::nullopt : std::optional<int64_t>(0)};
    file_state& f = file(module_kind::stdio, fhash);
    ++f.rec.c[c_opens];
    if (kind == fdopen)
      ++f.rec.c[c_fdopens];
    stamp(f.rec, t_open_start, t_open_end, tm1, tm2);
    add_time(f.rec.t[t_meta_time], tm1, tm2, f.last_meta_end);
    return;
  }
  if (kind == close_all) {
    streams_.clear();
    return;
  }
  if (kind == flush && sp == 0)
    return;  // fflush(NULL): every stream, none in particular (Darshan counts none)
  // The stream's file: from its open, else from the calls beneath (then remembered).
  stream local, *s = nullptr;
  if (auto it = streams_.find(sp); sp != 0 && it != streams_.end())
    s = &it->second;
  else if (below.fhash != 0)
    s = sp != 0 ? &(streams_[sp] = {below.fhash, std::nullopt}) : &(local = {below.fhash, std::nullopt});
  if (!s) {
    if (kind != tell)
      ++unattributed_[static_cast<size_t>(module_kind::stdio)];
    return;
  }
  file_state& f = file(module_kind::stdio, s->fhash);
  darshan_record& rec = f.rec;
  switch (kind) {
    case close:
      stamp(rec, t_close_start, t_close_end, tm1, tm2);
      add_time(rec.t[t_meta_time], tm1, tm2, f.last_meta_end);
      streams_.erase(sp);
      return;
    case tell:
      if (ret >= 0)
        s->pos = ret;
      return;
    case seek:
    case seek_start:
    case set_pos:
      if (kind != seek_start && ret != 0)
        return;
      ++rec.c[c_seeks];
      add_time(rec.t[t_meta_time], tm1, tm2, f.last_meta_end);
      if (kind == seek_start) {
        s->pos = 0;
      } else if (kind == seek) {
        int64_t offset = r.arg("offset").value_or(0), whence = r.arg("whence").value_or(-1);
        if (whence == 0)
          s->pos = offset;
        else if (whence == 1 && s->pos)
          s->pos = *s->pos + offset;
        else
          s->pos.reset();  // SEEK_END: the file's size is not in the trace
      } else {
        s->pos.reset();  // fsetpos: an fpos_t the trace does not hold
      }
      return;
    case flush:
    case write:
    case read: {
      if (kind == flush ? ret < 0 : !stdio_counted(r, ret))
        return;
      bool reading = kind == read;
      std::optional<int64_t> bytes = kind == flush ? std::optional<int64_t>(0) : stdio_bytes(r, ret);
      if (kind == flush)
        ++rec.c[c_flushes];
      else
        ++rec.c[reading ? c_reads : c_writes];
      if (bytes)
        rec.c[reading ? c_bytes_read : c_bytes_written] += *bytes;
      if (bytes && s->pos) {
        int64_t& max_byte = rec.c[reading ? c_max_byte_read : c_max_byte_written];
        max_byte = std::max(max_byte, *s->pos + *bytes - 1);
        s->pos = *s->pos + *bytes;
      } else {
        ++rec.unknown_offset_ops;
        s->pos.reset();
      }
      stamp(rec, reading ? t_read_start : t_write_start, reading ? t_read_end : t_write_end, tm1, tm2);
      add_time(rec.t[reading ? t_read_time : t_write_time], tm1, tm2,
               reading ? f.last_read_end : f.last_write_end);
      return;
    }
    default: return;
  }
}

void module_replay::mpiio(const record& r, const nested_summary& below)
{
  std::string_view op = r.name.substr(9);  // after "MPI_File_"
  int64_t ret = r.arg("ret").value_or(-1);
  int64_t tm1 = r.ts_us, tm2 = r.ts_us + r.dur_us;
  auto fh = r.arg("fh");
  auto unattributed = [&] { ++unattributed_[static_cast<size_t>(module_kind::mpiio)]; };
  if (op == "open") {
    if (ret != 0)
      return;
    uint64_t fhash = r.fhash ? r.fhash : below.fhash;
    if (fhash == 0)
      return unattributed();
    if (fh)
      mpi_files_[static_cast<uint64_t>(*fh)] = fhash;
    file_state& f = file(module_kind::mpiio, fhash);
    ++f.rec.c[c_opens];  // independent or collective: by the job's size, in the report
    f.rec.c[c_mode] = std::max(f.rec.c[c_mode], r.arg("amode").value_or(0));
    stamp(f.rec, t_open_start, t_open_end, tm1, tm2);
    add_time(f.rec.t[t_meta_time], tm1, tm2, f.last_meta_end);
    return;
  }
  bool reading = op.starts_with("read") || op.starts_with("iread");
  bool writing = op.starts_with("write") || op.starts_with("iwrite");
  bool counted =
      op == "close" || op == "sync" || op == "set_view" || ((reading || writing) && !op.ends_with("_end"));
  if (!counted)
    return;  // seek, set_size, get_size, *_end, ...: no Darshan counter
  uint64_t fhash = 0;
  if (auto it = fh ? mpi_files_.find(static_cast<uint64_t>(*fh)) : mpi_files_.end(); it != mpi_files_.end())
    fhash = it->second;
  else if (below.fhash != 0)
    fhash = below.fhash;
  if (fhash == 0)
    return unattributed();
  file_state& f = file(module_kind::mpiio, fhash);
  darshan_record& rec = f.rec;
  if (op == "close") {
    stamp(rec, t_close_start, t_close_end, tm1, tm2);
    add_time(rec.t[t_meta_time], tm1, tm2, f.last_meta_end);
    if (fh)
      mpi_files_.erase(static_cast<uint64_t>(*fh));
    return;
  }
  if (ret != 0)
    return;
  if (op == "sync") {
    ++rec.c[c_fsyncs];
    add_time(rec.t[t_write_time], tm1, tm2, f.last_write_end);
    return;
  }
  if (op == "set_view") {
    ++rec.c[c_views];
    add_time(rec.t[t_meta_time], tm1, tm2, f.last_meta_end);
    return;
  }
  // Darshan's classes: nonblocking (i...), split collective (..._begin), collective (..._all,
  // ..._ordered), else independent (read, read_at, read_shared, and the writes).
  counter c;
  if (op.starts_with("i"))
    c = reading ? c_nb_reads : c_nb_writes;
  else if (op.ends_with("_begin"))
    c = reading ? c_split_reads : c_split_writes;
  else if (op.find("_all") != std::string_view::npos || op.find("ordered") != std::string_view::npos)
    c = reading ? c_coll_reads : c_coll_writes;
  else
    c = reading ? c_reads : c_writes;
  ++rec.c[c];
  rec.c[reading ? c_elements_read : c_elements_written] += std::max<int64_t>(0, r.arg("count").value_or(0));
  data(f, reading, tm1, tm2, r.dur_us);
}

void module_replay::add_records_to(std::map<module_file_key, darshan_record>& out) const
{
  for (const auto& [key, f] : files_) out[key].merge(f.rec);
}

}  // namespace dc::analyze
