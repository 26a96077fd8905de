# cuda_resources: the fit kernel's resource use on every architecture the
# CUDA backend builds, held to the block the launcher uses (CTest test
# cuda_resources, label gpu-build; tests/CMakeLists.txt registers it where
# the backend is built with nvcc).
#
#   cmake -DNVCC=<nvcc> -DSRC=<source root> "-DARCHS=80-real;90" -DOUT=<dir>
#         [-DFLAGS=<extra nvcc flags, ;-separated>] -P cuda_resources.cmake
#
# For each architecture with machine code (NN, NN-real; NN-virtual has
# none) it compiles kernels/fit_kernel.cu as the library does, once more
# with ptxas's report (-Xptxas -v: cuobjdump -res-usage does not print
# spills, and is not in every toolkit install), and fails, naming the
# architecture, the function and the figure, when
#   - any function of the kernel (the entry or a function it calls) spills
#     registers (spill stores or spill loads > 0), or
#   - the entry's registers per thread forbid FS_GPU_MIN_BLOCKS blocks of
#     FS_GPU_THREADS threads on one SM (65536 registers, allocated per warp
#     in units of 256), or
#   - the entry's static shared memory exceeds FS_GPU_STATIC_SHARED, which
#     the host subtracts from a block's share of the SM before it gives
#     the rest to the models' weights (gpu_block_shared): more would cost
#     a block on the SM.
# FS_GPU_THREADS, FS_GPU_MIN_BLOCKS and FS_GPU_STATIC_SHARED are read from
# src/train/kernel.h, where the kernel's __launch_bounds__ takes them too.
cmake_minimum_required(VERSION 3.16)

foreach(var NVCC SRC ARCHS OUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "cuda_resources: -D${var}=... is required")
  endif()
endforeach()

file(READ "${SRC}/src/train/kernel.h" kernel_h)
foreach(macro FS_GPU_THREADS FS_GPU_MIN_BLOCKS FS_GPU_STATIC_SHARED)
  if(NOT kernel_h MATCHES "#define[ \t]+${macro}[ \t]+([0-9]+)")
    message(FATAL_ERROR "cuda_resources: no #define ${macro} <number> in src/train/kernel.h")
  endif()
  set(${macro} ${CMAKE_MATCH_1})
endforeach()
set(regs_per_sm 65536)
math(EXPR warps_per_block "(${FS_GPU_THREADS} + 31) / 32")

file(MAKE_DIRECTORY "${OUT}")
set(failures "")
set(checked 0)
foreach(arch IN LISTS ARCHS)
  if(arch MATCHES "-virtual$")
    message(STATUS "${arch}: PTX only, no machine code to check")
    continue()
  endif()
  if(NOT arch MATCHES "^([0-9]+[af]?)(-real)?$")
    message(FATAL_ERROR "cuda_resources: cannot read the architecture '${arch}'")
  endif()
  set(sm "sm_${CMAKE_MATCH_1}")
  execute_process(
    COMMAND "${NVCC}" -arch=${sm} -cubin -Xptxas -v -DFS_HAVE_CUDA=1 -I${SRC}/src ${FLAGS}
            "${SRC}/kernels/fit_kernel.cu" -o "${OUT}/fit_kernel_${sm}.cubin"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  file(WRITE "${OUT}/ptxas_${sm}.txt" "${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cuda_resources: ${sm}: nvcc failed (${rc}):\n${out}")
  endif()

  # ptxas prints, per function: "Function properties for NAME", then
  # "N bytes stack frame, S bytes spill stores, L bytes spill loads"; for
  # the entry also "Compiling entry function 'NAME'" before and "Used R
  # registers" after.
  string(REPLACE "\n" ";" lines "${out}")
  set(func "")
  set(entry "")
  set(entry_regs "")
  set(entry_smem 0)
  set(entry_stack "")
  set(total_stores 0)
  set(total_loads 0)
  set(nfuncs 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "Compiling entry function '([^']+)'")
      set(entry "${CMAKE_MATCH_1}")
    elseif(line MATCHES "Function properties for ([^ ]+)")
      set(func "${CMAKE_MATCH_1}")
    elseif(line MATCHES "([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
      set(stack ${CMAKE_MATCH_1})
      set(stores ${CMAKE_MATCH_2})
      set(loads ${CMAKE_MATCH_3})
      math(EXPR nfuncs "${nfuncs} + 1")
      math(EXPR total_stores "${total_stores} + ${stores}")
      math(EXPR total_loads "${total_loads} + ${loads}")
      if(func STREQUAL entry)
        set(entry_stack ${stack})
      endif()
      if(stores GREATER 0 OR loads GREATER 0)
        list(APPEND failures "${sm}: ${func}: ${stores} bytes spill stores, ${loads} bytes spill loads (must be 0)")
      endif()
    elseif(line MATCHES "Used ([0-9]+) registers" AND NOT entry STREQUAL "" AND entry_regs STREQUAL "")
      set(entry_regs ${CMAKE_MATCH_1})
      if(line MATCHES "([0-9]+) bytes smem")
        set(entry_smem ${CMAKE_MATCH_1})
      endif()
    endif()
  endforeach()
  if(entry STREQUAL "" OR entry_regs STREQUAL "" OR nfuncs EQUAL 0)
    message(FATAL_ERROR "cuda_resources: ${sm}: no entry function, register count or function properties "
                        "in ptxas's report (${OUT}/ptxas_${sm}.txt)")
  endif()

  # Registers are allocated per warp in units of 256 (8 per thread).
  math(EXPR regs_alloc "(${entry_regs} + 7) / 8 * 8")
  math(EXPR block_regs "${regs_alloc} * 32 * ${warps_per_block}")
  math(EXPR blocks_per_sm "${regs_per_sm} / ${block_regs}")
  math(EXPR max_regs "${regs_per_sm} / (${FS_GPU_THREADS} * ${FS_GPU_MIN_BLOCKS}) / 8 * 8")
  message(STATUS "${sm}: ${entry}: ${entry_regs} registers, ${entry_smem} bytes static shared memory "
                 "(FS_GPU_STATIC_SHARED ${FS_GPU_STATIC_SHARED}), ${entry_stack} bytes stack frame, "
                 "${total_stores} bytes spill stores, ${total_loads} bytes spill loads (${nfuncs} functions); "
                 "${blocks_per_sm} blocks of ${FS_GPU_THREADS} threads per SM by registers "
                 "(FS_GPU_MIN_BLOCKS ${FS_GPU_MIN_BLOCKS}: at most ${max_regs} registers)")
  if(blocks_per_sm LESS FS_GPU_MIN_BLOCKS)
    list(APPEND failures "${sm}: ${entry}: ${entry_regs} registers per thread allow ${blocks_per_sm} blocks of "
                         "${FS_GPU_THREADS} threads per SM, fewer than FS_GPU_MIN_BLOCKS ${FS_GPU_MIN_BLOCKS} "
                         "(at most ${max_regs} registers)")
  endif()
  if(entry_smem GREATER FS_GPU_STATIC_SHARED)
    list(APPEND failures "${sm}: ${entry}: ${entry_smem} bytes of static shared memory, more than "
                         "FS_GPU_STATIC_SHARED ${FS_GPU_STATIC_SHARED} (src/train/kernel.h)")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "cuda_resources: no architecture with machine code in '${ARCHS}'")
endif()
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "cuda_resources: the fit kernel does not fit the launcher's block:\n  ${text}")
endif()
message(STATUS "cuda_resources: ${checked} architecture(s) within the block's budget, no spills")
