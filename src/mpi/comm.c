/*
 * comm: the MPI transport, over the communicator of an FsMpi context (the
 * world only where fsmpi_init makes one over it, or to abort before a
 * context has a communicator). Only the thread that made the context calls
 * MPI (MPI_THREAD_FUNNELED): worker threads hand results to it. Without
 * FS_HAVE_MPI every function is the single-rank case.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi.h"
#include "mpi/watchdog.h"

#ifdef FS_HAVE_MPI
#include <mpi.h>
#endif

static void fill_local(FsMpi *m)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->node_cores = cores > 0 ? (int)cores : 1;
    if (gethostname(m->host, sizeof m->host) != 0) snprintf(m->host, sizeof m->host, "?");
    m->host[sizeof m->host - 1] = 0;
}

#ifdef FS_HAVE_MPI

int fsmpi_built(void) { return 1; }

/* Ends the job: the message first, then MPI_Abort on the context's
 * communicator (the caller's while the duplicate is being made), so no
 * rank is left waiting on one that cannot go on. */
static FS_NORETURN void mpi_fail(const FsMpi *m, const char *fmt, ...) FS_PRINTF(2, 3);
static FS_NORETURN void mpi_fail(const FsMpi *m, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (m->active)
        fprintf(stderr, "foldsweep: rank %d (%s): %s; aborting the job\n", m->rank, m->host, what);
    else
        fprintf(stderr, "foldsweep: %s: %s; aborting the job\n", m->host, what);
    fflush(stderr);
    MPI_Abort(m->comm != MPI_COMM_NULL ? m->comm : MPI_COMM_WORLD, FS_EXIT_ERROR);
    exit(FS_EXIT_ERROR);
}

/* Every MPI call is checked (the context's communicator returns errors
 * instead of aborting silently): a failure names the rank, its host, the
 * call with its file:line and MPI's reason. */
#define MPI_CHECK(m, call) mpi_check((m), (call), #call, __FILE__, __LINE__)
static void mpi_check(const FsMpi *m, int rc, const char *what, const char *file, int line)
{
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", rc);
    mpi_fail(m, "%s failed at %s:%d: %s", what, file, line, text);
}

/* Set by mpirun (Open MPI), srun with PMIx or PMI2, or MPICH's hydra. A
 * plain `foldsweep run` does not initialise MPI at all: a singleton init
 * would try to reach a runtime that a workstation may not have. */
static int launched_by_mpi(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

void fsmpi_alone(FsMpi *m)
{
    memset(m, 0, sizeof *m);
    m->size = m->local_size = 1;
    m->comm = MPI_COMM_NULL;
    fill_local(m);
}

static void attach(FsMpi *m, MPI_Comm comm)
{
    int level = MPI_THREAD_SINGLE;
    m->comm = comm; /* for an abort until the duplicate exists */
    MPI_CHECK(m, MPI_Query_thread(&level));
    if (level < MPI_THREAD_FUNNELED)
        mpi_fail(m, "MPI was initialised with thread level %d; foldsweep's threads need MPI_THREAD_FUNNELED (%d)",
                 level, MPI_THREAD_FUNNELED);
    MPI_Comm dup = MPI_COMM_NULL;
    fsmpi_watchdog_stage("MPI_Comm_dup (the first exchange between the ranks)");
    MPI_CHECK(m, MPI_Comm_dup(comm, &dup));
    m->comm = dup;
    MPI_CHECK(m, MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN));
    MPI_CHECK(m, MPI_Comm_rank(m->comm, &m->rank));
    MPI_CHECK(m, MPI_Comm_size(m->comm, &m->size));
    MPI_Comm local;
    fsmpi_watchdog_stage("MPI_Comm_split_type (finding the ranks on each node)");
    MPI_CHECK(m, MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &local));
    MPI_CHECK(m, MPI_Comm_rank(local, &m->local_rank));
    MPI_CHECK(m, MPI_Comm_size(local, &m->local_size));
    MPI_CHECK(m, MPI_Comm_free(&local));
    m->rank_failed = fs_calloc((size_t)m->size, 1);
    m->active = 1;
}

