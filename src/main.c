/* foldsweep entry point: everything lives in the cli module (tests drive it in-process).
 * This file is compiled for the architecture's baseline, like util/cpu.c
 * (CMakeLists.txt): the CPU check runs before main, before any code built
 * for the build machine's CPU. */
#include "cli/cli.h"
#include "util/util.h"

#if defined(__GNUC__)
/* Priority 101, the first a program may use: before other constructors. */
__attribute__((constructor(101))) static void cpu_gate(void) { fs_cpu_gate(); }
#endif

int main(int argc, char **argv) { return cli_main(argc, argv); }
