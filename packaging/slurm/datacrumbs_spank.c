/* DataCrumbs SPANK plugin (plugstack.conf: `optional PATH/datacrumbs_spank.so [run_dir=DIR]
 * [client=LIB]`).
 *
 * srun/sbatch/salloc: registers --datacrumbs-probe-file=FILE (trace this job with that signed
 * probe file, no JSON comment needed) and --datacrumbs=no (do not trace it, whatever its comment
 * says); both reach the prolog in its job control environment as SPANK_DATACRUMBS_*.
 * Tasks: in a job whose daemon is ready on this node (the prolog started it), each task gets
 * libdatacrumbs_client.so in LD_PRELOAD; in a job that asked but is not traced, task 0 prints
 * why (the prolog's reason file) on its stderr, into the job's output. Other jobs are untouched.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(datacrumbs, 1);

static char run_dir[PATH_MAX] = "/run/datacrumbs";
static char client_lib[PATH_MAX] = DATACRUMBS_CLIENT_LIB;
static char probe_file[PATH_MAX];
static int disabled;

static int take_probe_file(int val, const char* arg, int remote)
{
  (void)val;
  (void)remote;
  if (!arg || !*arg || strlen(arg) >= sizeof probe_file) {
    slurm_error("datacrumbs: --datacrumbs-probe-file needs a file name");
    return -1;
  }
  strcpy(probe_file, arg);
  return 0;
}

static int take_enable(int val, const char* arg, int remote)
{
  (void)val;
  (void)remote;
  if (arg && strcmp(arg, "no") == 0)
    disabled = 1;
  else if (!arg || strcmp(arg, "yes") != 0) {
    slurm_error("datacrumbs: --datacrumbs takes 'no' (or 'yes'), not '%s'", arg ? arg : "");
    return -1;
  }
  return 0;
}

static struct spank_option options[] = {
    {"datacrumbs-probe-file", "FILE", "Trace this job with DataCrumbs, using this signed probe file", 1, 0,
     take_probe_file},
    {"datacrumbs", "no", "'no': do not trace this job with DataCrumbs, whatever its comment asks", 1, 0,
     take_enable},
    SPANK_OPTIONS_TABLE_END};

static int set_arg(const char* arg, const char* key, char* into, size_t size)
{
  size_t n = strlen(key);
  if (strncmp(arg, key, n) != 0 || arg[n] != '=')
    return 0;
  if (strlen(arg + n + 1) >= size)
    return 0;
  strcpy(into, arg + n + 1);
  return 1;
}

int slurm_spank_init(spank_t sp, int ac, char** av)
{
  for (int i = 0; i < ac; ++i)
    if (!set_arg(av[i], "run_dir", run_dir, sizeof run_dir) &&
        !set_arg(av[i], "client", client_lib, sizeof client_lib))
      slurm_error("datacrumbs: unknown plugin argument '%s' (run_dir=DIR, client=LIB)", av[i]);
  for (struct spank_option* o = options; o->name; ++o)
    if (spank_option_register(sp, o) != ESPANK_SUCCESS)
      slurm_error("datacrumbs: cannot register --%s", o->name);
  return 0;
}

/* Before the allocation exists: the options go into the job control environment the prolog
 * and epilog see. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char** av)
{
  (void)ac;
  (void)av;
  spank_context_t ctx = spank_context();
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR)
    return 0;
  if (disabled)
    return spank_job_control_setenv(sp, "DATACRUMBS_ENABLE", "no", 1) == ESPANK_SUCCESS ? 0 : -1;
  if (!*probe_file)
    return 0;
  char absolute[PATH_MAX];
  if (!realpath(probe_file, absolute)) {
    slurm_error("datacrumbs: --datacrumbs-probe-file %s: no such file", probe_file);
    return -1;
  }
  if (spank_job_control_setenv(sp, "DATACRUMBS_PROBE_FILE", absolute, 1) != ESPANK_SUCCESS) {
    slurm_error("datacrumbs: cannot pass the probe file to the job's prolog");
    return -1;
  }
  return 0;
}

static void print_reason(const char* path)
{
  FILE* f = fopen(path, "r");
  if (!f)
    return;
  char line[1024];
  while (fgets(line, sizeof line, f)) fputs(line, stderr);
  fclose(f);
}

/* Once per job: in the batch script, else (an srun or salloc job) in each step's task 0. The
 * steps a batch script starts inherit sbatch's ENVIRONMENT=BATCH. */
static int says_once(spank_t sp)
{
  uint32_t step = 0;
  char environment[16] = "";
  if (spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS && step == SLURM_BATCH_SCRIPT)
    return 1;
  return spank_getenv(sp, "ENVIRONMENT", environment, sizeof environment) != ESPANK_SUCCESS ||
         strcmp(environment, "BATCH") != 0;
}

/* In each task, as the job's user, just before it execs. */
int slurm_spank_task_init(spank_t sp, int ac, char** av)
{
  (void)ac;
  (void)av;
  uint32_t job = 0, task = 0;
  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    return 0;
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/datacrumbs-%u.ready", run_dir, job);
  if (access(path, F_OK) != 0) {
    snprintf(path, sizeof path, "%s/datacrumbs-%u.off", run_dir, job);
    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task) == ESPANK_SUCCESS && task == 0 && says_once(sp))
      print_reason(path);
    return 0;
  }
  char preload[2 * PATH_MAX + 2];
  char existing[PATH_MAX] = "";
  if (spank_getenv(sp, "LD_PRELOAD", existing, sizeof existing) == ESPANK_SUCCESS &&
      strstr(existing, client_lib))
    return 0; /* a step of a batch script inherits the batch task's preload */
  if (*existing)
    snprintf(preload, sizeof preload, "%s:%s", client_lib, existing);
  else
    snprintf(preload, sizeof preload, "%s", client_lib);
  if (spank_setenv(sp, "LD_PRELOAD", preload, 1) != ESPANK_SUCCESS)
    slurm_error("datacrumbs: cannot set LD_PRELOAD for job %u", job);
  return 0;
}
