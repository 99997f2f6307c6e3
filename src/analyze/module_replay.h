// Darshan's STDIO, MPIIO, H5F and H5D rules, replayed over one process's user-space calls (the
// uprobe layers' events: fopen/fwrite/fseek..., MPI_File_*, H5F*/H5D*/H5G*) in trace order. A
// call is charged to a file through the handle it names: the FILE* ("stream"), MPI_File ("fh")
// or hid_t ("dset_id", "file_id", "loc_id") that an open call of the same process returned for
// that file (docs/analyze.md, "STDIO, MPI-IO and HDF5"). A call whose handle was never seen
// opened (opened before tracing, or a trace without handles) is charged to the file of the
// POSIX calls nested beneath it, when there are any; else it is counted as unattributed.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analyze/darshan_record.h"
#include "analyze/record.h"

namespace dc::analyze {

enum class module_kind : uint8_t { stdio, mpiio, h5f, h5d };
constexpr size_t module_kinds = 4;
std::string_view module_name(module_kind m);  // "STDIO", "MPIIO", "H5F", "H5D"

// The module whose counters a user-space call feeds (by its function name, whatever the layer
// is called), or nothing.
std::optional<module_kind> module_of(std::string_view function);

// Whether the function is one of HDF5's that H5F or H5D counters come from.
bool is_hdf5_call(std::string_view function);

// A module's record: (module, file hash, object); object is the dataset's path for H5D.
using module_file_key = std::tuple<module_kind, uint64_t, std::string>;

// What the calls nested beneath one call did (their lines come before their parent's: a call
// is written when it returns), carried up to the parent.
struct nested_summary {
  struct file_bytes {
    uint64_t fhash = 0, read = 0, written = 0;
  };
  uint64_t fhash = 0;             // the file of the first POSIX call beneath that named one
  std::vector<file_bytes> bytes;  // POSIX data bytes beneath, at any depth, per file
  bool mpi_open = false;          // an MPI_File_open beneath (H5F_USE_MPIIO)
  bool mpi_collective = false;    // a collective MPI-IO read or write beneath

  void add(const nested_summary& o);
  void add_bytes(uint64_t file, uint64_t read, uint64_t written);
};

class module_replay {
 public:
  // Replays one call; `below` is what its nested calls that came first did (its file is the
  // fallback for a handle never seen opened). Returns the record it was charged to.
  std::optional<module_file_key> apply(module_kind m, const record& r, const nested_summary& below);
  // What calls nested beneath a call charged to `key` did: the POSIX bytes they moved, and
  // whether MPI-IO opened the file (H5F_USE_MPIIO) or moved a dataset collectively
  // (H5D_USE_MPIIO_COLLECTIVE).
  void credit(const module_file_key& key, const nested_summary& below);
  void add_records_to(std::map<module_file_key, darshan_record>& out) const;
  const std::array<uint64_t, module_kinds>& unattributed() const { return unattributed_; }

 private:
  struct file_state {
    darshan_record rec;
    int last_io = 0;  // 0 none, 1 read, 2 write
    int64_t last_read_end = 0, last_write_end = 0, last_meta_end = 0;
  };
  struct stream {
    uint64_t fhash = 0;
    std::optional<int64_t> pos;  // the stream's position, when the trace establishes it
  };
  struct h5_object {
    uint64_t fhash = 0;
    std::string path;  // a group's or dataset's path in the file; "" for the file itself
  };

  file_state& file(module_kind m, uint64_t fhash, const std::string& object = {});
  void stdio(const record& r, const nested_summary& below);
  void mpiio(const record& r, const nested_summary& below);
  void hdf5(const record& r, const nested_summary& below);
  std::optional<h5_object> h5_location(const record& r, const char* arg) const;
  void data(file_state& f, bool read, int64_t tm1, int64_t tm2, int64_t dur);

  std::map<module_file_key, file_state> files_;
  std::optional<module_file_key> charged_;             // the record the call being applied went to
  std::unordered_map<uint64_t, stream> streams_;       // FILE* -> its file and position
  std::unordered_map<uint64_t, uint64_t> mpi_files_;   // MPI_File -> fhash
  std::unordered_map<int64_t, h5_object> h5_objects_;  // hid_t of a file, group or dataset
  std::array<uint64_t, module_kinds> unattributed_{};
};

}  // namespace dc::analyze
