// A hash index of pointers into a section's ordered maps (whose nodes never move), so the hot
// path finds a layer, operation or process without walking the maps. A copy or move of the
// section starts with an empty index: the pointers belong to the original's maps.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "analyze/record.h"

namespace dc::analyze {

// Key equality for the recent entries (names compared inline: see same_text).
inline bool same_key(std::string_view a, std::string_view b)
{
  return same_text(a, b);
}
inline bool same_key(uint64_t a, uint64_t b)
{
  return a == b;
}
template <class A, class B>
bool same_key(const std::pair<A, B>& a, const std::pair<A, B>& b)
{
  return same_key(a.first, b.first) && same_key(a.second, b.second);
}
template <class A, class B, class C>
bool same_key(const std::tuple<A, B, C>& a, const std::tuple<A, B, C>& b)
{
  return same_key(std::get<0>(a), std::get<0>(b)) && same_key(std::get<1>(a), std::get<1>(b)) &&
         same_key(std::get<2>(a), std::get<2>(b));
}

template <class Key, class Value, class Hash>
struct lookup_index {
  std::unordered_map<Key, Value, Hash> map;
  // The entries found last: lines repeat a few keys in turn (a call, the filesystem call under
  // it, ...), and comparing beats hashing. Values of an unordered_map stay where they are when
  // it grows.
  static constexpr size_t recent_size = 4;
  struct recent_entry {
    Key key{};
    Value* value = nullptr;
  };
  std::array<recent_entry, recent_size> recent{};
  size_t next_recent = 0;

  lookup_index() = default;
  lookup_index(const lookup_index&) {}
  lookup_index(lookup_index&&) noexcept {}
  lookup_index& operator=(const lookup_index&)
  {
    map.clear();
    recent = {};
    return *this;
  }
  lookup_index& operator=(lookup_index&&) noexcept
  {
    map.clear();
    recent = {};
    return *this;
  }

  // The value of key, or nullptr.
  Value* find(const Key& key)
  {
    for (const recent_entry& e : recent)
      if (e.value && same_key(e.key, key))
        return e.value;
    auto it = map.find(key);
    return it == map.end() ? nullptr : remember(it->first, it->second);
  }
  // Adds key (absent) with its value; the key must live as long as the index (a view into the
  // section's own map).
  Value& add(const Key& key, Value value)
  {
    auto it = map.emplace(key, std::move(value)).first;
    return *remember(it->first, it->second);
  }

 private:
  Value* remember(const Key& key, Value& value)
  {
    recent[next_recent] = {key, &value};
    next_recent = (next_recent + 1) % recent_size;
    return &value;
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
