/* Parallel HDF5 over MPI-IO: every rank writes its block of one dataset with a collective
 * H5Dwrite (which becomes MPI_File_write_at_all, which becomes pwrite64 on the ranks that
 * aggregate). Each rank prints "rank R pid P" so a test can tell the processes apart.
 *
 * usage: mpirun -n 2 hdf5_mpi_app FILE ELEMENTS_PER_RANK */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3)
    MPI_Abort(MPI_COMM_WORLD, 2);
  hsize_t per_rank = (hsize_t)strtoull(argv[2], NULL, 10);
  printf("rank %d pid %d\n", rank, (int)getpid());
  fflush(stdout);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hsize_t total = per_rank * (hsize_t)size;
  hid_t space = H5Screate_simple(1, &total, NULL);
  hid_t dset = H5Dcreate2(file, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

  hsize_t start = per_rank * (hsize_t)rank;
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &per_rank, NULL);
  hid_t mem = H5Screate_simple(1, &per_rank, NULL);
  double* values = malloc(per_rank * sizeof(double));
  for (hsize_t i = 0; i < per_rank; i++) values[i] = (double)(start + i);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  herr_t status = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, values);

  H5Pclose(dxpl);
  H5Sclose(mem);
  H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
  free(values);
  MPI_Finalize();
  return status < 0 ? 1 : 0;
}
