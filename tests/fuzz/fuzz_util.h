// What the fuzz targets share: the input as text, split into fields, and a scratch directory
// where file readers get their input as a file (the parsers under test open paths).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dc::fuzz {

inline std::string text_of(const uint8_t* data, size_t size)
{
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input cut at each `separator` (a line of its own in the seed files).
inline std::vector<std::string> split(std::string_view text, std::string_view separator, size_t max_parts)
{
  std::vector<std::string> parts;
  while (parts.size() + 1 < max_parts) {
    size_t at = text.find(separator);
    if (at == std::string_view::npos)
      break;
    parts.emplace_back(text.substr(0, at));
    text.remove_prefix(at + separator.size());
  }
  parts.emplace_back(text);
  return parts;
}

// One directory per fuzzing process, made once and emptied by the OS (tmpfs) at its end.
inline const std::filesystem::path& scratch()
{
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dc-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch(), ec);
    });
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

inline std::string write_file(const std::string& name, std::string_view content)
{
  std::string path = (scratch() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f)
    std::abort();
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size())
    std::abort();
  std::fclose(f);
  return path;
}

// A property the target checks failed: a crash libFuzzer reports with the input.
[[noreturn]] inline void violated(const char* what)
{
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}

}  // namespace dc::fuzz
