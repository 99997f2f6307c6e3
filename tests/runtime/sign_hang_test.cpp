// The signing service when a probed binary's open never returns (issue 15, security): a FUSE
// filesystem whose server never answers (/dev/fuse opened and mounted, never read, so the kernel
// waits for its INIT for good). The asking user's request is refused at its deadline, naming the
// path; the service serves others meanwhile and leaves no child behind. Figures:
// docs/reliability.md.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "deploy/signing_service.h"
#include "runtime/sign_service_fixture.h"

namespace dc::test {
namespace {

using clock_type = std::chrono::steady_clock;

// A FUSE mount that never answers, unmounted (lazily) and aborted at scope exit.
struct silent_fuse {
  std::string at;
  int fd = -1;
  bool mounted = false;
  explicit silent_fuse(const std::string& path) : at(path)
  {
    std::filesystem::create_directories(at);
    fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    std::string options = "fd=" + std::to_string(fd) + ",rootmode=40000,user_id=0,group_id=0,allow_other";
    mounted = fd >= 0 && mount("dc-silent", at.c_str(), "fuse", MS_NOSUID | MS_NODEV, options.c_str()) == 0;
  }
  ~silent_fuse()
  {
    if (mounted)
      umount2(at.c_str(), MNT_DETACH);
    if (fd >= 0)
      close(fd);  // aborts the connection: anything still waiting gets ENOTCONN
  }
};

TEST_F(sign_service_test, AnOpenThatNeverReturnsCostsOnlyItsOwnRequest)
{
  silent_fuse fuse(shared + "/fuse");
  ASSERT_TRUE(fuse.mounted) << "cannot mount a FUSE filesystem: " << std::strerror(errno);
  start_service();
  std::string hanging = fuse.at + "/lib.so";
  auto start = clock_type::now();
  client stuck = spawn_as(uid, gid, [&] {
    auto got = request_signature(socket, request_content(uid, hanging));
    return got ? std::string("signed") : got.error().message;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Meanwhile root, and the same user on another connection, are signed at once.
  for (uid_t who : {static_cast<uid_t>(0), uid}) {
    auto asked = clock_type::now();
    EXPECT_EQ(signed_uid_of(ask_as(who, gid, socket, request_content(0))), who);
    EXPECT_LT(std::chrono::duration<double>(clock_type::now() - asked).count(), 3.0) << "uid " << who;
  }
  std::string refused = result_of(stuck);
  double took = std::chrono::duration<double>(clock_type::now() - start).count();
  EXPECT_EQ(refused, "the signing service refused: cannot tell whether uid " + std::to_string(uid) +
                         " can read " + hanging + ": opening it did not return within 10 s");
  EXPECT_GE(took, 9.5);
  EXPECT_LT(took, 14.0);
  // The check's child was killed and reaped, not left waiting on the mount.
  EXPECT_EQ(read_file("/proc/" + std::to_string(service) + "/task/" + std::to_string(service) + "/children"),
            "");
  EXPECT_TRUE(stop_service()) << "the service died: " << read_file(dir / "sign.err");
  if (!HasFailure())
    std::printf(
        "figure: sign service: a probe on a file whose open never returns (silent FUSE) refused after %.1f "
        "s; "
        "root and the same user signed meanwhile\n",
        took);
}

}  // namespace
}  // namespace dc::test
