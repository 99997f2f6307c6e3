// The HDF5 part of module_replay: files (H5F) and datasets (H5D) by their hid_t.
#include "analyze/module_replay.h"

#include <unordered_map>

namespace dc::analyze {

namespace {

enum class call : uint8_t {
  h5_file_open,
  h5_file_close,
  h5_flush,
  h5_group_open,
  h5_group_close,
  h5_dset_open,
  h5_dset_open_old,
  h5_dset_close,
  h5_dset_flush,
  h5_dset_read,
  h5_dset_write,
};

const std::unordered_map<std::string_view, call>& hdf5_calls()
{
  using enum call;
  static const std::unordered_map<std::string_view, call> m = {
      {"H5Fcreate", h5_file_open},      {"H5Fopen", h5_file_open},      {"H5Fclose", h5_file_close},
      {"H5Fflush", h5_flush},           {"H5Gcreate2", h5_group_open},  {"H5Gopen2", h5_group_open},
      {"H5Gclose", h5_group_close},     {"H5Dcreate2", h5_dset_open},   {"H5Dopen2", h5_dset_open},
      {"H5Dcreate1", h5_dset_open_old}, {"H5Dopen1", h5_dset_open_old}, {"H5Dclose", h5_dset_close},
      {"H5Dflush", h5_dset_flush},      {"H5Dread", h5_dset_read},      {"H5Dwrite", h5_dset_write},
  };
  return m;
}

// Bytes a stdio read or write moved, when the trace says: fread/fwrite return items (× size),
// the printf family and getline/getdelim return bytes; fgets, fputs and fscanf do not say.
std::string join(const std::string& parent, std::string_view name)
{
  if (name.starts_with("/"))
    return std::string(name);
  return parent + "/" + std::string(name);
}

}  // namespace

bool is_hdf5_call(std::string_view function)
{
  return hdf5_calls().contains(function);
}

std::optional<module_replay::h5_object> module_replay::h5_location(const record& r, const char* arg) const
{
  auto id = r.arg(arg);
  if (!id)
    return std::nullopt;
  auto it = h5_objects_.find(*id);
  return it == h5_objects_.end() ? std::nullopt : std::optional(it->second);
}

void module_replay::hdf5(const record& r, const nested_summary& below)
{
  using enum call;
  call kind = hdf5_calls().at(r.name);
  int64_t ret = r.arg("ret").value_or(-1);
  int64_t tm1 = r.ts_us, tm2 = r.ts_us + r.dur_us;
  bool dataset = kind == h5_dset_open || kind == h5_dset_open_old || kind == h5_dset_close ||
                 kind == h5_dset_flush || kind == h5_dset_read || kind == h5_dset_write;
  module_kind m = dataset ? module_kind::h5d : module_kind::h5f;
  auto unattributed = [&] { ++unattributed_[static_cast<size_t>(m)]; };
  auto meta = [&](file_state& f) { add_time(f.rec.t[t_meta_time], tm1, tm2, f.last_meta_end); };
  switch (kind) {
    case h5_file_open: {
      if (ret < 0)
        return;
      uint64_t fhash = r.fhash ? r.fhash : below.fhash;
      if (fhash == 0)
        return unattributed();
      h5_objects_[ret] = {fhash, ""};
      file_state& f = file(m, fhash);
      ++f.rec.c[c_opens];
      stamp(f.rec, t_open_start, t_open_end, tm1, tm2);
      return meta(f);
    }
    case h5_group_open:
    case h5_dset_open:
    case h5_dset_open_old: {
      if (ret < 0)
        return;
      auto loc = h5_location(r, "loc_id");
      if (!loc)
        return kind == h5_group_open ? void() : unattributed();
      h5_object obj{loc->fhash, join(loc->path, r.text("name"))};
      h5_objects_[ret] = obj;
      if (kind == h5_group_open)
        return;
      file_state& f = file(m, obj.fhash, obj.path);
      ++f.rec.c[c_opens];
      if (kind == h5_dset_open_old)
        f.rec.c[c_use_deprecated] = 1;
      stamp(f.rec, t_open_start, t_open_end, tm1, tm2);
      return meta(f);
    }
    case h5_group_close: h5_objects_.erase(r.arg("group_id").value_or(-1)); return;
    default: break;
  }
  // Calls on an open file or dataset.
  const char* id_arg = kind == h5_file_close ? "file_id" : kind == h5_flush ? "obj_id" : "dset_id";
  auto obj = h5_location(r, id_arg);
  if (!obj || (dataset && obj->path.empty()))
    return unattributed();
  file_state& f = file(m, obj->fhash, dataset ? obj->path : std::string());
  switch (kind) {
    case h5_file_close:
    case h5_dset_close:
      stamp(f.rec, t_close_start, t_close_end, tm1, tm2);
      meta(f);
      h5_objects_.erase(*r.arg(id_arg));
      return;
    case h5_flush:
    case h5_dset_flush:
      if (ret < 0)
        return;
      ++f.rec.c[c_flushes];
      return meta(f);
    case h5_dset_read:
    case h5_dset_write:
      if (ret < 0)
        return;
      ++f.rec.c[kind == h5_dset_read ? c_reads : c_writes];
      return data(f, kind == h5_dset_read, tm1, tm2, r.dur_us);
    default: return;
  }
}

}  // namespace dc::analyze
