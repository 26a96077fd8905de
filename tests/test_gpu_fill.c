/*
 * A launch's fill (run/gpu_driver.c, run_gpu_fill_share): cap jobs of
 * capacity cap fill the device exactly, for every capacity up to the
 * launch's 4096 models, never cap + 1 (the float sum of 1.0 / cap it
 * replaced built cap + 1 models for capacities 6, 7, 10, 13, ...); mixed
 * capacities never overfill it (a job of capacity 2 then two of capacity 4
 * fill it; one of capacity 2 and one of 4 do not); a library group's width
 * counts as that many models (two groups of 32 fill a device of 64; on a
 * device of cap, a group of 3 and cap - 3 models do, cap - 4 do not).
 */
#include "run/gpu_driver.h"

#include "test.h"

/* Adds a share; 1 once the device is full. */
static int add(uint64_t *used, int cap, int models)
{
    *used += run_gpu_fill_share(cap, models);
    return *used >= FS_GPU_FILL_UNIT;
}

int main(void)
{
    int wrong = 0;
    for (int cap = 1; cap <= 4096; cap++) {
        uint64_t used = 0;
        int n = 0, full = 0;
        while (!full && n < cap + 2) full = add(&used, cap, 1), n++;
        if (n != cap && wrong++ < 5) CHECK_MSG(n == cap, "capacity %d: a launch of %d jobs", cap, n);
    }
    CHECK(wrong == 0);
    uint64_t used = 0;
    CHECK(add(&used, 2, 1) == 0 && add(&used, 4, 1) == 0 && add(&used, 4, 1) == 1);
    used = 0;
    CHECK(add(&used, 0, 1) == 1); /* no room reported: one job alone */
    used = 0;
    CHECK(add(&used, 64, 32) == 0 && add(&used, 64, 32) == 1);
    CHECK(run_gpu_fill_share(64, 32) == FS_GPU_FILL_UNIT / 2);
    for (int cap = 4; cap <= 300; cap++) {
        used = 0;
        int full = add(&used, cap, 3);
        for (int k = 0; k < cap - 4; k++) full |= add(&used, cap, 1);
        CHECK_MSG(!full, "capacity %d: a group of 3 and %d models filled it", cap, cap - 4);
        CHECK_MSG(add(&used, cap, 1), "capacity %d: a group of 3 and %d models did not fill it", cap, cap - 3);
    }
    CHECK(run_gpu_fill_share(10, 0) == run_gpu_fill_share(10, 1)); /* no width counts as one model */
    return test_finish();
}
