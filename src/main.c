/* foldsweep entry point: everything lives in the cli module (tests drive it in-process). */
#include "cli/cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
