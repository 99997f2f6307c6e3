// Giving a file made beside another (a trace's index) the other's owner and permission bits.
#pragma once

#include <sys/stat.h>

namespace dc {

// Makes the file open at `fd` owned like `like` (when running as root) with `like`'s read and
// write bits. Only what differs is changed, and a mode the filesystem cannot set is let be when
// it grants no more than `like`'s: a filesystem without owners or modes (vfat: every file
// root's and 0700, chmod and chown not implemented) already gives the file what it gives `like`.
// 0, or the errno of the call that failed.
int match_owner_and_mode(int fd, const struct stat& like);

}  // namespace dc
