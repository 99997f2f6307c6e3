// Whose job the signing service's worker runs next (deploy/sign_turns.h): the uid that used it
// least lately, the oldest job among equals; use halves every 10 s and is then forgotten.
#include "deploy/sign_turns.h"

#include <gtest/gtest.h>

#include <vector>

namespace dc {
namespace {

using namespace std::chrono_literals;

TEST(sign_turns, AUidThatUsedTheWorkerLeastGoesFirst)
{
  turn_ledger turns;
  auto now = turn_ledger::clock::now();
  turns.charge(1, 1200ms, now);
  turns.charge(2, 900ms, now);
  turns.charge(3, 1ms, now);
  // Four large requests of uids 1 and 2 waiting before uid 3's small one, and one of uid 4 after.
  std::vector<uint32_t> waiting{1, 2, 1, 2, 3, 4};
  EXPECT_EQ(turns.next(waiting, now), 5u);  // uid 4: never used it
  waiting.pop_back();
  EXPECT_EQ(turns.next(waiting, now), 4u);  // uid 3: 1 ms
  waiting.pop_back();
  EXPECT_EQ(turns.next(waiting, now), 1u);  // uid 2's oldest
}

TEST(sign_turns, AmongEqualsTheOldestGoesFirst)
{
  turn_ledger turns;
  auto now = turn_ledger::clock::now();
  std::vector<uint32_t> waiting{7, 8, 7};
  EXPECT_EQ(turns.next(waiting, now), 0u);
  turns.charge(7, 500ms, now);
  turns.charge(8, 500ms, now);
  EXPECT_EQ(turns.next(waiting, now), 0u);
}

TEST(sign_turns, UseHalvesEvery10SecondsAndIsForgotten)
{
  turn_ledger turns;
  auto now = turn_ledger::clock::now();
  turns.charge(1, 2s, now);
  EXPECT_NEAR(turns.used(1, now + 10s), 1.0, 1e-9);
  EXPECT_NEAR(turns.used(1, now + 20s), 0.5, 1e-9);
  // A uid busy 30 s ago counts less than one busy now for a tenth of it.
  turns.charge(2, 300ms, now + 30s);
  std::vector<uint32_t> waiting{2, 1};
  EXPECT_EQ(turns.next(waiting, now + 30s), 1u);
  // Ten minutes on, uid 1 is gone from the ledger (charging anyone prunes it).
  turns.charge(3, 1ms, now + 600s);
  EXPECT_EQ(turns.uids(), 1u);
  EXPECT_EQ(turns.used(1, now + 600s), 0.0);
}

}  // namespace
}  // namespace dc
