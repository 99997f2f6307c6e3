// A whole file's bytes, for the small files the tools read at once (/proc and /sys texts, probe
// files, the daemon's live frames).
#pragma once

#include <optional>
#include <string>

namespace dc {

// The file's contents, or nullopt when it cannot be opened (absent, gone, not readable).
std::optional<std::string> read_file_text(const std::string& path);

}  // namespace dc
