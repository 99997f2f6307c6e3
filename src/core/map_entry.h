// Finding a string-keyed map entry by a string_view without building a std::string, and making
// it only when it is new: the per-event tallies look a layer or an operation up for every event.
#pragma once

#include <string>
#include <string_view>

namespace dc {

// The (key, value) entry of `key` in `map` (a std::map<std::string, T, std::less<>>), added
// with a value-initialised T when absent.
template <class Map>
typename Map::value_type& map_entry(Map& map, std::string_view key)
{
  auto it = map.find(key);
  if (it == map.end())
    it = map.emplace(std::string(key), typename Map::mapped_type{}).first;
  return *it;
}

}  // namespace dc
