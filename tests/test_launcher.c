/*
 * test_launcher.c: a build without MPI started by a launcher. The rule
 * that reads the environment (fsmpi_launcher_several) on made-up
 * environments: Open MPI, hydra, PMIx, srun steps, and the batch script's
 * own shell (SLURM_NTASKS alone), which must not count. Then, in a build
 * without MPI, the binary under OMPI_COMM_WORLD_SIZE=2: exit 2 at once,
 * one line naming the variable and the rebuild, nothing written.
 */
#include <sys/stat.h>

#include "mpi/mpi.h"
#include "test_proc.h"

/* Whether env shows several ranks; prints what it saw. */
static int several(char *const *env, FsLauncher *l)
{
    int r = fsmpi_launcher_several(env, l);
    printf(" ");
    for (char *const *e = env; *e; e++) printf(" %s", *e);
    printf(" -> %s%s, rank %d\n", r ? "several: " : "one", r ? l->var : "", l->rank);
    return r;
}

static void test_rule(void)
{
    FsLauncher l;
    char *none[] = {"HOME=/root", "PATH=/usr/bin", NULL};
    CHECK(!several(none, &l) && l.rank == -1);

    char *ompi[] = {"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=2", NULL};
    CHECK(several(ompi, &l) && !strcmp(l.var, "OMPI_COMM_WORLD_SIZE") && l.value == 4 && !l.is_rank);
    CHECK(l.rank == 2);
    char *ompi1[] = {"OMPI_COMM_WORLD_SIZE=1", "OMPI_COMM_WORLD_RANK=0", NULL}; /* mpirun -np 1 */
    CHECK(!several(ompi1, &l) && l.rank == 0);

    char *hydra[] = {"PMI_RANK=0", "PMI_SIZE=3", NULL};
    CHECK(several(hydra, &l) && !strcmp(l.var, "PMI_SIZE") && l.value == 3 && l.rank == 0);
    char *pmix0[] = {"PMIX_RANK=0", NULL}; /* rank 0 of an unknown count: not enough */
    CHECK(!several(pmix0, &l));
    char *pmix1[] = {"PMIX_RANK=1", NULL};
    CHECK(several(pmix1, &l) && l.is_rank && l.value == 1 && l.rank == 1);

    /* sbatch's shell: SLURM_NTASKS=2 but no step; a plain run there is legitimate. */
    char *batch[] = {"SLURM_JOB_ID=7", "SLURM_NTASKS=2", "SLURM_NPROCS=2", "SLURM_PROCID=0", NULL};
    CHECK(!several(batch, &l) && l.rank == 0);
    /* srun -n2 (any --mpi plugin or none) and srun -n1 inside that job. */
    char *step2[] = {"SLURM_NTASKS=2", "SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=1", NULL};
    CHECK(several(step2, &l) && !strcmp(l.var, "SLURM_STEP_NUM_TASKS") && l.rank == 1);
    char *step1[] = {"SLURM_NTASKS=2", "SLURM_STEP_NUM_TASKS=1", "SLURM_PROCID=0", NULL};
    CHECK(!several(step1, &l));

    /* Not numbers, or a prefix of another name: ignored. */
    char *odd[] = {"OMPI_COMM_WORLD_SIZE=", "PMI_SIZE=4x", "PMI_SIZEX=9", "XPMI_SIZE=9", NULL};
    CHECK(!several(odd, &l));
    char *empty[] = {NULL};
    CHECK(!several(empty, &l));
}

static void test_binary(void)
{
    if (fsmpi_built()) {
        printf("this build has MPI: a launcher's variables start MPI (test_mpi); the refusal is for builds "
               "without it (-DFOLDSWEEP_MPI=OFF)\n");
        return;
    }
    char dir[512], out[600];
    tp_tmpdir(dir, sizeof dir, "launcher");
    snprintf(out, sizeof out, "%s/run", dir);
    /* The sweep need not exist: nothing is read before the refusal. */
    CHECK(tp_run("--version") == 0);
    CHECK_CONTAINS(out_text, "backends: MPI no, CUDA ");
    CHECK(tp_run("run /nonexistent/sweep.yaml --out '%s'", out) == 1);
    printf("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0\n");
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    CHECK(tp_run("run /nonexistent/sweep.yaml --out '%s'", out) == 2);
    CHECK(tp_count(err_text, "\n") == 1);
    CHECK_CONTAINS(err_text, "OMPI_COMM_WORLD_SIZE=2");
    CHECK_CONTAINS(err_text, "built without MPI");
    CHECK_CONTAINS(err_text, "-DFOLDSWEEP_MPI=ON");
    struct stat st;
    CHECK(stat(out, &st) != 0); /* nothing written */
    /* Another rank ends as quietly; other commands are not affected. */
    setenv("OMPI_COMM_WORLD_RANK", "1", 1);
    CHECK(tp_run("run /nonexistent/sweep.yaml --out '%s'", out) == 2);
    CHECK(err_text[0] == '\0');
    CHECK(tp_run("plan /nonexistent/sweep.yaml") == 1);
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_RANK");
    /* The batch script's shell: one process. */
    printf("SLURM_NTASKS=2\n");
    setenv("SLURM_NTASKS", "2", 1);
    CHECK(tp_run("run /nonexistent/sweep.yaml --out '%s'", out) == 1);
    CHECK(strstr(err_text, "built without MPI") == NULL);
    unsetenv("SLURM_NTASKS");
    rmdir(dir);
}

int main(void)
{
    test_rule();
    test_binary();
    return test_finish();
}
