// What a signing-service client past its 10 s is told (deploy/sign_connection.h): the open is
// blamed only when the check waited on it; a check begun just before the deadline means the
// worker was busy with others' requests (as under sign_fair_test's large requests).
#include "deploy/sign_connection.h"

#include <gtest/gtest.h>

namespace dc {
namespace {

using namespace std::chrono_literals;

connection checking(std::chrono::steady_clock::time_point since)
{
  connection c;
  c.at = stage::checking;
  c.checking_since = since;
  c.probes.uid = 991;
  c.check.paths = {"/usr/lib/libc.so.6", "/usr/lib/libm.so.6"};
  uint64_t at_second = 1;  // the child reported the second path before opening it
  c.check.reported.assign(reinterpret_cast<const char*>(&at_second), sizeof(at_second));
  return c;
}

TEST(sign_expiry, ACheckWaitingOnAnOpenNamesThePathAndHowLong)
{
  auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(
      expiry_reason(checking(now - 9800ms), now, 10s),
      "ERR cannot tell whether uid 991 can read /usr/lib/libm.so.6: opening it did not return within 10 s\n");
  EXPECT_EQ(
      expiry_reason(checking(now - 4400ms), now, 10s),
      "ERR cannot tell whether uid 991 can read /usr/lib/libm.so.6: opening it did not return within 4 s\n");
}

TEST(sign_expiry, ACheckBegunJustBeforeTheDeadlineIsTheServiceBeingBusy)
{
  auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(expiry_reason(checking(now - 50ms), now, 10s),
            "ERR request not answered within 10 s: the service is busy, try again\n");
}

TEST(sign_expiry, EachOtherStageSaysWhatWasNotDone)
{
  auto now = std::chrono::steady_clock::now();
  connection c;
  for (stage at : {stage::queued, stage::working}) {
    c.at = at;
    EXPECT_EQ(expiry_reason(c, now, 10s),
              "ERR request not answered within 10 s: the service is busy, try again\n");
  }
  for (stage at : {stage::reading, stage::replying}) {
    c.at = at;
    EXPECT_EQ(expiry_reason(c, now, 10s), "ERR request not complete within 10 s\n");
  }
}

}  // namespace
}  // namespace dc
