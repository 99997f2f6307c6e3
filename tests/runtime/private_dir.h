// A temporary directory only this user can write (mode 0755), as the BTF cache and the refusal
// memory require of theirs (probe/core_btf.h); removed at the end of the test.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

namespace dc::test {

struct private_dir {
  std::string path;
  explicit private_dir(const std::string& stem)
  {
    std::string templ = "/tmp/" + stem + ".XXXXXX";
    path = mkdtemp(templ.data());
    chmod(path.c_str(), 0755);
  }
  ~private_dir() { std::filesystem::remove_all(path); }
  private_dir(const private_dir&) = delete;
  private_dir& operator=(const private_dir&) = delete;
};

}  // namespace dc::test
