// Which MPI rank a process is: launchers put the rank and the job size in each rank's
// environment. Read from /proc/PID/environ when the process registers or execs (the environment
// as the process was started with; a process gone by then stays unlabelled).
#pragma once

#include <cstdint>
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

mpi_rank read_mpi_rank(uint32_t pid);

}  // namespace dc
