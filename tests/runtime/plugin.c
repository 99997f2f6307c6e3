/* A library loaded at run time with dlopen, the way MPI and HDF5 load their plugins. */
__attribute__((noinline, visibility("default"))) int dc_plugin_work(int x)
{
  __asm__ volatile("" : "+r"(x));
  return x * 2;
}
