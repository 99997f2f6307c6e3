/* The kinds of loss the BPF programs count, shared between them and user space (included by
 * events.h). */
#ifndef DATACRUMBS_LOSS_KINDS_H
#define DATACRUMBS_LOSS_KINDS_H

/* Which counter of the loss map an event was lost from. The one list of loss kinds: the enum
 * below and the names user space reports ("lost_<name>", src/core/loss_counts.h) come from it.
 * The third column says whether the kind is summed into "events lost" (not_held counts processes
 * whose first calls may have been missed: no exact number of events, but never none to report)
 * or counts records that are no event. */
#define DC_LOSS_KIND_TABLE(X)                                                                           \
  X(RING_FULL, ring_full, 1)       /* an event's record found the ring full */                          \
  X(NO_STATE, no_state, 1)         /* a thread's, a block request's or a socket's state not made */     \
  X(TOO_DEEP, too_deep, 1)         /* a user-space call nested deeper than DC_NEST_MAX */               \
  X(PROFILE_FULL, profile_full, 1) /* profile mode: no room for a new counter in the profile map */     \
  X(NOT_HELD, not_held, 1)         /* a new process could not be held: its first uprobe calls missed */ \
  X(BLOCK_END_UNSEEN, block_end_unseen, 0) /* a traced block request ended without its completion       \
                                            * (or merge) running the program (its address started       \
                                            * another request while its state was still held,           \
                                            * bpf/block.bpf.c): counted then, with its bytes and no     \
                                            * time; no event is missing */                              \
  X(RECORD_RING_FULL, record_ring_full, 0) /* a record that is no event (a process's start or exit,     \
                                            * a file's or a call's path) found the ring full: no        \
                                            * event is missing, a name or a process fact is */          \
  X(GONE_UNSAID, gone_unsaid, 0) /* a process's end could not be told to the holder (its hold ring was  \
                                  * full): its user-space probe links wait for the holder's next sweep */

enum dc_loss_kind {
#define DC_LOSS_ENUM(kind, name, events) DC_LOSS_##kind,
  DC_LOSS_KIND_TABLE(DC_LOSS_ENUM)
#undef DC_LOSS_ENUM
      DC_LOSS_KINDS,
};

#endif
