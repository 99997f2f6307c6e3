#include "core/function_table.h"

#include <algorithm>

namespace dc {

namespace {

const std::vector<function_info>& table()
{
  using enum name_arg;
  static const std::vector<function_info> functions = {
      // stdio
      {"fopen", 0, file, {}},
      {"fopen64", 0, file, {}},
      {"freopen", 0, file, {}},
      {"freopen64", 0, file, {}},
      {"fdopen", -1, none, {{"fd", 0}}},
      {"fread", -1, none, {{"size", 1}, {"count", 2}}, 1},
      {"fread_unlocked", -1, none, {{"size", 1}, {"count", 2}}, 1},
      {"fwrite", -1, none, {{"size", 1}, {"count", 2}}, 1},
      {"fwrite_unlocked", -1, none, {{"size", 1}, {"count", 2}}, 1},
      {"fgets", -1, none, {{"count", 1}}},
      {"fseek", -1, none, {{"offset", 1}, {"whence", 2}}},
      {"fseeko", -1, none, {{"offset", 1}, {"whence", 2}}},
      {"fseeko64", -1, none, {{"offset", 1}, {"whence", 2}}},
      {"setvbuf", -1, none, {{"mode", 2}, {"size", 3}}},
      // MPI-IO
      {"MPI_File_open", 1, file, {{"amode", 2}}},
      {"MPI_File_delete", 0, file, {}},
      {"MPI_File_read_at", -1, none, {{"offset", 1}, {"count", 3}}},
      {"MPI_File_read_at_all", -1, none, {{"offset", 1}, {"count", 3}}},
      {"MPI_File_write_at", -1, none, {{"offset", 1}, {"count", 3}}},
      {"MPI_File_write_at_all", -1, none, {{"offset", 1}, {"count", 3}}},
      {"MPI_File_read", -1, none, {{"count", 2}}},
      {"MPI_File_read_all", -1, none, {{"count", 2}}},
      {"MPI_File_write", -1, none, {{"count", 2}}},
      {"MPI_File_write_all", -1, none, {{"count", 2}}},
      {"MPI_File_seek", -1, none, {{"offset", 1}, {"whence", 2}}},
      {"MPI_File_set_size", -1, none, {{"size", 1}}},
      // HDF5
      {"H5Fcreate", 0, file, {{"flags", 1}}},
      {"H5Fopen", 0, file, {{"flags", 1}}},
      {"H5Dcreate2", 1, object, {}},
      {"H5Dopen2", 1, object, {}},
      {"H5Gcreate2", 1, object, {}},
      {"H5Gopen2", 1, object, {}},
      {"H5Acreate2", 1, object, {}},
      {"H5Aopen", 1, object, {}},
      {"H5Oopen", 1, object, {}},
      {"H5Dwrite", -1, none, {{"dset_id", 0}}},
      {"H5Dread", -1, none, {{"dset_id", 0}}},
  };
  return functions;
}

}  // namespace

const function_info* find_function(std::string_view name)
{
  const auto& t = table();
  auto it = std::ranges::find(t, name, &function_info::name);
  return it == t.end() ? nullptr : &*it;
}

}  // namespace dc
