// MPI ranks from launcher environments: each launcher's variables, precedence, bad values.
#include <gtest/gtest.h>

#include <string>

#include "collect/mpi_rank.h"

namespace dc {
namespace {

mpi_rank from(std::initializer_list<std::string_view> vars)
{
  std::string block;
  for (auto v : vars) {
    block += v;
    block += '\0';
  }
  return mpi_rank_from_environ(block);
}

TEST(mpi_rank, EachLauncherGivesRankAndSize)
{
  auto expect = [](mpi_rank r, int rank, int size) {
    EXPECT_EQ(r.rank, rank);
    EXPECT_EQ(r.size, size);
  };
  expect(from({"PATH=/bin", "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8"}), 3, 8);
  expect(from({"PMIX_RANK=1", "PMIX_SIZE=4"}), 1, 4);
  expect(from({"PMI_SIZE=2", "PMI_RANK=0"}), 0, 2);
  expect(from({"SLURM_NTASKS=16", "SLURM_PROCID=15"}), 15, 16);
  expect(from({"FLUX_TASK_RANK=2", "FLUX_JOB_SIZE=5"}), 2, 5);
  expect(from({"SLURM_PROCID=4"}), 4, -1);
}

TEST(mpi_rank, TheMpiLauncherWinsOverTheSchedulerBelowIt)
{
  // mpirun inside a SLURM step of one task: the rank is Open MPI's, not SLURM's task 0.
  auto r = from({"SLURM_PROCID=0", "SLURM_NTASKS=1", "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=6"});
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.size, 6);
}

TEST(mpi_rank, NoLauncherOrBadValuesIsNoRank)
{
  for (auto r : {from({}), from({"HOME=/root", "XOMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_RANKX=2"}),
                 from({"PMI_RANK=", "SLURM_PROCID=-1", "FLUX_TASK_RANK=2x"})}) {
    EXPECT_EQ(r.rank, -1);
    EXPECT_EQ(r.size, -1);
  }
  EXPECT_EQ(mpi_rank_from_environ(std::string_view("PMI_RANK=7")).rank, 7) << "no trailing NUL";
}

}  // namespace
}  // namespace dc
