#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "collect/record_batch.h"

namespace dc {
namespace {

// What decode_batch() reads: [u32 size][u32 0][record, padded to 8], record after record.
struct framed {
  uint32_t size;
  std::string record;
};

std::vector<framed> unframe(std::string_view bytes)
{
  std::vector<framed> out;
  for (size_t at = 0; at < bytes.size();) {
    uint32_t head[2];
    std::memcpy(head, bytes.data() + at, sizeof(head));
    EXPECT_EQ(head[1], 0u);
    out.push_back({head[0], std::string(bytes.substr(at + 8, head[0]))});
    at += 8 + ((head[0] + 7) & ~7u);
  }
  return out;
}

TEST(RecordBatch, RecordsAreFramedAndPaddedAsTheDecoderReadsThem)
{
  record_batch b;
  EXPECT_TRUE(b.empty());
  ASSERT_TRUE(b.append("abc", 3));
  ASSERT_TRUE(b.append("12345678", 8));
  EXPECT_EQ(b.bytes().size(), 8u + 8u + 8u + 8u);
  auto got = unframe(b.bytes());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].size, 3u);
  EXPECT_EQ(got[0].record, "abc");
  EXPECT_EQ(got[1].record, "12345678");
  EXPECT_EQ(b.bytes()[8 + 3], '\0');  // the padding is zero, not what the memory held before
  b.clear();
  EXPECT_TRUE(b.empty());
  ASSERT_TRUE(b.append("x", 1));
  EXPECT_EQ(unframe(b.bytes()).at(0).record, "x");
}

// A batch is full at fill_bytes; a record larger than the whole mapping still fits (it grows),
// and moving a batch moves its records.
TEST(RecordBatch, FillsAtFillBytesAndGrowsForAnyRecord)
{
  record_batch b;
  std::string record(1000, 'r');
  size_t n = 0;
  while (!b.full()) {
    ASSERT_TRUE(b.append(record.data(), record.size()));
    ++n;
  }
  EXPECT_EQ(n, (record_batch::fill_bytes + 1007) / 1008);
  std::string big(3 * record_batch::fill_bytes, 'B');
  ASSERT_TRUE(b.append(big.data(), big.size()));
  record_batch moved = std::move(b);
  EXPECT_TRUE(b.empty());
  auto got = unframe(moved.bytes());
  ASSERT_EQ(got.size(), n + 1);
  EXPECT_EQ(got.front().record, record);
  EXPECT_EQ(got.back().record, big);
}

}  // namespace
}  // namespace dc
