/*
 * runtime.c -- tensor views, backend creation and buffers: the parts of the
 * public API that only forward to the backend table. Calls go one way: this
 * file calls the backends' create functions (cpu/backend_cpu.c,
 * cuda/backend_cuda.cu); the backends call nothing here (their errors go
 * through runtime_error.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* ---------------------------------------------------------------- tensors -- */

llm_tensor llm_tensor_4d(llm_buffer *buf, size_t offset, llm_dtype dtype, int64_t ne0,
                         int64_t ne1, int64_t ne2, int64_t ne3) {
    llm_tensor t;
    memset(&t, 0, sizeof(t));
    t.dtype = dtype;
    size_t bs = llm_dtype_block_size(dtype), bb = llm_dtype_block_bytes(dtype);
    if (!llm_dtype_is_known((int)dtype) || bs == 0 || ne0 < 0 || ne0 % (int64_t)bs != 0 ||
        ne1 < 0 || ne2 < 0 || ne3 < 0) {
        return t; /* buffer NULL marks the view invalid */
    }
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.ne[2] = ne2;
    t.ne[3] = ne3;
    t.nb[0] = bb;
    t.nb[1] = bb * (size_t)(ne0 / (int64_t)bs);
    t.nb[2] = t.nb[1] * (size_t)ne1;
    t.nb[3] = t.nb[2] * (size_t)ne2;
    t.buffer = buf;
    t.offset = offset;
    return t;
}

size_t llm_tensor_nbytes(const llm_tensor *t) { return t->nb[3] * (size_t)t->ne[3]; }

llm_tensor llm_tensor_rows(const llm_tensor *t, int64_t first, int64_t n) {
    llm_tensor r = *t;
    r.offset = t->offset + (size_t)first * t->nb[1];
    r.ne[1] = n;
    r.nb[2] = r.nb[1] * (size_t)n;
    r.nb[3] = r.nb[2] * (size_t)r.ne[2];
    return r;
}

/* ---------------------------------------------------------------- backend -- */

static const char *const g_op_names[LLM_OP_COUNT] = {
    "get_rows", "matmul", "rms_norm", "rope",     "swiglu",    "add",
    "mul",      "scale",  "softmax",  "kv_write", "attention", "argmax",
    "geglu",    "layer_norm", "gelu", "attention_full", "matmul_invariant",
    "unary",    "ssm_conv", "gated_delta",
    "matmul_id", "moe_topk", "moe_sum",
};

const char *llm_op_name(llm_op op) {
    return (op >= 0 && op < LLM_OP_COUNT) ? g_op_names[op] : "?";
}

llm_backend_params llm_backend_default_params(void) {
    llm_backend_params p;
    memset(&p, 0, sizeof(p));
    p.n_threads = 0;
    p.kernels = LLM_KERNELS_AUTO;
    return p;
}

llm_status llm_backend_create(const char *name, const llm_backend_params *params,
                              llm_backend **out) {
    if (!out) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_backend_create: out is NULL");
    }
    *out = NULL;
    llm_backend_params p = params ? *params : llm_backend_default_params();
    if (!name || strcmp(name, "auto") == 0) {
        /* cuda_loader.c: loads the CUDA module only where a driver is present. */
        llm_status st = llm__cuda_backend_create_auto(&p, out);
        if (st == LLM_OK) {
            return st;
        }
        return llm__cpu_backend_create(&p, out);
    }
    if (strcmp(name, "cpu") == 0) {
        return llm__cpu_backend_create(&p, out);
    }
    if (strcmp(name, "cuda") == 0) {
        return llm__cuda_backend_create(&p, out);
    }
    return llm__err(LLM_ERR_NOT_FOUND, "unknown backend '%s' (try cpu, cuda, auto)", name);
}

void llm_backend_free(llm_backend *be) {
    if (be) {
        be->iface->destroy(be);
    }
}

