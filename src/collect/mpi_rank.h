// Which MPI rank a process is: launchers put the rank and the job size in each rank's
// environment. The kernel side copies the launcher variables at the exec or registration itself
// (bpf/task_record.bpf.h, dc_scan_rank_env) into the exec record, so a rank that is gone before
// user space reads the record keeps its label; this picks the rank out of them.
#pragma once

#include <string_view>

namespace dc {

struct mpi_rank {
  int rank = -1;  // -1: not an MPI rank (no launcher variable)
  int size = -1;  // -1: unknown
};

// From an environment block ("K=V\0K=V\0..."). The first launcher whose rank variable is set
// wins, with its own size variable: Open MPI (OMPI_COMM_WORLD_RANK/SIZE), PMIx (PMIX_RANK, size
// from OMPI_COMM_WORLD_SIZE or PMIX_SIZE), PMI (PMI_RANK/PMI_SIZE), SLURM (SLURM_PROCID/
// SLURM_NTASKS), Flux (FLUX_TASK_RANK/FLUX_JOB_SIZE). Non-numeric values are ignored.
mpi_rank mpi_rank_from_environ(std::string_view environ_block);

}  // namespace dc
