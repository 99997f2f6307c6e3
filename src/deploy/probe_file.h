// Signed probe files: a config resolved into the exact probes to attach (the kernel layers, and
// every user-space function with its binary and offset, and each uprobe entry's regex for the
// programs that link its library statically), stamped with the uid it was made for,
// serialised as gzip JSON and signed with HMAC-SHA256 under a root-only secret. The daemon
// attaches nothing from a file whose signature does not verify.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/probe_config.h"
#include "core/result.h"
#include "core/uprobe_target.h"

namespace dc {

struct probe_file {
  uint32_t uid = 0;  // whose processes the daemon may trace with it
  std::string config_path;
  std::vector<std::string> kernel_layers;
  std::vector<uprobe_target> uprobes;
  // The uprobe entries, matched in the objects a traced process maps itself (static copies).
  std::vector<uprobe_entry> uprobe_entries;
  uint64_t profile_interval_ms = 0;  // the config's profile mode; 0: trace mode
};

// Reads the secret; with `create`, makes it first (32 random bytes, root-owned, mode 0400) when it
// does not exist. Refuses a secret that is not a regular file owned by root and unreadable to
// others, naming the file and what is wrong. Marks the process non-dumpable first
// (PR_SET_DUMPABLE 0): whoever holds the secret leaves no core dump and no readable /proc memory.
result<std::string> load_secret(const std::string& path, bool create);

// Overwrites the secret's bytes (a holder done with it, such as the daemon once it verified).
void forget_secret(std::string& secret);

// The file's bytes: gzip of {"content": {...}, "signature": hex HMAC-SHA256 of content}.
result<std::string> sign_probe_file(const probe_file& probes, const std::string& secret);

// Parses and verifies; an unsigned, tampered or foreign-secret file is an error.
result<probe_file> verify_probe_file(const std::string& bytes, const std::string& secret);

// The unsigned content, as a client sends it to the signing service, and back.
std::string probe_file_content(const probe_file& probes);
result<probe_file> parse_probe_file_content(const std::string& text);

}  // namespace dc
