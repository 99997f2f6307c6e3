/* The network layer (cat NET): bytes each socket of a traced process sends and receives (at the
 * socket layer, so read, write, send and recv calls and inlined paths alike), TCP state changes,
 * retransmits and drops. Events in softirq context are charged through the socket's owner,
 * remembered when a traced thread first used the socket. */
#include "common.bpf.h"

#define DC_AF_INET 2
#define DC_AF_INET6 10

struct dc_sock_owner {
  __u32 tgid;
  __u32 tid;
  __u64 epoch; /* the run's that remembered it (dc_net_epoch) */
};

/* This run's, set by user space before the layer attaches (never 0). Owners live with their
 * sockets, beyond a run: on an object kept for the next run (probe/object_keeper.h) an owner
 * remembered by an earlier run is not this run's, and is taken for no owner at all. */
__u64 dc_net_epoch = 0;

/* The socket's traced owner, stored with the socket: it goes when the socket does (an LRU keyed
 * by the socket's address made all its elements at start-up, ~17 ms, and could evict an owner
 * in use or hand one to a later socket at the same address). */
struct {
  __uint(type, BPF_MAP_TYPE_SK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct dc_sock_owner);
} dc_net_sock_owners SEC(".maps");

/* Local port -> the traced process listening on it. A connection's server-side socket is born
 * in softirq (SYN_RECV, then ESTABLISHED) before any call of its process touches it: it
 * belongs to the listener's process. (Keyed by port alone: listeners in other network
 * namespaces on the same port would share an entry.) */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 4096);
  __type(key, __u16);
  __type(value, struct dc_sock_owner);
} dc_net_listeners SEC(".maps");

/* The traced owner of a socket. `current_owns` says the current task is the socket's user
 * (send, recv, connect, listen: process context); otherwise (softirq work such as handshakes,
 * retransmits and drops, where current is whoever was interrupted, on loopback often the peer)
 * only an owner remembered from such a call counts, or, for a socket no call has touched yet,
 * the listener on its local port. */
