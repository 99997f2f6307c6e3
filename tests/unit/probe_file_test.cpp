// Signed probe files: what is signed comes back exactly, and anything else is refused.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dc
