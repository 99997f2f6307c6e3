// Who gets a slot of the signing service when all are taken (deploy/sign_slots.h): the rule on
// its own, for the cases a runtime test cannot reach cheaply (128 uids holding one slot each).
#include "deploy/sign_slots.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace dc {
namespace {

// `per_uid[u]` silent connections of uid u, interleaved in accept order (u = 0, 1, ..., 0, 1, ...).
std::vector<slot_holder> interleaved(const std::vector<size_t>& per_uid)
{
  std::vector<slot_holder> held;
  for (size_t round = 0, added = 1; added != 0; ++round) {
    added = 0;
    for (uint32_t u = 0; u < per_uid.size(); ++u)
      if (round < per_uid[u]) {
        held.push_back({u, false});
        ++added;
      }
  }
  return held;
}

TEST(sign_slots, AUidHoldingNoneDisplacesTheBusiestUidsOldest)
{
  auto held = interleaved({32, 32, 32, 32});
  auto choice = choose_slot(held, 100);
  ASSERT_TRUE(choice.displace);
  EXPECT_EQ(*choice.displace, 0u);  // uid 0's first: the oldest of all four's
  EXPECT_EQ(choice.own, 0u);
  EXPECT_EQ(choice.most, 32u);
}

TEST(sign_slots, ASilentConnectionGoesBeforeOneWhoseRequestIsIn)
{
  auto held = interleaved({3, 2});
  held[0].request_read = true;  // uid 0's oldest: being checked or answered
  auto choice = choose_slot(held, 7);
  ASSERT_TRUE(choice.displace);
  EXPECT_EQ(*choice.displace, 2u);  // uid 0's second
  for (auto& h : held) h.request_read = true;
  EXPECT_EQ(choose_slot(held, 7).displace, 0u);  // none silent: the oldest
}

TEST(sign_slots, AUidWithinOneOfTheBusiestIsRefusedAndNeverDisplacesItself)
{
  // 31 against 32: displacing would only move the excess to another uid.
  auto held = interleaved({31, 32, 32, 32});
  auto refused = choose_slot(held, 0u);
  EXPECT_FALSE(refused.displace);
  EXPECT_EQ(refused.own, 31u);
  EXPECT_EQ(refused.most, 32u);
  EXPECT_FALSE(choose_slot(held, 3u).displace);  // one of the busiest itself
  // Two fewer: the busiest uid's oldest goes.
  auto two_fewer = interleaved({30, 32});
  auto choice = choose_slot(two_fewer, 0u);
  ASSERT_TRUE(choice.displace);
  EXPECT_EQ(two_fewer[*choice.displace].uid, 1u);
}

// Uids take the slots in turn, each displacing as the rule says, until none may: the counts end
// within one of each other, and every step displaced another uid's connection.
TEST(sign_slots, DisplacingEndsWithFairSharesAndNoLoop)
{
  auto held = interleaved({64, 64});
  std::map<uint32_t, size_t> count{{0, 64}, {1, 64}};
  size_t steps = 0;
  for (bool moved = true; moved && steps < 10000;) {
    moved = false;
    for (uint32_t u = 2; u < 6; ++u) {
      auto choice = choose_slot(held, u);
      if (!choice.displace)
        continue;
      ASSERT_NE(held[*choice.displace].uid, u);
      --count[*held[*choice.displace].uid];
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(*choice.displace));
      held.push_back({u, false});
      ++count[u];
      moved = true;
      ++steps;
    }
  }
  EXPECT_LT(steps, 10000u) << "the uids kept taking slots from each other";
  size_t least = 128, most = 0;
  for (const auto& [u, n] : count) {
    least = std::min(least, n);
    most = std::max(most, n);
  }
  EXPECT_LE(most - least, 1u) << "least " << least << ", most " << most;
}

// 128 uids with one slot each: a uid holding none still gets one (the oldest silent one goes),
// and a connection whose request is in goes only after every silent one.
TEST(sign_slots, AUidHoldingNoneGetsASlotWhenEveryUidHoldsOne)
{
  std::vector<size_t> ones(128, 1);
  auto held = interleaved(ones);
  held[0].request_read = true;  // the victim's, already read
  for (uint32_t newcomer = 1000; newcomer < 1127; ++newcomer) {
    auto choice = choose_slot(held, newcomer);
    ASSERT_TRUE(choice.displace);
    EXPECT_FALSE(held[*choice.displace].request_read) << "after " << newcomer - 1000 << " others";
    held.erase(held.begin() + static_cast<std::ptrdiff_t>(*choice.displace));
    held.push_back({newcomer, false});
  }
  EXPECT_TRUE(held[0].request_read) << "the read one was displaced while silent ones remained";
}

}  // namespace
}  // namespace dc