static __always_inline int dc_owner_of(const struct sock* sk, int current_owns, struct dc_sock_owner* o)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  if (current_owns && dc_is_traced(pid_tgid >> 32)) {
    o->tgid = pid_tgid >> 32;
    o->tid = (__u32)pid_tgid;
    o->epoch = dc_net_epoch;
    struct dc_sock_owner* kept =
        bpf_sk_storage_get(&dc_net_sock_owners, (struct sock*)sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
    if (kept)
      *kept = *o;
    else
      dc_count_loss(DC_LOSS_NO_STATE); /* no memory: its softirq work would go uncharged */
    return 1;
  }
  struct dc_sock_owner* known = bpf_sk_storage_get(&dc_net_sock_owners, (struct sock*)sk, 0, 0);
  if (!known || known->epoch != dc_net_epoch) {
    __u16 lport = BPF_CORE_READ(sk, __sk_common.skc_num);
    struct dc_sock_owner* listener = bpf_map_lookup_elem(&dc_net_listeners, &lport);
    if (!listener)
      return 0;
    *o = *listener;
    /* Kept for the socket's later work; a time-wait socket has no storage (NULL), and its
     * events keep finding the listener. */
    known = bpf_sk_storage_get(&dc_net_sock_owners, (struct sock*)sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
    if (known)
      *known = *o;
    return 1;
  }
  *o = *known;
  return 1;
}

static __always_inline void dc_net_emit(const struct sock* sk, int current_owns, __u32 op, __s64 bytes,
                                        __u32 old_state, __u32 new_state, __u32 reason)
{
  struct dc_sock_owner o;
  if (!sk || !dc_owner_of(sk, current_owns, &o))
    return;
  if (dc_profiling()) {
    dc_profile_add(o.tgid, DC_PROF_NET, op, NULL, bpf_ktime_get_ns(), 0, bytes > 0 ? bytes : 0, 0);
    return;
  }
  struct dc_net_event* ev = bpf_ringbuf_reserve(&dc_events, sizeof(*ev), 0);
  if (!ev) {
    dc_count_loss(DC_LOSS_RING_FULL);
    return;
  }
  ev->hdr.kind = DC_REC_NET;
  ev->hdr.tgid = o.tgid;
  ev->hdr.tid = o.tid;
  ev->hdr.reserved = 0;
  ev->hdr.ts_ns = bpf_ktime_get_ns();
  ev->bytes = bytes;
  ev->op = op;
  ev->family = BPF_CORE_READ(sk, __sk_common.skc_family);
  ev->protocol = BPF_CORE_READ(sk, sk_protocol);
  ev->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
  ev->rport = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
  __builtin_memset(ev->laddr, 0, sizeof(ev->laddr));
  __builtin_memset(ev->raddr, 0, sizeof(ev->raddr));
  if (ev->family == DC_AF_INET6) {
    BPF_CORE_READ_INTO(&ev->laddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
    BPF_CORE_READ_INTO(&ev->raddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
  } else {
    __u32 l = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr), r = BPF_CORE_READ(sk, __sk_common.skc_daddr);
    __builtin_memcpy(ev->laddr, &l, 4);
    __builtin_memcpy(ev->raddr, &r, 4);
  }
  ev->old_state = old_state;
  ev->new_state = new_state;
  ev->reason = reason;
  /* In process context the event happens inside the owner's system call (send, recv, connect,
   * listen, close); softirq work sits under nothing of its owner's. */
  if (current_owns) {
    dc_nest_under_syscall(bpf_get_current_task_btf(), &ev->nest);
  } else {
    ev->nest.id = 0;
    ev->nest.parent = -1;
    ev->nest.level = 0;
    ev->nest.flags = 0;
  }
  bpf_ringbuf_submit(ev, dc_submit_flags());
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(dc_net_send, struct sock* sk, int ret, int flags)
{
  if (dc_is_traced(bpf_get_current_pid_tgid() >> 32))
    dc_net_emit(sk, 1, DC_NET_SEND, ret, 0, 0, 0);
  return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(dc_net_recv, struct sock* sk, int ret, int flags)
{
  if (dc_is_traced(bpf_get_current_pid_tgid() >> 32))
    dc_net_emit(sk, 1, DC_NET_RECV, ret, 0, 0, 0);
  return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(dc_net_state, const struct sock* sk, const int oldstate, const int newstate)
{
  /* connect() and listen() move a socket to SYN_SENT and LISTEN in the caller's context. */
  int current_owns = newstate == BPF_TCP_SYN_SENT || newstate == BPF_TCP_LISTEN;
  dc_net_emit(sk, current_owns, DC_NET_STATE, 0, oldstate, newstate, 0);
  __u16 lport = BPF_CORE_READ(sk, __sk_common.skc_num);
  if (newstate == BPF_TCP_LISTEN) {
    struct dc_sock_owner o;
    if (dc_owner_of(sk, 1, &o))
      bpf_map_update_elem(&dc_net_listeners, &lport, &o, BPF_ANY);
  } else if (oldstate == BPF_TCP_LISTEN) {
    bpf_map_delete_elem(&dc_net_listeners, &lport);
  }
  return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(dc_net_retransmit, const struct sock* sk, const struct sk_buff* skb)
{
  dc_net_emit(sk, 0, DC_NET_RETRANSMIT, 0, 0, 0, 0);
  return 0;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(dc_net_drop, struct sk_buff* skb, void* location, enum skb_drop_reason reason,
             struct sock* rx_sk)
{
  /* Freeing a consumed packet is not a drop. */
  if (reason == SKB_CONSUMED || reason == SKB_NOT_DROPPED_YET)
    return 0;
  struct sock* sk = rx_sk ? rx_sk : skb->sk;
  dc_net_emit(sk, 0, DC_NET_DROP, 0, 0, 0, reason);
  return 0;
}
