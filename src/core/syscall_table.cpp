#include "core/syscall_table.h"

#include <sys/syscall.h>

#include <algorithm>

#include <vector>

namespace dc {

namespace {

constexpr int8_t none = DC_ARG_NONE;
constexpr int8_t ret_fd = DC_ARG_RET;
constexpr auto uns = arg_format::u64;
constexpr auto i32 = arg_format::i32;

// spec fields: traced, fd_a, fd_b, fd_at_entry, path_a, path_b, dirfd_a, dirfd_b, moves, offset_arg
// (the last two are filled from the entry's direction and "offset" argument by build_table)
constexpr dc_syscall_spec fd_call(int8_t fd)
{
  return {1, fd, none, 0, none, none, none, none, DC_MOVES_NONE, none};
}
constexpr dc_syscall_spec no_file()
{
  return {1, none, none, 0, none, none, none, none, DC_MOVES_NONE, none};
}
constexpr dc_syscall_spec path_call(int8_t path, int8_t dirfd = none)
{
  return {1, none, none, 0, path, none, dirfd, none, DC_MOVES_NONE, none};
}
constexpr dc_syscall_spec open_call(int8_t path, int8_t dirfd = none)
{
  return {1, ret_fd, none, 0, path, none, dirfd, none, DC_MOVES_NONE, none};
}
// A call that moves data between two files: read from `in`, written to `out` (DC_MOVES_COPY).
constexpr dc_syscall_spec copy_call(int8_t in, int8_t out)
{
  return {1, in, out, 0, none, none, none, none, DC_MOVES_COPY, none};
}
constexpr dc_syscall_spec two_paths(int8_t a, int8_t b, int8_t dirfd_a = none, int8_t dirfd_b = none)
{
  return {1, none, none, 0, a, b, dirfd_a, dirfd_b, DC_MOVES_NONE, none};
}

constexpr shown_arg fd0{"fd", 0, i32};

#define DC_SYSCALL(name, ...)      \
  syscall_info                     \
  {                                \
    SYS_##name, #name, __VA_ARGS__ \
  }

std::vector<syscall_info> build_table()
{
  std::vector<syscall_info> t = {
#ifdef SYS_open
      DC_SYSCALL(open, open_call(0), {{{"flags", 1}, {"mode", 2}}}, io_dir::none),
#endif
      DC_SYSCALL(openat, open_call(1, 0), {{{"dirfd", 0, i32}, {"flags", 2}, {"mode", 3}}}, io_dir::none),
      DC_SYSCALL(openat2, open_call(1, 0), {{{"dirfd", 0, i32}}}, io_dir::none),
#ifdef SYS_creat
      DC_SYSCALL(creat, open_call(0), {{{"mode", 1}}}, io_dir::none),
#endif
      DC_SYSCALL(close, {1, 0, none, 1, none, none, none, none, DC_MOVES_NONE, none}, {{fd0}}, io_dir::none),
      DC_SYSCALL(close_range, no_file(), {{{"fd", 0, i32}, {"max_fd", 1, uns}, {"flags", 2}}}, io_dir::none),
      DC_SYSCALL(read, fd_call(0), {{fd0, {"count", 2, uns}}}, io_dir::read),
      DC_SYSCALL(write, fd_call(0), {{fd0, {"count", 2, uns}}}, io_dir::write),
      DC_SYSCALL(pread64, fd_call(0), {{fd0, {"count", 2, uns}, {"offset", 3}}}, io_dir::read),
      DC_SYSCALL(pwrite64, fd_call(0), {{fd0, {"count", 2, uns}, {"offset", 3}}}, io_dir::write),
      DC_SYSCALL(readv, fd_call(0), {{fd0, {"iovcnt", 2}}}, io_dir::read),
      DC_SYSCALL(writev, fd_call(0), {{fd0, {"iovcnt", 2}}}, io_dir::write),
      DC_SYSCALL(preadv, fd_call(0), {{fd0, {"iovcnt", 2}, {"offset", 3}}}, io_dir::read),
      DC_SYSCALL(pwritev, fd_call(0), {{fd0, {"iovcnt", 2}, {"offset", 3}}}, io_dir::write),
      DC_SYSCALL(preadv2, fd_call(0), {{fd0, {"iovcnt", 2}, {"offset", 3}, {"flags", 5}}}, io_dir::read),
      DC_SYSCALL(pwritev2, fd_call(0), {{fd0, {"iovcnt", 2}, {"offset", 3}, {"flags", 5}}}, io_dir::write),
      DC_SYSCALL(lseek, fd_call(0), {{fd0, {"offset", 1}, {"whence", 2}}}, io_dir::none),
      DC_SYSCALL(fsync, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(fdatasync, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(sync, no_file(), {}, io_dir::none),
      DC_SYSCALL(syncfs, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(sync_file_range, fd_call(0), {{fd0, {"offset", 1}, {"count", 2}, {"flags", 3}}},
                 io_dir::none),
      DC_SYSCALL(fallocate, fd_call(0), {{fd0, {"mode", 1}, {"offset", 2}, {"length", 3}}}, io_dir::none),
      DC_SYSCALL(ftruncate, fd_call(0), {{fd0, {"length", 1}}}, io_dir::none),
      DC_SYSCALL(truncate, path_call(0), {{{"length", 1}}}, io_dir::none),
#ifdef SYS_stat
      DC_SYSCALL(stat, path_call(0), {}, io_dir::none),
      DC_SYSCALL(lstat, path_call(0), {}, io_dir::none),
#endif
      DC_SYSCALL(fstat, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(newfstatat, path_call(1, 0), {{{"dirfd", 0, i32}, {"flags", 3}}}, io_dir::none),
      DC_SYSCALL(statx, path_call(1, 0), {{{"dirfd", 0, i32}, {"flags", 2}, {"mask", 3, uns}}}, io_dir::none),
#ifdef SYS_access
      DC_SYSCALL(access, path_call(0), {{{"mode", 1}}}, io_dir::none),
#endif
      DC_SYSCALL(faccessat, path_call(1, 0), {{{"dirfd", 0, i32}, {"mode", 2}}}, io_dir::none),
      DC_SYSCALL(faccessat2, path_call(1, 0), {{{"dirfd", 0, i32}, {"mode", 2}, {"flags", 3}}}, io_dir::none),
#ifdef SYS_unlink
      DC_SYSCALL(unlink, path_call(0), {}, io_dir::none),
#endif
      DC_SYSCALL(unlinkat, path_call(1, 0), {{{"dirfd", 0, i32}, {"flags", 2}}}, io_dir::none),
#ifdef SYS_rename
      DC_SYSCALL(rename, two_paths(0, 1), {}, io_dir::none),
#endif
      DC_SYSCALL(renameat, two_paths(1, 3, 0, 2), {}, io_dir::none),
      DC_SYSCALL(renameat2, two_paths(1, 3, 0, 2), {{{"flags", 4}}}, io_dir::none),
#ifdef SYS_mkdir
      DC_SYSCALL(mkdir, path_call(0), {{{"mode", 1}}}, io_dir::none),
#endif
      DC_SYSCALL(mkdirat, path_call(1, 0), {{{"dirfd", 0, i32}, {"mode", 2}}}, io_dir::none),
#ifdef SYS_rmdir
      DC_SYSCALL(rmdir, path_call(0), {}, io_dir::none),
#endif
#ifdef SYS_readlink
      DC_SYSCALL(readlink, path_call(0), {{{"count", 2, uns}}}, io_dir::none),
#endif
      DC_SYSCALL(readlinkat, path_call(1, 0), {{{"dirfd", 0, i32}, {"count", 3, uns}}}, io_dir::none),
#ifdef SYS_link
      DC_SYSCALL(link, two_paths(0, 1), {}, io_dir::none),
      DC_SYSCALL(symlink, path_call(1), {}, io_dir::none),
#endif
      DC_SYSCALL(linkat, two_paths(1, 3, 0, 2), {{{"flags", 4}}}, io_dir::none),
      DC_SYSCALL(symlinkat, path_call(2, 1), {}, io_dir::none),
      DC_SYSCALL(chdir, path_call(0), {}, io_dir::none),
      DC_SYSCALL(fchdir, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(statfs, path_call(0), {}, io_dir::none),
      DC_SYSCALL(fstatfs, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(fadvise64, fd_call(0), {{fd0, {"offset", 1}, {"length", 2}, {"advice", 3}}}, io_dir::none),
      DC_SYSCALL(readahead, fd_call(0), {{fd0, {"offset", 1}, {"count", 2, uns}}}, io_dir::none),
#ifdef SYS_pipe
      DC_SYSCALL(pipe, no_file(), {}, io_dir::none),
#endif
      DC_SYSCALL(pipe2, no_file(), {{{"flags", 1}}}, io_dir::none),
      DC_SYSCALL(socket, {1, ret_fd, none, 0, none, none, none, none, DC_MOVES_NONE, none},
                 {{{"domain", 0}, {"type", 1}, {"protocol", 2}}}, io_dir::none),
      DC_SYSCALL(connect, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(bind, fd_call(0), {{fd0}}, io_dir::none),
      DC_SYSCALL(listen, fd_call(0), {{fd0, {"backlog", 1}}}, io_dir::none),
#ifdef SYS_accept
      DC_SYSCALL(accept, {1, ret_fd, none, 0, none, none, none, none, DC_MOVES_NONE, none}, {{fd0}},
                 io_dir::none),
#endif
      DC_SYSCALL(accept4, {1, ret_fd, none, 0, none, none, none, none, DC_MOVES_NONE, none},
                 {{fd0, {"flags", 3}}}, io_dir::none),
      DC_SYSCALL(setsockopt, fd_call(0), {{fd0, {"level", 1}, {"optname", 2}}}, io_dir::none),
      DC_SYSCALL(getsockopt, fd_call(0), {{fd0, {"level", 1}, {"optname", 2}}}, io_dir::none),
      DC_SYSCALL(epoll_create1, {1, ret_fd, none, 0, none, none, none, none, DC_MOVES_NONE, none},
                 {{{"flags", 0}}}, io_dir::none),
      DC_SYSCALL(epoll_ctl, fd_call(0), {{fd0, {"op", 1}, {"target_fd", 2, i32}}}, io_dir::none),
#ifdef SYS_epoll_wait
      DC_SYSCALL(epoll_wait, fd_call(0), {{fd0, {"maxevents", 2}, {"timeout", 3}}}, io_dir::none),
#endif
      DC_SYSCALL(epoll_pwait, fd_call(0), {{fd0, {"maxevents", 2}, {"timeout", 3}}}, io_dir::none),
      DC_SYSCALL(epoll_pwait2, fd_call(0), {{fd0, {"maxevents", 2}}}, io_dir::none),
#ifdef SYS_poll
      DC_SYSCALL(poll, no_file(), {{{"nfds", 1}, {"timeout", 2}}}, io_dir::none),
#endif
      DC_SYSCALL(ppoll, no_file(), {{{"nfds", 1}}}, io_dir::none),
#ifdef SYS_select
      DC_SYSCALL(select, no_file(), {{{"nfds", 0}}}, io_dir::none),
#endif
      DC_SYSCALL(pselect6, no_file(), {{{"nfds", 0}}}, io_dir::none),
      DC_SYSCALL(shutdown, fd_call(0), {{fd0, {"how", 1}}}, io_dir::none),
      DC_SYSCALL(getdents64, fd_call(0), {{fd0, {"count", 2, uns}}}, io_dir::none),
      DC_SYSCALL(mmap, fd_call(4), {{{"fd", 4, i32}, {"length", 1, uns}, {"prot", 2}, {"flags", 3}}},
                 io_dir::none),
      DC_SYSCALL(munmap, no_file(), {{{"length", 1, uns}}}, io_dir::none),
      DC_SYSCALL(msync, no_file(), {{{"length", 1, uns}, {"flags", 2}}}, io_dir::none),
      DC_SYSCALL(dup, fd_call(0), {{fd0}}, io_dir::none),
#ifdef SYS_dup2
      DC_SYSCALL(dup2, fd_call(0), {{fd0, {"newfd", 1, i32}}}, io_dir::none),
#endif
      DC_SYSCALL(dup3, fd_call(0), {{fd0, {"newfd", 1, i32}, {"flags", 2}}}, io_dir::none),
      DC_SYSCALL(fcntl, fd_call(0), {{fd0, {"cmd", 1}, {"arg", 2}}}, io_dir::none),
  // Two-file calls show their input as "fd" (and fhash) and their output as "out_fd" (and
  // fhash2), whatever the order of their arguments (sendfile's output comes first).
#ifdef SYS_sendfile
      DC_SYSCALL(sendfile, copy_call(1, 0), {{{"fd", 1, i32}, {"out_fd", 0, i32}, {"count", 3, uns}}},
                 io_dir::read),
#endif
      DC_SYSCALL(splice, copy_call(0, 2),
                 {{{"fd", 0, i32}, {"out_fd", 2, i32}, {"count", 4, uns}, {"flags", 5}}}, io_dir::read),
      DC_SYSCALL(tee, copy_call(0, 1),
                 {{{"fd", 0, i32}, {"out_fd", 1, i32}, {"count", 2, uns}, {"flags", 3}}}, io_dir::read),
      DC_SYSCALL(copy_file_range, copy_call(0, 2),
                 {{{"fd", 0, i32}, {"out_fd", 2, i32}, {"count", 4, uns}, {"flags", 5}}}, io_dir::read),
      // User memory into a pipe (a pipe's read end copies out instead: a pipe is never file data,
      // so only the call's own totals see its bytes either way).
      DC_SYSCALL(vmsplice, fd_call(0), {{fd0, {"iovcnt", 2}, {"flags", 3}}}, io_dir::write),
      DC_SYSCALL(io_uring_enter, fd_call(0), {{fd0, {"to_submit", 1}, {"min_complete", 2}, {"flags", 3}}},
                 io_dir::none),
      DC_SYSCALL(sendto, fd_call(0), {{fd0, {"count", 2, uns}, {"flags", 3}}}, io_dir::write),
      DC_SYSCALL(recvfrom, fd_call(0), {{fd0, {"count", 2, uns}, {"flags", 3}}}, io_dir::read),
      DC_SYSCALL(sendmsg, fd_call(0), {{fd0, {"flags", 2}}}, io_dir::write),
      DC_SYSCALL(recvmsg, fd_call(0), {{fd0, {"flags", 2}}}, io_dir::read),
      DC_SYSCALL(sendmmsg, fd_call(0), {{fd0, {"vlen", 2}, {"flags", 3}}}, io_dir::none),
      DC_SYSCALL(recvmmsg, fd_call(0), {{fd0, {"vlen", 2}, {"flags", 3}}}, io_dir::none),
  };
  // What profile mode needs besides files: which way bytes move (copies are set above), and
  // where the offset is.
  for (syscall_info& s : t) {
    if (s.spec.moves == DC_MOVES_NONE)
      s.spec.moves = s.dir == io_dir::read    ? DC_MOVES_READ
                     : s.dir == io_dir::write ? DC_MOVES_WRITE
                                              : DC_MOVES_NONE;
    for (const shown_arg& a : s.args)
      if (a.key == "offset")
        s.spec.offset_arg = a.index;
  }
  return t;
}

#undef DC_SYSCALL

const std::vector<syscall_info>& table()
{
  static const std::vector<syscall_info> t = build_table();
  return t;
}

const std::array<const syscall_info*, DC_MAX_SYSCALL_NR>& by_number()
{
  static const auto index = [] {
    std::array<const syscall_info*, DC_MAX_SYSCALL_NR> a{};
    for (const auto& s : table())
      if (s.nr >= 0 && s.nr < DC_MAX_SYSCALL_NR)
        a[s.nr] = &s;
    return a;
  }();
  return index;
}

}  // namespace

std::span<const syscall_info> traced_syscalls()
{
  return table();
}

const syscall_info* find_syscall(uint32_t nr)
{
  return nr < DC_MAX_SYSCALL_NR ? by_number()[nr] : nullptr;
}

const syscall_info* find_syscall(std::string_view name)
{
  auto all = traced_syscalls();
  auto it = std::ranges::find(all, name, &syscall_info::name);
  return it == all.end() ? nullptr : &*it;
}

}  // namespace dc
