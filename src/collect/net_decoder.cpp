// Decoder of the network layer (cat NET): socket sends and receives with their endpoints, TCP
// state changes, retransmits and drops.
#include <arpa/inet.h>

#include "collect/decoder.h"
#include "core/category.h"

namespace dc {

layer_op net_op(uint32_t op)
{
  switch (op) {
    case DC_NET_SEND: return {"send", io_dir::write};
    case DC_NET_RECV: return {"recv", io_dir::read};
    case DC_NET_STATE: return {"state"};
    case DC_NET_RETRANSMIT: return {"retransmit"};
    case DC_NET_DROP: return {"drop"};
    default: return {"other"};
  }
}

namespace {

std::string_view tcp_state_name(uint32_t s)
{
  static constexpr std::string_view names[] = {
      "?",     "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",   "TIME_WAIT",
      "CLOSE", "CLOSE_WAIT",  "LAST_ACK", "LISTEN",   "CLOSING",   "NEW_SYN_RECV"};
  return s < std::size(names) ? names[s] : "?";
}

std::string address(uint16_t family, const uint8_t* addr)
{
  char buf[INET6_ADDRSTRLEN] = "";
  int af = family == AF_INET6 ? AF_INET6 : AF_INET;
  inet_ntop(af, addr, buf, sizeof(buf));
  return buf;
}

}  // namespace

void decoder::decode_net(const dc_net_event& raw)
{
  layer_op op = net_op(raw.op);
  trace_event ev = begin_event(op.name, category::net, raw.hdr, 0);
  place(ev, raw.nest, trace_event::parent_of::syscall);
  // Work done in softirq for the owner's socket: not inside any call of the owner's thread.
  if (ev.level == 0)
    ev.lane = lane_kind::network;
  if (raw.op == DC_NET_SEND || raw.op == DC_NET_RECV) {
    ev.add_arg("ret", raw.bytes);
    if (raw.bytes > 0) {
      ev.bytes = static_cast<uint64_t>(raw.bytes);
      ev.dir = op.dir;
    }
  }
  ev.add_arg("family", raw.family);
  ev.add_arg("protocol", raw.protocol);
  ev.add_arg("lport", raw.lport);
  ev.add_arg("rport", raw.rport);
  if (raw.op == DC_NET_STATE) {
    ev.add_fixed_text("old_state", tcp_state_name(raw.old_state));
    ev.add_fixed_text("new_state", tcp_state_name(raw.new_state));
  }
  if (raw.op == DC_NET_DROP)
    ev.add_arg("reason", raw.reason);
  ev.add_text("laddr", address(raw.family, raw.laddr));
  ev.add_text("raddr", address(raw.family, raw.raddr));
  emit(ev);
}

}  // namespace dc
