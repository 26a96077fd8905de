/*
 * run/checkpoints.h: internal to the run module. Mid-fold checkpoints in
 * the run folder (checkpoints.c): their files, and rank 0's own folds'
 * checkpointing. Worker ranks use the file-free part (the test hooks)
 * without seeing rank 0's state.
 */
#ifndef FS_RUN_CHECKPOINTS_H
#define FS_RUN_CHECKPOINTS_H

#include <stdint.h>
#include <stdio.h>

#include "train/train.h"
#include "util/util.h"

struct RunState;
/* Mid-fold checkpoints (checkpoints.c): the file of (trial, fold)
 * relative to the run folder; writing one durably; reading one (NULL if
 * absent; path gets its full name); removing one (a recorded fold). */
void run_ckpt_file(char *out, size_t n, const char *trial, int fold);
int run_ckpt_write(const char *dir, const char *trial, int fold, const uint8_t *bytes, uint64_t n, FsErr *err);
uint8_t *run_ckpt_read(const char *dir, const char *trial, int fold, uint64_t *n, char *path, size_t path_n);
void run_ckpt_remove(const char *dir, const char *trial, int fold);
/* Rank 0's job i as it starts: checkpointing on (run.checkpoint) and its
 * checkpoint, if any, to resume from; detach after it ends. */
void run_ckpt_attach(struct RunState *st, int i);
void run_ckpt_detach(struct RunState *st, int i);
/* Says that a fold resumed (out, unless quiet) or that its checkpoint was
 * refused and why (stderr). */
void run_ckpt_report(const FsCheckpointing *cs, const char *trial, int fold, FILE *out, int quiet);
/* Test hooks (see checkpoints.c): checkpoint every N steps (0: by time),
 * and the kill in an epoch's validation. */
long run_ckpt_test_steps(void);
void run_ckpt_test_event(int epoch);

#endif
