/* libdatacrumbs_client.so: loaded into an application (LD_PRELOAD via datacrumbs_wrap, or as a
 * dependency via datacrumbs_track), it announces the process to a running datacrumbs daemon and
 * does nothing else. The daemon puts a uprobe on datacrumbs_client_start: one hit per process,
 * so the uprobe's cost does not matter. With no daemon running, the calls are empty functions. */
__attribute__((noinline, visibility("default"))) void datacrumbs_client_start(void)
{
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, visibility("default"))) void datacrumbs_client_stop(void)
{
  __asm__ volatile("" ::: "memory");
}

__attribute__((constructor)) static void datacrumbs_client_init(void)
{
  datacrumbs_client_start();
}

__attribute__((destructor)) static void datacrumbs_client_fini(void)
{
  datacrumbs_client_stop();
}
