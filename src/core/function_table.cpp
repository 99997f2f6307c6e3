#include "core/function_table.h"

#include <algorithm>

namespace dc {

namespace {

const std::vector<function_info>& table()
{
  using enum name_arg;
  static const std::vector<function_info> functions = {
      // stdio: the FILE* of each call is "stream", fopen's is its return value (analyze charges
      // calls to the file the stream was opened on).
      {"fopen", 0, file, {}},
      {"fopen64", 0, file, {}},
      {"freopen", 0, file, {{"stream", 2}}},
      {"freopen64", 0, file, {{"stream", 2}}},
      {"fdopen", -1, none, {{"fd", 0}}},
      {"fclose", -1, none, {{"stream", 0}}},
      {"fflush", -1, none, {{"stream", 0}}},
      {"fread", -1, none, {{"size", 1}, {"count", 2}, {"stream", 3}}, 1},
      {"fread_unlocked", -1, none, {{"size", 1}, {"count", 2}, {"stream", 3}}, 1},
      {"fwrite", -1, none, {{"size", 1}, {"count", 2}, {"stream", 3}}, 1},
      {"fwrite_unlocked", -1, none, {{"size", 1}, {"count", 2}, {"stream", 3}}, 1},
      {"fgets", -1, none, {{"count", 1}, {"stream", 2}}},
      {"fputs", -1, none, {{"stream", 1}}},
      {"fprintf", -1, none, {{"stream", 0}}},
      {"vfprintf", -1, none, {{"stream", 0}}},
      {"fscanf", -1, none, {{"stream", 0}}},
      {"vfscanf", -1, none, {{"stream", 0}}},
      {"getline", -1, none, {{"stream", 2}}},
      {"getdelim", -1, none, {{"stream", 3}}},
      {"fseek", -1, none, {{"stream", 0}, {"offset", 1}, {"whence", 2}}},
      {"fseeko", -1, none, {{"stream", 0}, {"offset", 1}, {"whence", 2}}},
      {"fseeko64", -1, none, {{"stream", 0}, {"offset", 1}, {"whence", 2}}},
      {"ftell", -1, none, {{"stream", 0}}},
      {"ftello", -1, none, {{"stream", 0}}},
      {"ftello64", -1, none, {{"stream", 0}}},
      {"rewind", -1, none, {{"stream", 0}}},
      {"fgetpos", -1, none, {{"stream", 0}}},
      {"fgetpos64", -1, none, {{"stream", 0}}},
      {"fsetpos", -1, none, {{"stream", 0}}},
      {"fsetpos64", -1, none, {{"stream", 0}}},
      {"setvbuf", -1, none, {{"stream", 0}, {"mode", 2}, {"size", 3}}},
      // MPI-IO: the file handle of each call is "fh"; MPI_File_open's is read through its
      // MPI_File* at return, MPI_File_close's at entry (close sets it to MPI_FILE_NULL).
      {"MPI_File_open", 1, file, {{"amode", 2}, {"fh", 4}}, -1, 4, deref::at_return},
      {"MPI_File_close", -1, none, {{"fh", 0}}, -1, 0, deref::at_entry},
      {"MPI_File_delete", 0, file, {}},
      {"MPI_File_read_at", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_read_at_all", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_write_at", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_write_at_all", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_iread_at", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_iread_at_all", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_iwrite_at", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_iwrite_at_all", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_read_at_all_begin", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_write_at_all_begin", -1, none, {{"fh", 0}, {"offset", 1}, {"count", 3}}},
      {"MPI_File_read", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_read_all", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_write", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_write_all", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_read_shared", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_write_shared", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_read_ordered", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_write_ordered", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_iread", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_iread_all", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_iwrite", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_iwrite_all", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_iread_shared", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_iwrite_shared", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_read_all_begin", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_write_all_begin", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_read_ordered_begin", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_write_ordered_begin", -1, none, {{"fh", 0}, {"count", 2}}},
      {"MPI_File_sync", -1, none, {{"fh", 0}}},
      {"MPI_File_set_view", -1, none, {{"fh", 0}, {"offset", 1}}},
      {"MPI_File_seek", -1, none, {{"fh", 0}, {"offset", 1}, {"whence", 2}}},
      {"MPI_File_set_size", -1, none, {{"fh", 0}, {"size", 1}}},
      // HDF5: hid_t identifiers. H5Fcreate/H5Fopen return the file's; datasets and groups are
      // created or opened in "loc_id" (a file or a group) and return their own.
      {"H5Fcreate", 0, file, {{"flags", 1}}},
      {"H5Fopen", 0, file, {{"flags", 1}}},
      {"H5Fclose", -1, none, {{"file_id", 0}}},
      {"H5Fflush", -1, none, {{"obj_id", 0}}},
      {"H5Dcreate2", 1, object, {{"loc_id", 0}}},
      {"H5Dopen2", 1, object, {{"loc_id", 0}}},
      {"H5Dcreate1", 1, object, {{"loc_id", 0}}},
      {"H5Dopen1", 1, object, {{"loc_id", 0}}},
      {"H5Dclose", -1, none, {{"dset_id", 0}}},
      {"H5Dflush", -1, none, {{"dset_id", 0}}},
      {"H5Gcreate2", 1, object, {{"loc_id", 0}}},
      {"H5Gopen2", 1, object, {{"loc_id", 0}}},
      {"H5Gclose", -1, none, {{"group_id", 0}}},
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