const char *llm_backend_name(const llm_backend *be) { return be ? be->iface->name : "?"; }
int llm_backend_n_threads(const llm_backend *be) { return be ? be->n_threads : 0; }
const char *llm_backend_kernels(const llm_backend *be) { return be ? be->kernels : "?"; }

int llm_backend_supports(const llm_backend *be, llm_op op, llm_dtype dtype) {
    if (!be || !llm_dtype_is_known((int)dtype)) {
        return 0;
    }
    switch (op) { /* the encoder ops are optional extensions (backend.h) */
    case LLM_OP_LAYER_NORM: return dtype == LLM_DTYPE_F32 && be->ext.layer_norm != NULL;
    case LLM_OP_GELU: return dtype == LLM_DTYPE_F32 && be->ext.gelu != NULL;
    case LLM_OP_ATTENTION_FULL: return dtype == LLM_DTYPE_F32 && be->ext.attention_full != NULL;
    case LLM_OP_UNARY: return dtype == LLM_DTYPE_F32 && be->ext.unary != NULL;
    case LLM_OP_SSM_CONV: return dtype == LLM_DTYPE_F32 && be->ext.ssm_conv != NULL;
    case LLM_OP_GATED_DELTA: return dtype == LLM_DTYPE_F32 && be->ext.gated_delta != NULL;
    case LLM_OP_MATMUL_INVARIANT:
        return be->ext.matmul_invariant != NULL && be->iface->supports(be, LLM_OP_MATMUL, dtype);
    case LLM_OP_MATMUL_ID: return be->ext.matmul_id != NULL && be->iface->supports(be, LLM_OP_MATMUL, dtype);
    case LLM_OP_MOE_TOPK: return dtype == LLM_DTYPE_F32 && be->ext.moe_topk != NULL;
    case LLM_OP_MOE_SUM: return dtype == LLM_DTYPE_F32 && be->ext.moe_sum != NULL;
    default: return be->iface->supports(be, op, dtype);
    }
}

llm_status llm_backend_synchronize(llm_backend *be) {
    if (!be) {
        return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    }
    return be->iface->synchronize ? be->iface->synchronize(be) : LLM_OK;
}

void llm_backend_stats(const llm_backend *be, llm_op_stats stats[LLM_OP_COUNT]) {
    memcpy(stats, be->stats, sizeof(be->stats));
}

void llm_backend_reset_stats(llm_backend *be) { memset(be->stats, 0, sizeof(be->stats)); }

/* ---------------------------------------------------------------- buffers -- */

llm_status llm_buffer_alloc(llm_backend *be, size_t size, llm_buffer **out) {
    if (!be || !out) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_buffer_alloc: NULL argument");
    }
    *out = NULL;
    llm_buffer *b = calloc(1, sizeof(*b));
    if (!b) {
        return llm__err(LLM_ERR_NO_MEMORY, "out of memory allocating a buffer handle");
    }
    llm_status st = be->iface->buf_alloc(be, size, &b->data);
    if (st != LLM_OK) {
        free(b);
        return st;
    }
    b->be = be;
    b->size = size;
    *out = b;
    return LLM_OK;
}

llm_status llm_buffer_wrap_host(llm_backend *be, const void *ptr, size_t size, llm_buffer **out) {
    if (!be || !out || (!ptr && size)) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_buffer_wrap_host: NULL argument");
    }
    *out = NULL;
    llm_buffer *b = calloc(1, sizeof(*b));
    if (!b) {
        return llm__err(LLM_ERR_NO_MEMORY, "out of memory allocating a buffer handle");
    }
    llm_status st = be->iface->buf_wrap(be, ptr, size, &b->data, &b->wrapped);
    if (st != LLM_OK) {
        free(b);
        return st;
    }
    b->be = be;
    b->size = size;
    *out = b;
    return LLM_OK;
}

void llm_buffer_free(llm_buffer *buf) {
    if (!buf) {
        return;
    }
    if (buf->be->ext.buf_forget) buf->be->ext.buf_forget(buf->be, buf);
    buf->be->iface->buf_free(buf->be, buf->data, buf->wrapped);
    free(buf);
}

