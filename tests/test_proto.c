/*
 * The coordinator-worker protocol without MPI: every message round-trips,
 * and malformed ones (short, bad magic, other version, tag mismatch, wrong
 * length, truncated or out-of-range fields) are refused with a reason.
 */
#include <math.h>

#include "mpi/mpi.h"
#include "test.h"

static char why[256];

int main(void)
{
    FsBuf b = {0};
    int32_t cap = -1, cancel = -1, code = -1;
    int refused;

    /* Round trips. */
    FsWorkItem held[FS_PROTO_MAX_ITEMS], two[2] = {{4, 1, "0123456789abcdef", 0}, {7, 2, "fedcba9876543210", 0}};
    int n_held = -1;
    proto_encode_request(&b, 3, two, 2);
    CHECK(proto_check(b.p, b.n, FS_MSG_REQUEST, why, sizeof why) == 0);
    CHECK(proto_decode_request(b.p, b.n, &cap, held, &n_held, why, sizeof why) == 0 && cap == 3 && n_held == 2);
    CHECK(held[1].trial == 7 && held[1].fold == 2 && !strcmp(held[1].id, "fedcba9876543210"));
    /* A held count beyond the payload is refused, not read past the end. */
    memcpy(b.p + FS_PROTO_HEADER + 4, &(int32_t){3}, 4);
    CHECK(proto_decode_request(b.p, b.n, &cap, held, &n_held, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "truncated");
    proto_encode_request(&b, 3, NULL, 0);
    CHECK(proto_decode_request(b.p, b.n, &cap, held, &n_held, why, sizeof why) == 0 && n_held == 0);

    FsWorkItem items[3] = {{0, 0, "0123456789abcdef", 0}, {7, 2, "fedcba9876543210", 3}, {1, FS_FOLD_PREDEFINED, "00000000000000ff", 0}};
    proto_encode_trials(&b, items, 3);
    static FsWorkItem got[FS_PROTO_MAX_ITEMS];
    int n = 0;
    CHECK(proto_decode_trials(b.p, b.n, got, &n, why, sizeof why) == 0);
    CHECK(n == 3 && got[1].trial == 7 && got[1].fold == 2 && !strcmp(got[1].id, "fedcba9876543210"));
    CHECK(got[2].fold == FS_FOLD_PREDEFINED);
    /* A seed replicate's item keeps its seed (search.replicates); the others are seed 0. */
    CHECK(got[1].seed == 3 && got[0].seed == 0 && got[2].seed == 0);

    FsFitResult r;
    train_result_alloc(&r, 4);
    r.status = FS_FIT_DIVERGED;
    r.epochs = 3;
    r.best_epoch = 2;
    r.diverged_epoch = 3;
    r.diverged_step = 41;
    r.best_val_loss = 0.8125f;
    r.monitor = FS_MONITOR_Q3; /* what chose best_epoch: the journal's fold record says so */
    r.best_confusion[1][2] = 17;
    r.train_examples = 123456789012ULL;
    r.seconds = 1.25;
    for (int e = 0; e < 3; e++) r.curves.val_q3[e] = 0.5f + 0.1f * (float)e;
    snprintf(r.message, sizeof r.message, "loss became nan");
    r.gpu_path = FS_GPU_PATH_LIBRARY, r.gpu_group = 24; /* the library tier's group width */
    proto_encode_result(&b, &items[1], &r);
    FsWorkItem it;
    FsFitResult back;
    CHECK(proto_decode_result(b.p, b.n, &it, &back, why, sizeof why) == 0);
    /* Every field comes back (a decoder that clears what it read fails here). */
    CHECK(it.trial == 7 && it.fold == 2);
    CHECK(back.status == FS_FIT_DIVERGED && back.epochs == 3 && back.best_epoch == 2);
    CHECK(back.monitor == FS_MONITOR_Q3);
    CHECK(back.diverged_epoch == 3 && back.diverged_step == 41);
    CHECK(back.best_val_loss == 0.8125f && back.best_confusion[1][2] == 17);
    CHECK(back.train_examples == 123456789012ULL && back.seconds == 1.25);
    CHECK(back.curves.val_q3[2] == r.curves.val_q3[2]);
    CHECK(!strcmp(back.message, "loss became nan"));
    CHECK(back.gpu_path == FS_GPU_PATH_LIBRARY && back.gpu_group == 24);
    train_result_free(&back);
    /* A group width out of range, or beside another tier, is refused. */
    const int bad_group[3][2] = {{FS_GPU_PATH_LIBRARY, 33}, {FS_GPU_PATH_LIBRARY, -1}, {FS_GPU_PATH_BLOCK, 4}};
    for (int k = 0; k < 3; k++) {
        FsFitResult o = r;
        o.gpu_path = bad_group[k][0], o.gpu_group = bad_group[k][1];
        proto_encode_result(&b, &items[1], &o);
        CHECK(proto_decode_result(b.p, b.n, &it, &back, why, sizeof why) != 0);
        CHECK_CONTAINS(why, "RESULT GPU group width");
    }
    /* Counts a fit cannot produce are refused before rank 0 journals them
     * (the journal's reader would reject the record and the folder could
     * never resume). */
    struct {
        int halted, dep, monitor;
        long dstep;
        const char *want;
    } odd[] = {{7, 3, 1, 41, "halted_by 7"},
               {0, 9, 1, 41, "diverged epoch 9"},
               {0, 3, 1, -5, "diverged step -5"},
               {0, 3, 5, 41, "monitor 5"}};
    for (int k = 0; k < 4; k++) {
        FsFitResult o = r;
        o.halted_by = odd[k].halted, o.diverged_epoch = odd[k].dep, o.diverged_step = odd[k].dstep;
        o.monitor = (FsMonitor)odd[k].monitor;
        proto_encode_result(&b, &items[1], &o);
        CHECK(proto_decode_result(b.p, b.n, &it, &back, why, sizeof why) != 0);
        CHECK_CONTAINS(why, odd[k].want);
    }

    proto_encode_stop(&b, 1, 3);
    CHECK(proto_decode_stop(b.p, b.n, &cancel, &code, why, sizeof why) == 0 && cancel == 1 && code == 3);
    /* BYE: the worker's GPU times, checked for meaning. */
    double gk, gh;
    proto_encode_bye(&b, 12.5, 0.75);
    CHECK(proto_decode_bye(b.p, b.n, &gk, &gh, why, sizeof why) == 0 && gk == 12.5 && gh == 0.75);
    const double bad_t[3] = {-1.0, NAN, 2e9};
    for (int k = 0; k < 3; k++) {
        proto_encode_bye(&b, 1.0, bad_t[k]);
        CHECK(proto_decode_bye(b.p, b.n, &gk, &gh, why, sizeof why) != 0);
        CHECK_CONTAINS(why, "BYE's GPU host seconds");
    }
    proto_encode_stop(&b, 0, 0);
    CHECK(proto_decode_bye(b.p, b.n, &gk, &gh, why, sizeof why) != 0); /* a STOP is not a BYE */
    char text[64];
    proto_encode_error(&b, "worker could not parse the sweep");
    CHECK(proto_decode_error(b.p, b.n, text, sizeof text, why, sizeof why) == 0);
    CHECK(!strcmp(text, "worker could not parse the sweep"));

    /* RESUMED: resumed at an epoch and example with no reason, or refused
     * (epoch 0) with one; any other mix, or an epoch out of range, refused. */
    int32_t rep;
    uint32_t rnext;
    char note[512];
    proto_encode_resumed(&b, &items[2], 4, 1234567u, "");
    CHECK(proto_decode_resumed(b.p, b.n, &it, &rep, &rnext, note, sizeof note, why, sizeof why) == 0);
    CHECK(it.trial == 1 && it.fold == FS_FOLD_PREDEFINED && rep == 4 && rnext == 1234567u && note[0] == 0);
    proto_encode_resumed(&b, &items[1], 0, 0, "the checkpoint is of another model");
    CHECK(proto_decode_resumed(b.p, b.n, &it, &rep, &rnext, note, sizeof note, why, sizeof why) == 0);
    CHECK(it.trial == 7 && it.seed == 3 && rep == 0 && !strcmp(note, "the checkpoint is of another model"));
    const struct {
        int32_t epoch;
        const char *note, *want;
    } bad_resumed[] = {{3, "refused", "RESUMED at epoch 3 with a refusal's reason"},
                       {0, "", "RESUMED at epoch 0 without a reason"},
                       {-1, "", "RESUMED epoch -1 out of range"},
                       {FS_PROTO_MAX_EPOCHS + 1, "", "out of range 0..100000"}};
    for (int k = 0; k < 4; k++) {
        proto_encode_resumed(&b, &items[0], bad_resumed[k].epoch, 0, bad_resumed[k].note);
        CHECK(proto_decode_resumed(b.p, b.n, &it, &rep, &rnext, note, sizeof note, why, sizeof why) != 0);
        CHECK_CONTAINS(why, bad_resumed[k].want);
    }
    /* Every truncation of one is refused. */
    proto_encode_resumed(&b, &items[1], 0, 0, "why not");
    refused = 0;
    for (size_t cut = FS_PROTO_HEADER; cut < b.n; cut++) {
        uint32_t len = (uint32_t)(cut - FS_PROTO_HEADER);
        memcpy(b.p + 12, &len, 4);
        refused += proto_decode_resumed(b.p, cut, &it, &rep, &rnext, note, sizeof note, why, sizeof why) != 0;
    }
    CHECK(refused == (int)(b.n - FS_PROTO_HEADER));
    CHECK(!strcmp(proto_kind_name(FS_MSG_RESUMED), "RESUMED"));

    /* Malformed headers. */
    uint8_t junk[5] = {1, 2, 3, 4, 5};
    CHECK(proto_check(junk, 5, FS_MSG_REQUEST, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "shorter than");
    proto_encode_request(&b, 1, NULL, 0);
    b.p[0] ^= 0xff;
    CHECK(proto_check(b.p, b.n, FS_MSG_REQUEST, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "magic");
    proto_encode_request(&b, 1, NULL, 0);
    b.p[4] = 99;
    CHECK(proto_check(b.p, b.n, FS_MSG_REQUEST, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "version 99");
    proto_encode_request(&b, 1, NULL, 0);
    CHECK(proto_check(b.p, b.n, FS_MSG_RESULT, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "header says REQUEST");
    proto_encode_request(&b, 1, NULL, 0);
    CHECK(proto_check(b.p, b.n - 1, FS_MSG_REQUEST, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "payload length");

    /* Bad fields. */
    proto_encode_request(&b, -5, NULL, 0);
    CHECK(proto_decode_request(b.p, b.n, &cap, held, &n_held, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "capacity -5");
    FsWorkItem badid = {1, 0, "not-hex-at-all!!", 0};
    proto_encode_trials(&b, &badid, 1);
    CHECK(proto_decode_trials(b.p, b.n, got, &n, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "hex");
    FsWorkItem badfold = {1, 999, "0123456789abcdef", 0};
    proto_encode_trials(&b, &badfold, 1);
    CHECK(proto_decode_trials(b.p, b.n, got, &n, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "fold 999");
    FsWorkItem badseed = {1, 0, "0123456789abcdef", FS_MAX_SEEDS};
    proto_encode_trials(&b, &badseed, 1);
    CHECK(proto_decode_trials(b.p, b.n, got, &n, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "seed 100 out of range");
    /* A result whose curve length disagrees with its epochs. */
    r.status = FS_FIT_OK;
    proto_encode_result(&b, &items[0], &r);
    memcpy(b.p + FS_PROTO_HEADER + 24 + 4, &(int32_t){9}, 4); /* epochs field */
    CHECK(proto_decode_result(b.p, b.n, &it, &back, why, sizeof why) != 0);
    /* Every truncation of a valid result is refused, never read past. */
    proto_encode_result(&b, &items[0], &r);
    refused = 0;
    for (size_t cut = FS_PROTO_HEADER; cut < b.n; cut++) {
        uint32_t len = (uint32_t)(cut - FS_PROTO_HEADER);
        memcpy(b.p + 12, &len, 4); /* a consistent header, so the payload is what is short */
        if (proto_decode_result(b.p, cut, &it, &back, why, sizeof why) != 0)
            refused++;
        else
            train_result_free(&back);
    }
    CHECK(refused == (int)(b.n - FS_PROTO_HEADER));
    /* Random bytes with a valid header never crash a decoder. */
    FsRng rng;
    uint64_t seed = 9;
    fs_rng_seed(&rng, &seed, 1);
    uint8_t msg[256];
    int kinds[] = {FS_MSG_REQUEST, FS_MSG_TRIALS, FS_MSG_RESULT, FS_MSG_ERROR, FS_MSG_STOP, FS_MSG_RESUMED};
    for (int trial = 0; trial < 24000; trial++) {
        int kind = kinds[trial % 6];
        size_t len = FS_PROTO_HEADER + fs_rng_below(&rng, 200);
        for (size_t k = 0; k < len; k++) msg[k] = (uint8_t)fs_rng_u64(&rng);
        uint32_t h[4] = {FS_PROTO_MAGIC, FS_PROTO_VERSION, (uint32_t)kind, (uint32_t)(len - FS_PROTO_HEADER)};
        memcpy(msg, h, sizeof h);
        switch (kind) {
        case FS_MSG_REQUEST: proto_decode_request(msg, len, &cap, held, &n_held, why, sizeof why); break;
        case FS_MSG_TRIALS: proto_decode_trials(msg, len, got, &n, why, sizeof why); break;
        case FS_MSG_RESULT:
            if (proto_decode_result(msg, len, &it, &back, why, sizeof why) == 0) train_result_free(&back);
            break;
        case FS_MSG_ERROR: proto_decode_error(msg, len, text, sizeof text, why, sizeof why); break;
        case FS_MSG_STOP: proto_decode_stop(msg, len, &cancel, &code, why, sizeof why); break;
        case FS_MSG_RESUMED: proto_decode_resumed(msg, len, &it, &rep, &rnext, note, sizeof note, why, sizeof why); break;
        }
    }
    CHECK(1); /* reaching here under the sanitizer build is the assertion */
    train_result_free(&r);
    buf_free(&b);
    return test_finish();
}
