/*
 * A launch's fill (run/gpu_driver.c, run_gpu_fill): cap jobs of capacity
 * cap fill the device exactly, for every capacity up to the launch's 4096
 * models, never cap + 1 (the float sum of 1.0 / cap it replaced built
 * cap + 1 models for capacities 6, 7, 10, 13, ...); mixed capacities never
 * overfill it (a job of capacity 2 then two of capacity 4 fill it; one of
 * capacity 2 and one of 4 do not).
 */
#include "run/gpu_driver.h"

#include "test.h"

int main(void)
{
    int wrong = 0;
    for (int cap = 1; cap <= 4096; cap++) {
        uint64_t used = 0;
        int n = 0, full = 0;
        while (!full && n < cap + 2) full = run_gpu_fill(&used, cap), n++;
        if (n != cap && wrong++ < 5) CHECK_MSG(n == cap, "capacity %d: a launch of %d jobs", cap, n);
    }
    CHECK(wrong == 0);
    uint64_t used = 0;
    CHECK(run_gpu_fill(&used, 2) == 0 && run_gpu_fill(&used, 4) == 0 && run_gpu_fill(&used, 4) == 1);
    used = 0;
    CHECK(run_gpu_fill(&used, 0) == 1); /* no room reported: one job alone */
    return test_finish();
}
