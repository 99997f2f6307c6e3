// Signed probe files: what is signed comes back exactly, and anything else is refused.
#include <gtest/gtest.h>

#include <array>

#include "deploy/probe_file.h"

namespace dc {
namespace {

probe_file sample()
{
  probe_file p;
  p.uid = 1000;
  p.config_path = "/etc/datacrumbs/configs/stdio.yaml";
  p.kernel_layers = {"syscall", "block"};
  p.uprobes = {{"STDIO", "fwrite", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7a3f0},
               {"STDIO", "fclose", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x79b20}};
  p.uprobe_entries = {{"STDIO", "f(write|close)"}, {"HDF5", "H5D[a-z].*"}};
  p.profile_interval_ms = 250;
  return p;
}

const std::string secret = "0123456789abcdef0123456789abcdef";

TEST(ProbeFile, WhatIsSignedVerifiesAndComesBackExactly)
{
  auto bytes = sign_probe_file(sample(), secret);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(static_cast<unsigned char>((*bytes)[0]), 0x1f);  // gzip
  auto back = verify_probe_file(*bytes, secret);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->uid, 1000u);
  EXPECT_EQ(back->kernel_layers, sample().kernel_layers);
  ASSERT_EQ(back->uprobes.size(), 2u);
  EXPECT_EQ(back->uprobes[0].function, "fwrite");
  EXPECT_EQ(back->uprobes[0].offset, 0x7a3f0u);
  // The entries, for programs that define the functions themselves (a library linked in).
  ASSERT_EQ(back->uprobe_entries.size(), 2u);
  EXPECT_EQ(back->uprobe_entries[1].category, "HDF5");
  EXPECT_EQ(back->uprobe_entries[1].regex, "H5D[a-z].*");
  EXPECT_EQ(back->profile_interval_ms, 250u);
}

TEST(ProbeFile, AnotherSecretATamperedFileAndGarbageAreRefused)
{
  auto bytes = sign_probe_file(sample(), secret);
  ASSERT_TRUE(bytes);
  auto foreign = verify_probe_file(*bytes, "another secret, also 32 bytes ..");
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("signature"), std::string::npos);

  // The same file with one field changed (the uid, to trace someone else) and re-compressed.
  probe_file other = sample();
  other.uid = 0;
  auto forged = sign_probe_file(other, "attacker's own secret, 32 bytes.");
  ASSERT_TRUE(forged);
  EXPECT_FALSE(verify_probe_file(*forged, secret));

  std::string flipped = *bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  EXPECT_FALSE(verify_probe_file(flipped, secret));
  EXPECT_FALSE(verify_probe_file("{\"content\":{}}", secret));
  EXPECT_FALSE(verify_probe_file("", secret));
}

// Found by fuzzing (tests/fuzz/regressions/sign_request/): JSON gives a negative, fractional or
// too-large number as a float, and converting that to the uid or an offset was undefined. Every
// number field is a whole number in range, or the request is malformed.
TEST(ProbeFile, NumbersThatAreNotWholeAndInRangeAreMalformed)
{
  auto with = [](const std::string& uid, const std::string& offset, const std::string& interval) {
    return "{\"uid\":" + uid +
           ",\"config\":\"c\",\"kernel_layers\":[],\"uprobes\":[{\"category\":\"A\","
           "\"function\":\"f\",\"binary\":\"/b\",\"offset\":" +
           offset + "}],\"profile_interval_ms\":" + interval + "}";
  };
  auto ok = parse_probe_file_content(with("4294967294", "18446744073709551615", "3600000"));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->uid, 4294967294u);
  EXPECT_EQ(ok->uprobes.at(0).offset, UINT64_MAX);
  for (const auto& [uid, offset, interval] : std::initializer_list<std::array<std::string, 3>>{
           {"777777777777777777777777777777777777777777777777777777777709", "1", "0"},
           {"1e300", "1", "0"},
           {"-1", "1", "0"},
           {"4294967295", "1", "0"},
           {"1.5", "1", "0"},
           {"\"1000\"", "1", "0"},
           {"1", "-5.5", "0"},
           {"1", "18446744073709551616", "0"},
           {"1", "1", "1e30"},
           {"1", "1", "3600001"},
           {"1", "1", "5"}}) {
    auto refused = parse_probe_file_content(with(uid, offset, interval));
    ASSERT_FALSE(refused) << uid << " " << offset << " " << interval;
    EXPECT_NE(refused.error().message.find("malformed probe file"), std::string::npos);
  }
  EXPECT_FALSE(parse_probe_file_content("[1]"));
  EXPECT_FALSE(parse_probe_file_content("not json"));
}

}  // namespace
}  // namespace dc
