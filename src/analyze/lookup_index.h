// A hash index of pointers into a section's ordered maps (whose nodes never move), so the hot
// path finds a layer, operation or process without walking the maps. A copy or move of the
// section starts with an empty index: the pointers belong to the original's maps.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace dc::analyze {

template <class Key, class Value, class Hash>
struct lookup_index {
  std::unordered_map<Key, Value, Hash> map;

  lookup_index() = default;
  lookup_index(const lookup_index&) {}
  lookup_index(lookup_index&&) noexcept {}
  lookup_index& operator=(const lookup_index&)
  {
    map.clear();
    return *this;
  }
  lookup_index& operator=(lookup_index&&) noexcept
  {
    map.clear();
    return *this;
  }
};

struct key_hash {
  size_t operator()(std::string_view a) const { return std::hash<std::string_view>()(a); }
  size_t operator()(const std::pair<std::string_view, std::string_view>& k) const
  {
    return std::hash<std::string_view>()(k.first) * 31 + std::hash<std::string_view>()(k.second);
  }
  size_t operator()(const std::pair<uint64_t, uint64_t>& k) const
  {
    return k.first * 0x9e3779b97f4a7c15ULL ^ k.second;
  }
  size_t operator()(const std::tuple<uint64_t, uint64_t, std::string_view>& k) const
  {
    return (std::get<0>(k) * 0x9e3779b97f4a7c15ULL ^ std::get<1>(k)) * 31 +
           std::hash<std::string_view>()(std::get<2>(k));
  }
};

}  // namespace dc::analyze
