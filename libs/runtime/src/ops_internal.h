/*
 * ops_internal.h -- PRIVATE: what the public op files (ops.c, ops_encoder.c,
 * ops_ssm.c, ops_moe.c) share: argument checks done once for every backend,
 * the clock, per-op statistics and the UNSUPPORTED message of an optional op.
 * Defined in ops.c.
 */
#ifndef LLM_RUNTIME_OPS_INTERNAL_H
#define LLM_RUNTIME_OPS_INTERNAL_H

#include <stdint.h>

#include "backend.h"

/* Monotonic nanoseconds. */
uint64_t llm__op_now_ns(void);
/* t lives in a buffer of be, has a known type, no empty dimension, rows of
 * whole blocks, and its byte extent fits its buffer (else INVALID_ARG naming
 * op and what). */
llm_status llm__op_check_tensor(llm_backend *be, const llm_tensor *t, const char *op, const char *what);
/* The same, and contiguous F32. */
llm_status llm__op_check_f32(llm_backend *be, const llm_tensor *t, const char *op, const char *what);
/* Counts a call of op that started at t0 and moved `bytes`; calls the hook. */
void llm__op_account(llm_backend *be, llm_op op, const llm_tensor *out, uint64_t t0, uint64_t bytes);
/* LLM_ERR_UNSUPPORTED: "<op>: not implemented by the <name> backend". */
llm_status llm__op_unsupported(llm_backend *be, llm_op op);

#endif