static int range_ok(const llm_buffer *buf, size_t off, size_t n) {
    return buf && off <= buf->size && n <= buf->size - off;
}

llm_status llm_backend_prepare_weight(llm_backend *be, const llm_tensor *w, int *kept) {
    if (kept) *kept = 0;
    if (!be || !w || !kept || !w->buffer) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_backend_prepare_weight: NULL argument");
    }
    if (w->buffer->be != be) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_backend_prepare_weight: the tensor's buffer belongs to another backend");
    }
    if ((unsigned)w->dtype >= LLM_DTYPE_END_ || !range_ok(w->buffer, w->offset, llm_tensor_nbytes(w))) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_backend_prepare_weight: bad type or tensor outside its buffer");
    }
    if (!w->buffer->wrapped || !be->ext.prepare_weight) {
        return LLM_OK; /* only read-only weights; a backend without layouts of its own keeps nothing */
    }
    return be->ext.prepare_weight(be, w, kept);
}

llm_status llm_buffer_write(llm_buffer *buf, size_t offset, const void *src, size_t n) {
    if (!range_ok(buf, offset, n) || (!src && n)) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_buffer_write: range [%zu, +%zu) outside buffer",
                        offset, n);
    }
    if (buf->wrapped) {
        return llm__err(LLM_ERR_STATE, "llm_buffer_write: buffer wraps read-only host memory");
    }
    return n ? buf->be->iface->buf_write(buf->be, buf->data, offset, src, n) : LLM_OK;
}

llm_status llm_buffer_read(const llm_buffer *buf, size_t offset, void *dst, size_t n) {
    if (!range_ok(buf, offset, n) || (!dst && n)) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_buffer_read: range [%zu, +%zu) outside buffer",
                        offset, n);
    }
    return n ? buf->be->iface->buf_read(buf->be, buf->data, offset, dst, n) : LLM_OK;
}

llm_status llm_buffer_copy(llm_buffer *dst, size_t dst_offset, const llm_buffer *src,
                           size_t src_offset, size_t n) {
    if (!range_ok(dst, dst_offset, n) || !range_ok(src, src_offset, n) || dst->be != src->be) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_buffer_copy: ranges outside buffers or backends differ");
    }
    if (dst->wrapped) {
        return llm__err(LLM_ERR_STATE, "llm_buffer_copy: destination wraps read-only host memory");
    }
    if (n == 0) {
        return LLM_OK;
    }
    llm_backend *be = dst->be;
    if (be->ext.buf_copy) {
        return be->ext.buf_copy(be, dst->data, dst_offset, src->data, src_offset, n);
    }
    /* Fallback for backends without a device copy: bounce through the host. */
    size_t chunk = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
    char *tmp = malloc(chunk);
    if (!tmp) {
        return llm__err(LLM_ERR_NO_MEMORY, "llm_buffer_copy: no memory for a bounce buffer");
    }
    llm_status st = LLM_OK;
    /* Copy backwards when dst is above an overlapping src, as memmove does. */
    int backwards = src == dst && dst_offset > src_offset;
    for (size_t done = 0; done < n && st == LLM_OK; done += chunk) {
        size_t len = n - done < chunk ? n - done : chunk;
        size_t at = backwards ? n - done - len : done;
        st = be->iface->buf_read(be, src->data, src_offset + at, tmp, len);
        if (st == LLM_OK) {
            st = be->iface->buf_write(be, dst->data, dst_offset + at, tmp, len);
        }
    }
    free(tmp);
    return st;
}

llm_status llm_buffer_clear(llm_buffer *buf) {
    if (!buf) {
        return llm__err(LLM_ERR_INVALID_ARG, "llm_buffer_clear: NULL buffer");
    }
    if (buf->wrapped) {
        return llm__err(LLM_ERR_STATE, "llm_buffer_clear: buffer wraps read-only host memory");
    }
    return buf->be->iface->buf_clear(buf->be, buf->data, buf->size);
}

