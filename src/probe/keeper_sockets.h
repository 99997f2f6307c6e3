// Where this user's keepers (probe/object_keeper.h) listen, and how many stay. One abstract
// socket per kept configuration, `datacrumbs-keeper-<uid>-<hash of the object's name>`: a run asks
// the keeper of its own configuration in one connect, so a user who alternates configurations
// (trace mode and `--mode profile`, `--layers syscall` and every layer) keeps one object for
// each, not only the last one's. At most `most_keepers` stay per user: a kept object holds its
// maps, ~83 MiB with the default layers (the 64 MiB ring most of it), until its idle time ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dc {

inline constexpr size_t most_keepers = 4;

// What a run or another keeper asks a keeper: the object (followed by its name), to exit, or
// when it was started (its reply: "age NS", CLOCK_MONOTONIC).
inline constexpr std::string_view take_request = "take\n", quit_request = "quit\n", age_request = "age\n";

// The abstract name (no leading NUL) of this user's keeper of objects named `key`.
std::string keeper_name(std::string_view key);

// A socket connected to the keeper listening on `name` and checked to be this user's, with
// `timeout_ms` on its sends and receives; -1 when there is none.
int connect_keeper(std::string_view name, int timeout_ms = 2000);

// Whether the peer of a connected socket is this user.
bool peer_is_this_user(int sock);

// Sets a socket's send and receive timeouts.
void set_timeout(int sock, int ms);

// A socket bound to `name` and listening; the keeper on it before is told to go first and given
// ~200 ms to. -1 when the name stays taken.
int listen_as_keeper(std::string_view name);

// The names of this user's keepers listening now (/proc/net/unix), but `except`.
std::vector<std::string> keepers_listening(std::string_view except);

// Makes room for the keeper on `own`: while this user has most_keepers or more, the one started
// longest ago (the configuration used least recently) is told to go. Returns how many were.
size_t make_room_for(std::string_view own);

}  // namespace dc
