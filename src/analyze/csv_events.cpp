#include "analyze/csv_events.h"

#include <algorithm>
#include <vector>

#include "core/category.h"

namespace dc::analyze {

namespace {

// One event table: the args (numeric, then text) that have columns of their own. Every row
// starts with the common columns and ends with file[, file2], id, parent, other_args.
struct table_def {
  std::string_view name;
  std::vector<std::string_view> numbers;
  std::vector<std::string_view> texts;
  bool file2 = false;
};

enum table_index : size_t {
  fs,
  ds,
  cache,
  nw,
  nw_conn,
  nw_epoll,
  nw_sockopt,
  nw_drop,
  pagefault,
  syscall,
  user,
  profile
};

const std::array<table_def, event_tables::count>& table_defs()
{
  static const std::array<table_def, event_tables::count> defs = {{
      {"fs",
       {"ret", "offset", "count", "first_page", "last_page", "len", "size", "dev", "transaction", "blocks"},
       {}},
      {"ds", {"bytes", "sector", "major", "minor", "queue_us", "writeback", "error", "end_unseen"}, {}},
      {"cache",
       {"hits", "misses", "pages_read", "pages_added", "pages_dirtied", "pages_written_back",
        "pages_evicted"},
       {}},
      {"nw", {"ret", "family", "protocol", "lport", "rport"}, {"laddr", "raddr"}},
      {"nw_conn",
       {"fd", "ret", "domain", "type", "protocol", "backlog", "how", "family", "lport", "rport"},
       {"old_state", "new_state", "laddr", "raddr"}},
      {"nw_epoll", {"fd", "ret", "nfds", "maxevents", "timeout", "op"}, {}},
      {"nw_sockopt", {"fd", "ret", "level", "optname"}, {}},
      {"nw_drop", {"family", "protocol", "lport", "rport", "reason"}, {"laddr", "raddr"}},
      {"pagefault",
       {"address", "write", "index", "around_first", "around_last", "pages_mapped", "pages_read", "major",
        "minor", "in_kernel"},
       {}},
      {"syscall", {"fd", "ret", "count", "offset", "length", "flags", "mode", "whence"}, {}, true},
      {"user", {"ret", "fd", "count", "size", "offset", "whence", "flags"}, {"name", "mode"}},
      {"profile", {"count", "time_us", "bytes", "pages", "end_unseen"}, {}, true},
  }};
  return defs;
}

constexpr std::string_view common_columns[] = {"ts_us", "dur_us", "host", "pid", "tid", "cat", "name"};

bool one_of(std::string_view name, std::initializer_list<std::string_view> names)
{
  return std::find(names.begin(), names.end(), name) != names.end();
}

// An arg named like a common column (a user event's object "name") is headed arg_<key>.
std::vector<std::string> header_of(const table_def& t)
{
  std::vector<std::string> h(std::begin(common_columns), std::end(common_columns));
  size_t common = h.size();
  for (const auto* keys : {&t.numbers, &t.texts})
    for (std::string_view key : *keys)
      h.push_back(std::find(h.begin(), h.begin() + common, key) != h.begin() + common
                      ? "arg_" + std::string(key)
                      : std::string(key));
  h.push_back("file");
  if (t.file2)
    h.push_back("file2");
  for (const char* c : {"id", "parent", "other_args"}) h.push_back(c);
  return h;
}

std::string stem_of(std::string_view path)
{
  std::string_view base =
      path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
  for (std::string_view ext : {".pfw.gz", ".pfw", ".gz"})
    if (base.size() > ext.size() && base.ends_with(ext)) {
      base.remove_suffix(ext.size());
      break;
    }
  return std::string(base);
}

}  // namespace

std::string_view table_name(size_t i)
{
  return table_defs().at(i).name;
}

event_tables tables_of(const record& r)
{
  event_tables t;
  if (r.cat == "PAGECACHE" && r.name == "page_cache" && (r.ph == phase::metadata || r.ph == phase::counter)) {
    t.in[cache] = true;  // run totals: a metadata line (a counter sample in older traces)
    return t;
  }
  if (r.ph == phase::metadata || r.ph == phase::other || r.cat == "dftracer")
    return t;
  if (r.ph == phase::counter) {
    t.in[r.cat == category::pagecache ? cache : profile] = true;
    return t;
  }
  if (r.cat == category::posix) {
    t.in[syscall] = true;
    if (one_of(r.name,
               {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "shutdown"}))
      t.in[nw_conn] = true;
    else if (one_of(r.name, {"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
                             "epoll_pwait2", "poll", "ppoll", "select", "pselect6"}))
      t.in[nw_epoll] = true;
    else if (one_of(r.name, {"setsockopt", "getsockopt"}))
      t.in[nw_sockopt] = true;
  } else if (r.cat == category::fs) {
    t.in[fs] = true;
  } else if (r.cat == category::block) {
    t.in[ds] = true;
  } else if (r.cat == category::fault) {
    t.in[pagefault] = true;
  } else if (r.cat == category::net) {
    t.in[r.name == "state" ? nw_conn : one_of(r.name, {"retransmit", "drop"}) ? nw_drop : nw] = true;
  } else {
    t.in[user] = true;  // STDIO, MPI, HDF5 and every other traced library
  }
  return t;
}

void event_csv_writer::begin_file(std::string_view trace_path)
{
  std::string stem = stem_of(trace_path);
  stem_ = stem;
  for (int n = 2; !stems_used_.insert(stem_).second; ++n) stem_ = stem + "-" + std::to_string(n);
}

void event_csv_writer::add(const record& r)
{
  event_tables t = tables_of(r);
  for (size_t i = 0; i < event_tables::count; ++i)
    if (t.in[i])
      write_row(i, r);
}

void event_csv_writer::write_name(csv_file& out, const std::unordered_map<uint64_t, std::string>& map,
                                  uint64_t hash)
{
  if (hash == 0) {
    out.empty_field();
    return;
  }
  if (auto it = map.find(hash); it != map.end()) {
    out.field(it->second);
    return;
  }
  ++unresolved_;
  out.field("<unknown:" + std::to_string(hash) + ">");
}

void event_csv_writer::write_row(size_t table, const record& r)
{
  const table_def& def = table_defs()[table];
  std::optional<csv_file>& out = open_[table];
  if (!out) {
    if (error_)
      return;
    std::string name(def.name);
    std::vector<std::string> header = header_of(def);
    auto created = csv_file::create(dir_ + "/" + name + "/" + name + "_" + stem_ + ".csv",
                                    std::vector<std::string_view>(header.begin(), header.end()));
    if (!created) {
      error_ = created.error();
      return;
    }
    out.emplace(std::move(*created));
  }
  csv_file& f = *out;
  f.field(r.ts_us);
  f.field(r.dur_us);
  write_name(f, names_.hosts, r.hhash);
  f.field(r.pid);
  f.field(r.tid);
  f.field(r.cat);
  f.field(r.name);
  other_.clear();
  auto note_other = [&](std::string_view key, auto value) {
    if (!other_.empty())
      other_.push_back(' ');
    other_.append(key);
    other_.push_back('=');
    if constexpr (std::is_same_v<decltype(value), int64_t>)
      other_.append(std::to_string(value));
    else
      other_.append(value);
  };
  std::optional<uint64_t> fhash2;
  for (std::string_view key : def.numbers)
    if (auto v = r.arg(key))
      f.field(*v);
    else
      f.empty_field();
  for (std::string_view key : def.texts) f.field(r.text(key));
  for (const record_arg& a : r.args) {
    if (a.key == "fhash2" && def.file2)
      fhash2 = static_cast<uint64_t>(a.value);
    else if (std::find(def.numbers.begin(), def.numbers.end(), a.key) == def.numbers.end())
      note_other(a.key, a.value);
  }
  for (const record_text& t : r.texts)
    if (std::find(def.texts.begin(), def.texts.end(), t.key) == def.texts.end() && !r.arg(t.key))
      note_other(t.key, t.value);
  write_name(f, names_.files, r.fhash);
  if (def.file2)
    write_name(f, names_.files, fhash2.value_or(0));
  if (r.id >= 0)
    f.field(r.id);
  else
    f.empty_field();
  if (r.p_idx >= 0)
    f.field(r.p_idx);
  else
    f.empty_field();
  f.field(other_);
  f.end_row();
  ++rows_[table];
}

std::map<std::string, uint64_t> event_csv_writer::rows() const
{
  std::map<std::string, uint64_t> by_name;
  for (size_t i = 0; i < event_tables::count; ++i)
    if (rows_[i])
      by_name[std::string(table_name(i))] = rows_[i];
  return by_name;
}

dc::result<> event_csv_writer::end_file()
{
  for (std::optional<csv_file>& out : open_) {
    if (out)
      if (auto closed = out->close(); !closed && !error_)
        error_ = closed.error();
    out.reset();
  }
  if (error_) {
    dc::error e = *error_;
    error_.reset();
    return std::unexpected(e);
  }
  return {};
}

}  // namespace dc::analyze
