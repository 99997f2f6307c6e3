#include "core/file_owner.h"

#include <unistd.h>

#include <cerrno>

namespace dc {

int match_owner_and_mode(int fd, const struct stat& like)
{
  struct stat mine {};
  bool known = ::fstat(fd, &mine) == 0;
  bool wider = !known || (mine.st_mode & 0777 & ~like.st_mode) != 0;
  bool other_mode = !known || (mine.st_mode & 0777) != (like.st_mode & 0666);
  bool other_owner = !known || mine.st_uid != like.st_uid || mine.st_gid != like.st_gid;
  if (other_mode && ::fchmod(fd, like.st_mode & 0666) != 0 && wider)
    return errno;
  if (geteuid() == 0 && other_owner && ::fchown(fd, like.st_uid, like.st_gid) != 0)
    return errno;
  return 0;
}

}  // namespace dc