/* Test hook STARTUP_DELAY=R:S (util/faults.c): rank R (the launcher's
 * number) sleeps S seconds between MPI_Init_thread and MPI_Comm_dup, so
 * the other ranks wait in the first exchange: a slow start, or with S past
 * the watchdog's timeout, a stuck one. */
static void test_startup_delay(void)
{
    const char *v = fs_test_fault("STARTUP_DELAY");
    const char *colon = v ? strchr(v, ':') : NULL;
    if (!colon || atoi(v) != fsmpi_launcher_rank()) return;
    fsmpi_watchdog_stage("MPI_Comm_dup (held back by FOLDSWEEP_TEST_STARTUP_DELAY)");
    sleep((unsigned)atoi(colon + 1));
}

void fsmpi_init(FsMpi *m, double startup_timeout)
{
    fsmpi_alone(m);
    if (!launched_by_mpi()) return;
    int provided = 0;
    fsmpi_watchdog_start(startup_timeout, "MPI_Init_thread (Open MPI's own start-up)");
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "foldsweep: %s: MPI_Init_thread failed; is this the MPI foldsweep was built with?\n", m->host);
        exit(FS_EXIT_ERROR);
    }
    m->owns_mpi = 1;
    /* This process owns MPI: errors outside the run's communicator (the
     * duplicate) are returned to MPI_CHECK too. */
    MPI_CHECK(m, MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_startup_delay();
    attach(m, MPI_COMM_WORLD);
    fsmpi_watchdog_stop();
}

void fsmpi_attach(FsMpi *m, MPI_Comm comm)
{
    fsmpi_alone(m);
    int on = 0;
    MPI_CHECK(m, MPI_Initialized(&on));
    if (!on) FS_DIE("fsmpi_attach: MPI is not initialised");
    attach(m, comm);
}

void fsmpi_finalize(FsMpi *m)
{
    if (m->active) MPI_CHECK(m, MPI_Comm_free(&m->comm));
    m->comm = MPI_COMM_NULL;
    m->active = 0;
    if (m->owns_mpi) MPI_CHECK(m, MPI_Finalize());
    m->owns_mpi = 0;
    free(m->rank_failed);
    m->rank_failed = NULL;
}

void fsmpi_abort(FsMpi *m, int code)
{
    if (m->active) MPI_Abort(m->comm, code);
    exit(code);
}

/* MPI counts are ints: large blocks go in pieces. */
static void bcast_bytes(FsMpi *m, void *p, uint64_t n)
{
    const uint64_t piece = 1u << 30;
    for (uint64_t off = 0; off < n; off += piece) {
        uint64_t k = n - off < piece ? n - off : piece;
        MPI_CHECK(m, MPI_Bcast((char *)p + off, (int)k, MPI_BYTE, 0, m->comm));
    }
}

int fsmpi_bcast_setup(FsMpi *m, int32_t *status, double *ckpt_every, char **text, uint8_t **bytes, uint64_t *n)
{
    if (!m->active || m->size < 2) return 0;
    uint64_t head[4] = {(uint64_t)(uint32_t)*status, 0, 0, 0};
    if (m->rank == 0) {
        head[1] = *text ? strlen(*text) + 1 : 0;
        head[2] = *n;
        memcpy(&head[3], ckpt_every, 8);
    }
    MPI_CHECK(m, MPI_Bcast(head, 4, MPI_UINT64_T, 0, m->comm));
    *status = (int32_t)(uint32_t)head[0];
    memcpy(ckpt_every, &head[3], 8);
    if ((*status & 0xff) != 0) return 0; /* rank 0 failed: nothing follows */
    if (m->rank != 0) {
        *text = fs_malloc(head[1] ? head[1] : 1);
        *bytes = fs_malloc(head[2] ? head[2] : 1);
        *n = head[2];
    }
    bcast_bytes(m, *text, head[1]);
    bcast_bytes(m, *bytes, head[2]);
    return 0;
}

/* One fixed-size record per rank: a status byte, then the binding or, for a
 * rank that could not set up, the reason. */
typedef struct {
    int32_t threads;
    char failed;
    char text[300];
} RankReport;

