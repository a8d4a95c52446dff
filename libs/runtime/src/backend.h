/*
 * backend.h -- the private interface every backend implements.
 *
 * The public llm_op_* functions (ops.c) validate shapes once for all backends,
 * time the call, then jump through this table. A new backend (CUDA) fills the
 * same table; this struct is the single list of ops a backend must provide.
 */
#ifndef LLM_RUNTIME_BACKEND_H
#define LLM_RUNTIME_BACKEND_H

#include <stdarg.h>

#include "llama/runtime.h"

typedef struct llm__backend_iface {
    const char *name;
    void (*destroy)(llm_backend *be);
    llm_status (*synchronize)(llm_backend *be);
    int (*supports)(const llm_backend *be, llm_op op, llm_dtype dtype);

    /* Memory. data is the backend's pointer (host or device). */
    llm_status (*buf_alloc)(llm_backend *be, size_t size, void **data);
    llm_status (*buf_wrap)(llm_backend *be, const void *host, size_t size, void **data,
                           int *wrapped);
    void (*buf_free)(llm_backend *be, void *data, int wrapped);
    llm_status (*buf_write)(llm_backend *be, void *data, size_t off, const void *src, size_t n);
    llm_status (*buf_read)(llm_backend *be, const void *data, size_t off, void *dst, size_t n);
    llm_status (*buf_clear)(llm_backend *be, void *data, size_t size);

    /* Ops: arguments already validated by ops.c. */
    llm_status (*get_rows)(llm_backend *be, const llm_tensor *out, const llm_tensor *w,
                           const int32_t *ids, int64_t n);
    llm_status (*matmul)(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                         const llm_tensor *w);
    llm_status (*rms_norm)(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                           const llm_tensor *weight, float eps);
    llm_status (*rope)(llm_backend *be, const llm_tensor *x, const int32_t *positions,
                       const llm_rope_params *p);
    llm_status (*swiglu)(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                         const llm_tensor *up);
    llm_status (*add)(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                      const llm_tensor *b);
    llm_status (*mul)(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                      const llm_tensor *b);
    llm_status (*scale)(llm_backend *be, const llm_tensor *out, const llm_tensor *x, float s);
    llm_status (*softmax)(llm_backend *be, const llm_tensor *out, const llm_tensor *x);
    llm_status (*kv_write)(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                           const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                           const int32_t *block_table, int32_t n_table);
    llm_status (*attention)(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                            const llm_tensor *k_cache, const llm_tensor *v_cache,
                            const int32_t *positions, const int32_t *block_table,
                            int32_t n_table, const llm_attn_params *p);
    llm_status (*argmax)(llm_backend *be, const llm_tensor *x, int32_t *out_ids);
    /* NULL: the op returns LLM_ERR_UNSUPPORTED. */
    llm_status (*geglu)(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                        const llm_tensor *up);
} llm__backend_iface;

/* Optional entry points added after the table was fixed. They live in the
 * (zero-initialised) backend handle, so a backend that does not know them
 * keeps compiling and gets the generic fallback. */
typedef struct llm__backend_ext {
    /* Device-side copy; NULL: llm_buffer_copy bounces through host memory. */
    llm_status (*buf_copy)(llm_backend *be, void *dst, size_t dst_off, const void *src,
                           size_t src_off, size_t n);
    /* Encoder ops (ops_encoder.c); NULL: LLM_ERR_UNSUPPORTED. */
    llm_status (*layer_norm)(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                             const llm_tensor *weight, const llm_tensor *bias, float eps);
    llm_status (*gelu)(llm_backend *be, const llm_tensor *out, const llm_tensor *x);
    llm_status (*attention_full)(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                 const llm_tensor *k, const llm_tensor *v, const int32_t *seq_lens,
                                 int32_t n_seqs, float scale);
    /* llm_op_matmul_invariant; NULL: LLM_ERR_UNSUPPORTED. */
    llm_status (*matmul_invariant)(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                   const llm_tensor *w);
    /* Recurrent ops (ops_ssm.c); NULL: LLM_ERR_UNSUPPORTED. */
    llm_status (*unary)(llm_backend *be, const llm_tensor *out, const llm_tensor *x, llm_unary kind);
    llm_status (*ssm_conv)(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *state,
                           const llm_tensor *w);
    llm_status (*gated_delta)(llm_backend *be, const llm_tensor *out, const llm_tensor *q, const llm_tensor *k,
                              const llm_tensor *v, const llm_tensor *g, const llm_tensor *beta,
                              const llm_tensor *state);
    /* Mixture-of-experts ops (ops_moe.c); NULL: LLM_ERR_UNSUPPORTED. */
    llm_status (*matmul_id)(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                            const int32_t *ids);
    llm_status (*moe_topk)(llm_backend *be, const llm_tensor *weights, int32_t *ids, const llm_tensor *probs,
                           int32_t n_used, int norm);
    llm_status (*moe_sum)(llm_backend *be, const llm_tensor *out, const llm_tensor *e, const llm_tensor *w);
    /* llm_backend_prepare_weight (w in a wrapped buffer, checked); NULL: nothing kept. */
    llm_status (*prepare_weight)(llm_backend *be, const llm_tensor *w, int *kept);
    /* Called by llm_buffer_free before buf_free (NULL: nothing to do). */
    void (*buf_forget)(llm_backend *be, const llm_buffer *buf);
} llm__backend_ext;

struct llm_backend {
    const llm__backend_iface *iface;
    void *impl; /* backend-private state */
    llm_backend_params params;
    int n_threads;
    char kernels[64];
    llm_op_stats stats[LLM_OP_COUNT];
    llm__backend_ext ext; /* optional extensions, zero unless the backend sets them */
};

struct llm_buffer {
    llm_backend *be;
    void *data; /* host pointer on CPU, device pointer elsewhere */
    size_t size;
    int wrapped; /* 1: memory not owned (read-only host region) */
};

/* Sets the thread-local error message; returns st for `return llm__err(...)`. */
llm_status llm__err(llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Backend constructors (NOT_FOUND when not built in). The CUDA ones are in
 * cuda_loader.c, which forwards to the run-time module (cuda/cuda_module.h);
 * the _auto variant loads the module only where an NVIDIA driver is loaded. */
llm_status llm__cpu_backend_create(const llm_backend_params *p, llm_backend **out);
llm_status llm__cuda_backend_create(const llm_backend_params *p, llm_backend **out);
llm_status llm__cuda_backend_create_auto(const llm_backend_params *p, llm_backend **out);

/* Host address of a tensor's first element (CPU backend only). */
static inline void *llm__host_ptr(const llm_tensor *t) {
    return (char *)t->buffer->data + t->offset;
}

#endif
