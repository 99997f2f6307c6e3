// Output files are created before the command starts, so a bad path fails early and names
// itself; the summary is written to a temporary file beside its target and renamed into place,
// so it is never seen half written. Nothing follows a symlink at the last path component.
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

class pending_file {
 public:
  static result<pending_file> reserve(const std::string& path);
  pending_file(pending_file&&) noexcept;
  pending_file& operator=(pending_file&&) = delete;
  ~pending_file();  // removes the temporary file unless committed

  // Writes content to the temporary file and renames it over the target.
  result<> commit(const std::string& content);

 private:
  pending_file(std::string path, std::string temp, int fd)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd)
  {
  }
  std::string path_;
  std::string temp_;
  int fd_ = -1;
};

std::string default_trace_path(const std::string& command);

// The directory `relative` beneath `root` (which is followed as configured), made where missing
// (mode 0755), opened one part at a time without following a symlink: a link planted in the
// part of the tree below root (one a user can write to) is refused, not followed, and the
// directory returned is the one walked, whatever is renamed meanwhile. The caller closes it.
result<int> open_directory_beneath(const std::string& root, const std::string& relative);

}  // namespace dc