int fsmpi_report_setup(FsMpi *m, const char *failure, int threads, const char *device, void *out_file)
{
    FILE *out = out_file;
    RankReport mine;
    memset(&mine, 0, sizeof mine);
    mine.failed = failure != NULL;
    mine.threads = threads;
    m->total_threads = threads;
    if (failure)
        snprintf(mine.text, sizeof mine.text, "%s", failure);
    else if (m->local_size > 1)
        snprintf(mine.text, sizeof mine.text, "on host %s (%d of its %d ranks), %d training thread%s, %s", m->host,
                 m->local_rank + 1, m->local_size, threads, threads == 1 ? "" : "s", device);
    else
        snprintf(mine.text, sizeof mine.text, "on host %s, %d training thread%s, %s", m->host, threads,
                 threads == 1 ? "" : "s", device);
    if (!m->active || m->size < 2) {
        if (out && !failure) fprintf(out, "binding: rank 0 %s\n", mine.text);
        return failure != NULL;
    }
    RankReport *all = m->rank == 0 ? fs_calloc((size_t)m->size, sizeof mine) : NULL;
    MPI_CHECK(m, MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, m->comm));
    int failed = 0;
    if (m->rank == 0) {
        m->total_threads = 0;
        for (int r = 0; r < m->size; r++) {
            if (!all[r].failed) m->total_threads += all[r].threads;
            all[r].text[sizeof all[r].text - 1] = 0;
            m->rank_failed[r] = all[r].failed != 0;
            if (all[r].failed) {
                failed++;
                fprintf(stderr, "foldsweep: rank %d could not start: %s\n", r, all[r].text);
            } else if (out) {
                fprintf(out, "binding: rank %d %s\n", r, all[r].text);
            }
        }
        if (out) fflush(out);
    }
    free(all);
    return failed;
}

int fsmpi_poll(FsMpi *m, int source, FsMsg *msg)
{
    int flag = 0;
    MPI_Status st;
    MPI_CHECK(m, MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, m->comm, &flag, &st));
    if (!flag) return 0;
    int count = 0;
    MPI_CHECK(m, MPI_Get_count(&st, MPI_BYTE, &count));
    msg->tag = st.MPI_TAG;
    msg->source = st.MPI_SOURCE;
    msg->n = count > 0 ? (size_t)count : 0;
    msg->p = fs_malloc(msg->n ? msg->n : 1);
    MPI_CHECK(m, MPI_Recv(msg->p, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, m->comm, MPI_STATUS_IGNORE));
    return 1;
}

void fsmpi_send(FsMpi *m, int dest, int tag, const FsBuf *b)
{
    MPI_CHECK(m, MPI_Send(b->p, (int)b->n, MPI_BYTE, dest, tag, m->comm));
}

#else /* no MPI in this build: one rank */

int fsmpi_built(void) { return 0; }

void fsmpi_alone(FsMpi *m)
{
    memset(m, 0, sizeof *m);
    m->size = m->local_size = 1;
    fill_local(m);
}

void fsmpi_init(FsMpi *m, double startup_timeout)
{
    (void)startup_timeout;
    fsmpi_alone(m);
}

void fsmpi_finalize(FsMpi *m) { m->active = 0; }
void fsmpi_abort(FsMpi *m, int code)
{
    (void)m;
    exit(code);
}
int fsmpi_bcast_setup(FsMpi *m, int32_t *status, double *ckpt_every, char **text, uint8_t **bytes, uint64_t *n)
{
    (void)m, (void)status, (void)ckpt_every, (void)text, (void)bytes, (void)n;
    return 0;
}
int fsmpi_report_setup(FsMpi *m, const char *failure, int threads, const char *device, void *out_file)
{
    if (out_file && !failure)
        fprintf((FILE *)out_file, "binding: one process on host %s (built without MPI), %d training thread%s, %s\n",
                m->host, threads, threads == 1 ? "" : "s", device);
    return failure != NULL;
}
int fsmpi_poll(FsMpi *m, int source, FsMsg *msg)
{
    (void)m, (void)source, (void)msg;
    return 0;
}
void fsmpi_send(FsMpi *m, int dest, int tag, const FsBuf *b) { (void)m, (void)dest, (void)tag, (void)b; }

#endif
