/*
 * launcher: what the environment says about the ranks a launcher started,
 * read without MPI. A build without MPI started by mpirun or srun would
 * otherwise run the whole sweep once per rank, each alone, into the same
 * run folder (the folder's lock stops all but one, with a message about
 * "another foldsweep run" that hides the cause). `foldsweep run` asks this
 * first and refuses (cli/run.c).
 *
 * Which variables count, and why:
 *  - a count of ranks above 1: OMPI_COMM_WORLD_SIZE (Open MPI's mpirun),
 *    PMI_SIZE (MPICH/Intel MPI hydra, srun --mpi=pmi2), MV2_COMM_WORLD_SIZE
 *    (MVAPICH), SLURM_STEP_NUM_TASKS (srun, any --mpi plugin or none);
 *  - a rank above 0, for launchers that set no count: PMIX_RANK, PMI_RANK.
 * SLURM_NTASKS is not one of them: sbatch and salloc set it for the batch
 * script's (or the allocation's) own shell, where a single `foldsweep run`
 * without srun is one process and legitimate. Only srun sets
 * SLURM_STEP_NUM_TASKS, for the tasks of the step it starts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi.h"

typedef struct {
    const char *name;
    int is_rank; /* the value is this process's rank (several when > 0), not a count */
} LauncherVar;

static const LauncherVar several_vars[] = {
    {"OMPI_COMM_WORLD_SIZE", 0}, {"PMI_SIZE", 0}, {"MV2_COMM_WORLD_SIZE", 0},
    {"SLURM_STEP_NUM_TASKS", 0}, {"PMIX_RANK", 1}, {"PMI_RANK", 1},
};

static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};

/* The value of name in env ("NAME=VALUE" strings, NULL-terminated), or NULL. */
static const char *env_find(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (!strncmp(*env, name, n) && (*env)[n] == '=') return *env + n + 1;
    return NULL;
}

/* The whole value as a number >= 0, else -1 (unset, empty, not a number). */
static long env_number(char *const *env, const char *name)
{
    const char *v = env_find(env, name);
    if (!v || !*v) return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    return *end || errno || x < 0 ? -1 : x;
}

static int launcher_rank(char *const *env)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
        long r = env_number(env, rank_vars[i]);
        if (r >= 0) return r > 1000000000 ? -1 : (int)r;
    }
    return -1;
}

int fsmpi_launcher_several(char *const *env, FsLauncher *l)
{
    memset(l, 0, sizeof *l);
    l->rank = launcher_rank(env);
    for (size_t i = 0; i < sizeof several_vars / sizeof several_vars[0]; i++) {
        const LauncherVar *v = &several_vars[i];
        long x = env_number(env, v->name);
        if (x > (v->is_rank ? 0 : 1)) {
            l->var = v->name;
            l->value = x;
            l->is_rank = v->is_rank;
            return 1;
        }
    }
    return 0;
}
