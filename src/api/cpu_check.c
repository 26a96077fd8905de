/*
 * cpu_check.c: foldsweep_cpu_missing, built for the architecture's
 * baseline (CMakeLists.txt) like main.c's gate: the Python package asks it
 * before its first other call, so that a library built for a newer CPU
 * raises an ImportError naming what is missing instead of dying of SIGILL.
 */
#include "api/foldsweep.h"
#include "util/util.h"

int foldsweep_cpu_missing(char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    return fs_cpu_missing(fs_cpu_built, fs_cpu_has, buf, n) != 0;
}
