/*
 * mpi/watchdog.h: internal to the mpi module. The start-up watchdog of
 * fsmpi_init: a thread that ends this process if MPI's start-up does not
 * finish in time, naming the stage it was stuck in.
 */
#ifndef FS_MPI_WATCHDOG_H
#define FS_MPI_WATCHDOG_H

/* Starts the watchdog (timeout <= 0: none). The first stage is named. */
void fsmpi_watchdog_start(double timeout, const char *stage);
/* The stage start-up is in now (a string that lives on); no-op without a
 * watchdog. */
void fsmpi_watchdog_stage(const char *stage);
/* Start-up is over: the thread ends (joined). */
void fsmpi_watchdog_stop(void);
/* This process's rank as the launcher set it in the environment (before
 * MPI knows it), or -1. */
int fsmpi_launcher_rank(void);

#endif
