/*
 * test_emu_device.h: a test on the CUDA stand-in's device with the memory
 * it sets (FOLDSWEEP_EMU_MEMORY, read by the stand-in on its first call):
 * skipped where the build has no stand-in or it shows no device.
 */
#ifndef FS_TEST_EMU_DEVICE_H
#define FS_TEST_EMU_DEVICE_H

#include <stdlib.h>

#include "gpu/gpu.h"
#include "test.h"

static inline void ted_start(const char *memory)
{
    setenv("FOLDSWEEP_EMU_MEMORY", memory, 1);
    if (!gpu_emulated()) TEST_SKIP("sets the device's memory: needs the CUDA stand-in (FOLDSWEEP_CUDA=EMULATE)");
    if (gpu_count() == 0) {
        char why[256];
        gpu_describe(0, why, sizeof why);
        TEST_SKIP("no device: %s", why);
    }
}

#endif
