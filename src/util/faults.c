/*
 * faults: the test hooks, faults the tests inject through the environment
 * (FOLDSWEEP_TEST_<NAME>). This is the one place that reads them and the
 * one list of them: a hook not listed here is an internal error, so a new
 * one is documented before it can be used. They exist for the tests of
 * docs/reliability.md; a user never needs them.
 *
 * Built for the architecture's baseline, as cpu.c is (CMakeLists.txt):
 * the CPU check before main reads CPU_MISSING.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const struct {
    const char *name, *what;
} hooks[] = {
    {"CPU_MISSING", "\"avx2 fma\": the CPU check before main treats those extensions as absent (util/cpu.c)"},
    {"STARTUP_DELAY", "R:S: rank R sleeps S seconds between MPI_Init_thread and MPI_Comm_dup (mpi/comm.c)"},
    {"CLAIM_PAUSE", "PATH: holding the journal's lock, before looking at the folder, the run writes PATH.reached "
                    "and waits until PATH exists (run/folder.c)"},
    {"HOLD", "N: in a folder's first run, the Nth fold rank 0's threads start waits, in flight (its trial record "
             "written), until a signal stops the run; no other fold starts meanwhile (run/coord.c)"},
    {"RAISE", "setup|trained: the process sends itself SIGUSR1 at that moment (run/run.c)"},
    {"SETUP_FAIL", "R: worker rank R cannot load what rank 0 sent (run/worker.c)"},
    {"REFUSE", "R or R:all: worker rank R refuses its first TRIALS item, or every one (run/worker.c)"},
    {"INJECT", "any value: rank 1 sends rank 0 malformed messages first (run/worker_send.c)"},
    {"RESUMED_NEXT", "N: a worker's RESUMED messages say its fold resumed at example N (run/worker_send.c)"},
    {"KILL_AFTER_MODEL", "N: SIGKILL after the Nth model file is in place, before its record (run/models.c)"},
    {"CKPT_STEPS", "N: mid-fold checkpoints every N steps instead of by time (run/checkpoints.c)"},
    {"KILL_AFTER_CKPT", "N: SIGKILL right after the Nth checkpoint is in place (run/checkpoints.c)"},
    {"KILL_IN_CKPT", "N: SIGKILL while the Nth checkpoint is half written (run/checkpoints.c)"},
    {"KILL_IN_VALIDATION", "E: SIGKILL as a fold's epoch E validation starts (run/checkpoints.c)"},
    {"KILL_AFTER_EVAL", "N: SIGKILL after the test phase's Nth journal record (run/testphase.c)"},
    {"MODEL_NO_MEMORY", "N: the Nth fold model buffer a training thread of this process allocates fails (train/train.c)"},
    {"KILL_AFTER_REPLICATE", "N: SIGKILL after the Nth seed replicate's fold record (run/jobs.c)"},
    {"TEAM_SHARE", "any value: a training thread shares its loops with idle threads whatever the machine's load, "
                   "the busy-machine rule off (train/team.c)"},
    {"PREDICT_KEEP_BYTES", "N: predict keeps fold models' workspaces across chunks up to N bytes a thread, not 64 MiB "
                           "(predict/forward.c)"},
};

const char *fs_test_fault(const char *name)
{
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        if (strcmp(hooks[i].name, name) != 0) continue;
        char var[64];
        snprintf(var, sizeof var, "FOLDSWEEP_TEST_%s", name);
        return getenv(var);
    }
    FS_DIE("test hook %s is not in util/faults.c's list", name);
}

void fs_test_faults_list(FILE *out)
{
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
        fprintf(out, "FOLDSWEEP_TEST_%s=%s\n", hooks[i].name, hooks[i].what);
}
