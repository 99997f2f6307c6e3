/* The daemon's beacon: a process that calls datacrumbs_client_start (libdatacrumbs_client.so,
 * from its constructor) joins the traced set, if it runs as the user the probe file was signed
 * for. Its children join at fork (process.bpf.c), so a whole registered tree is traced. */
#include "common.bpf.h"
#include "task_record.bpf.h"

const volatile __u32 dc_register_uid = 0xffffffff; /* set before load: no one by default */

SEC("uprobe")
int dc_beacon_start(struct pt_regs* ctx)
{
  if ((__u32)bpf_get_current_uid_gid() != dc_register_uid)
    return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  __u32 tgid = task->tgid, state = DC_TRACE_ACTIVE;
  dc_traced_slot_add(tgid);
  if (bpf_map_update_elem(&dc_traced, &tgid, &state, BPF_ANY))
    return 0;
  /* Named like an exec: user space learns its command line and parent. */
  dc_emit_exec(task);
  dc_hold(NULL, tgid); /* stopped on its return to user space until its probes are attached */
  return 0;
}
