// The signing service: root signs probe files for unprivileged users over a UNIX socket. The
// caller's uid comes from the kernel (SO_PEERCRED), never from the request; it is written into
// the signed content; and only probes on binaries that uid can read are signed.
//
// Protocol: the client sends a probe file's unsigned content (JSON) and shuts down its write
// side; the service answers "OK\n" followed by the signed file, or "ERR <reason>\n". A request
// over 16 MiB is refused as soon as it passes the limit; a connection gets 10 s from accept to
// the end of its reply (then "ERR request not complete within 10 s" if it can still be told);
// up to 128 clients are served at once; a uid with 32 connections open has any more refused at
// once. When all 128 are taken, a new client whose uid holds none (or two fewer than the busiest
// uid) takes the place of the busiest uid's oldest connection, which is told "ERR closed to make
// room for another user: ..." unless its reply is already going out; other new clients are told
// "ERR all 128 connections are taken and ...: try again" (sign_slots.h). Requests are parsed
// and signed one at a time, the next one of the uid that used that least lately (sign_turns.h);
// one still waiting at its deadline gets "ERR request not answered within 10 s: the service is
// busy, try again".
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

// Serves requests until SIGINT/SIGTERM (root).
result<> serve_signing(const std::string& socket_path, const std::string& secret);

// Asks the service to sign `content`; returns the signed file's bytes.
result<std::string> request_signature(const std::string& socket_path, const std::string& content);

}  // namespace dc
