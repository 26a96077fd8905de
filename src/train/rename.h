/*
 * train/rename.h: the per-model functions of the single source (src/train's
 * act.c, blocks.c, conv.c, dense.c, fit.c, gemm.c, layers.c, rnn.c, attention.c, step.c and
 * stop/stop.c's rule) renamed to OPS_PREFIX##name, for a unit that builds
 * its own copy of them beside the library's CPU build: the CUDA stand-in's
 * kernel (kernels/fit_kernel.cu under FOLDSWEEP_CUDA=EMULATE), the tests'
 * emulated blocks (tests/test_block.c, tests/reference/ops_emu.c) and
 * tests/reference/ops_gpu.cu (nvcc, whose host stubs of __device__
 * functions would otherwise clash with kernels/fit_kernel.cu in the
 * library). Include before anything that declares them. A new non-static
 * function in those files belongs here (a duplicate symbol at link time
 * says so).
 */
#ifndef FS_TRAIN_RENAME_H
#define FS_TRAIN_RENAME_H

#define OPS_CAT2(a, b) a##b
#define OPS_CAT(a, b) OPS_CAT2(a, b)
#define OPS_RENAME(name) OPS_CAT(OPS_PREFIX, name)

#define act_backward OPS_RENAME(act_backward)
#define add_backward OPS_RENAME(add_backward)
#define add_forward OPS_RENAME(add_forward)
#define add_skips OPS_RENAME(add_skips)
#define act_forward OPS_RENAME(act_forward)
#define act_grad OPS_RENAME(act_grad)
#define attention_backward OPS_RENAME(attention_backward)
#define attention_forward OPS_RENAME(attention_forward)
#define batchnorm_backward OPS_RENAME(batchnorm_backward)
#define batchnorm_forward OPS_RENAME(batchnorm_forward)
#define chain_mask_rows OPS_RENAME(chain_mask_rows)
#define conv_backward_part OPS_RENAME(conv_backward_part)
#define conv_forward_part OPS_RENAME(conv_forward_part)
#define conv_dgrad OPS_RENAME(conv_dgrad)
#define conv_gemm OPS_RENAME(conv_gemm)
#define conv_wgrad OPS_RENAME(conv_wgrad)
#define dense_backward OPS_RENAME(dense_backward)
#define dense_backward_fused OPS_RENAME(dense_backward_fused)
#define dense_forward OPS_RENAME(dense_forward)
#define dropout_backward OPS_RENAME(dropout_backward)
#define dropout_forward OPS_RENAME(dropout_forward)
#define fit_model OPS_RENAME(fit_model)
#define gather_backward OPS_RENAME(gather_backward)
#define fit_lib_op OPS_RENAME(fit_lib_op)
#define gather_forward OPS_RENAME(gather_forward)
#define input_features OPS_RENAME(input_features)
#define highway_backward OPS_RENAME(highway_backward)
#define highway_forward OPS_RENAME(highway_forward)
#define layer_backward OPS_RENAME(layer_backward)
#define layer_backward_done OPS_RENAME(layer_backward_done)
#define layer_forward OPS_RENAME(layer_forward)
#define layer_forward_done OPS_RENAME(layer_forward_done)
#define layernorm_backward OPS_RENAME(layernorm_backward)
#define layernorm_forward OPS_RENAME(layernorm_forward)
#define ops_gemm OPS_RENAME(ops_gemm)
#define ops_gemm_rows OPS_RENAME(ops_gemm_rows)
#define ops_gemm_act OPS_RENAME(ops_gemm_act)
#define ops_gemm_stage OPS_RENAME(ops_gemm_stage)
#define conv_gemm_act OPS_RENAME(conv_gemm_act)
#define ops_transpose OPS_RENAME(ops_transpose)
#define rnn_backward OPS_RENAME(rnn_backward)
#define rnn_forward OPS_RENAME(rnn_forward)
#define rows_colsum OPS_RENAME(rows_colsum)
#define rows_set OPS_RENAME(rows_set)
#define step_backward OPS_RENAME(step_backward)
#define step_backward_part OPS_RENAME(step_backward_part)
#define step_forward OPS_RENAME(step_forward)
#define step_forward_part OPS_RENAME(step_forward_part)
#define step_layer_gemm OPS_RENAME(step_layer_gemm)
#define step_load_batch OPS_RENAME(step_load_batch)
#define step_load_chain OPS_RENAME(step_load_chain)
#define step_loss OPS_RENAME(step_loss)
#define step_opt OPS_RENAME(step_opt)
#define step_update OPS_RENAME(step_update)
#define stop_init OPS_RENAME(stop_init)
#define stop_update OPS_RENAME(stop_update)

#endif
