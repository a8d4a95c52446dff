/*
 * cpu/gemm_cpu.c -- out[n][M] = x[n][K] . w[M][K]^T for F32, F16 and BF16
 * weights as a register-tiled product: the weights are packed once per call
 * into strips of 8 rows (kernels.h, llm__gemm_block_fn), then a block kernel
 * keeps a tile of outputs in registers while K streams by, so each loaded
 * vector feeds several FMAs instead of one. F16 and BF16 weights skip the
 * packing where the kernels have gemm_rows (AVX2, AVX-512): the block
 * reads the rows where they are and widens each chunk as it loads it (as
 * llama.cpp's tinyBLAS does), in the same order; the float copy, twice the
 * weights' size and written per call, cost more than it saved (see
 * docs/PERFORMANCE.md).
 *
 * Summation order (kernels.h): per output, eight lanes by FMA in ascending
 * k, folded as llm__hsum8. It depends on K only, so a row's results do not
 * depend on how many rows the call has, where the row sits, the tiling or the
 * thread count. That is what an encoder needs (llm_op_matmul_invariant: a
 * text's embedding must not depend on the texts packed with it). It is also
 * llama.cpp's tinyBLAS order on AVX2, which the F16 / BF16 sgemm pairs
 * already reproduce for decoders (matmul_cpu.c hands those calls here when
 * they have many rows: same bits, faster). For F32 weights a decoder keeps
 * the vec_dot order of llm_op_matmul (matmul_cpu.c) and never comes here.
 *
 * F16 / BF16: the activations are rounded to the weight type first (as the
 * sgemm pairs and llama.cpp do) and both sides are widened to float exactly,
 * so the products are the pairs' products.
 *
 * Work: pieces of ROWS_PER_PIECE (or more) activation rows by STRIPS_PER_PIECE
 * strips, claimed by whichever thread is free (threadpool.h); each output is
 * computed inside one block call.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "dtype/blocks.h"

#define ROWS_PER_PIECE 64
#define STRIPS_PER_PIECE 8

/* ----------------------------------------------------- scalar reference -- */

/* The fold of llm__hsum8: halves, then pairs, then the last two. */
static float fold8(const float l[8]) {
    const float s0 = l[0] + l[4], s1 = l[1] + l[5], s2 = l[2] + l[6], s3 = l[3] + l[7];
    return (s0 + s2) + (s1 + s3);
}

void llm__gemm_block_scalar(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                            int64_t n_strips, int64_t m_lim, float *out, size_t o_stride) {
    const int64_t KC = (K + 7) / 8;
    for (int64_t i = 0; i < n_rows; i++) {
        const float *xi = x + (size_t)i * x_stride;
        for (int64_t s = 0; s < n_strips; s++) {
            for (int r = 0; r < 8 && 8 * s + r < m_lim; r++) {
                float l[8] = {0};
                for (int64_t c = 0; c < KC; c++) {
                    const float *wc = wp + ((size_t)(s * KC + c)) * 64 + r * 8;
                    for (int j = 0; j < 8; j++) {
                        const int64_t k = 8 * c + j;
                        l[j] = fmaf(k < K ? xi[k] : 0.0f, wc[j], l[j]);
                    }
                }
                out[(size_t)i * o_stride + (size_t)(8 * s + r)] = fold8(l);
            }
        }
    }
}

llm__gemm_block_fn llm__gemm_block_variant(int which) {
    switch (which) {
    case 0: return llm__gemm_block_scalar;
    case 1: return llm__cpu_has_avx2() ? llm__gemm_block_avx2_get() : NULL;
    case 2: return llm__cpu_has_avx2() ? llm__gemm_block_avx512_get() : NULL;
    default: return NULL;
    }
}

/* ---------------------------------------------------------------- driver -- */

typedef struct {
    const llm__cpu_kernels *k;
    llm_dtype wt;
    const char *w;    /* [M][w_row bytes] */
    size_t w_row;
    const float *x;   /* [n][K] as given */
    char *act;        /* [n][a_row bytes] of the activation type (F16 / BF16 only) */
    size_t a_row;
    float *xf;        /* [n][K] what the blocks read: x, or act widened */
    float *wp;        /* [S][KC][8][8] packed weights (unused when in_place) */
    llm__gemm_rows_fn in_place; /* F16 / BF16 rows read where they are (kernels.h gemm_rows_*), or NULL */
    float *out;       /* [n][M] */
    int64_t n, K, M, KC, S;
    int64_t rpp, n_rb, n_sg; /* pieces: row blocks of rpp rows x strip groups */
} gemm_ctx;

static float w_at(const gemm_ctx *c, int64_t m, int64_t k) {
    const char *row = c->w + (size_t)m * c->w_row;
    switch (c->wt) {
    case LLM_DTYPE_F16: return llm_fp16_to_fp32(((const uint16_t *)row)[k]);
    case LLM_DTYPE_BF16: return llm_bf16_to_fp32(((const uint16_t *)row)[k]);
    default: return ((const float *)row)[k];
    }
}

/* Packs strips [b, e) (kernels.h layout). Whole chunks of 8 are widened 64
 * elements at a time by the type's to_float (exact, so the same floats as
 * w_at), then copied to their places; a partial last chunk goes element by
 * element, zero past K. */
static void pack_task(void *p, int ith, int nth) {
    const gemm_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->S, ith, nth, &b, &e);
    const llm__to_float_fn to_float = c->k->to_float[c->wt];
    const size_t esize = c->wt == LLM_DTYPE_F32 ? sizeof(float) : sizeof(uint16_t);
    const int64_t whole = c->K / 8 * 8; /* elements in whole chunks */
    float tmp[64];
    for (int64_t s = b; s < e; s++) {
        float *dst = c->wp + (size_t)(s * c->KC) * 64;
        for (int r = 0; r < 8; r++) {
            const int64_t m = 8 * s + r;
            if (m >= c->M) {
                for (int64_t kc = 0; kc < c->KC; kc++) memset(dst + (size_t)kc * 64 + r * 8, 0, 8 * sizeof(float));
                continue;
            }
            const char *row = c->w + (size_t)m * c->w_row;
            for (int64_t k0 = 0; k0 < whole; k0 += 64) {
                const int64_t len = whole - k0 < 64 ? whole - k0 : 64;
                const float *src = tmp;
                if (c->wt == LLM_DTYPE_F32) {
                    src = (const float *)row + k0;
                } else {
                    to_float(row + (size_t)k0 * esize, tmp, len);
                }
                for (int64_t j = 0; j < len; j += 8) {
                    memcpy(dst + (size_t)((k0 + j) / 8) * 64 + r * 8, src + j, 8 * sizeof(float));
                }
            }
            if (whole < c->K) {
                float *d = dst + (size_t)(whole / 8) * 64 + r * 8;
                for (int j = 0; j < 8; j++) d[j] = whole + j < c->K ? w_at(c, m, whole + j) : 0.0f;
            }
        }
    }
}

/* F16 / BF16: rows rounded to the weight type, then widened (exact). */
static void act_task(void *p, int ith, int nth) {
    const gemm_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    const llm_dtype at = c->k->act_type[c->wt];
    for (int64_t i = b; i < e; i++) {
        char *row = c->act + (size_t)i * c->a_row;
        c->k->quantize[at](c->x + i * c->K, row, c->K);
        c->k->to_float[at](row, c->xf + i * c->K, c->K);
    }
}

/* Rows [r0, r0 + nr) by strips [s0, s0 + ns): the block on the packed
 * strips, or on the F16 / BF16 rows in place (kernels.h gemm_rows). */
static void run_block(const gemm_ctx *c, int64_t r0, int64_t nr, int64_t s0, int64_t ns) {
    const float *x = c->xf + r0 * c->K;
    float *out = c->out + r0 * c->M + 8 * s0;
    if (c->in_place) {
        const int64_t nm = c->M - 8 * s0 < 8 * ns ? c->M - 8 * s0 : 8 * ns;
        c->in_place(c->K, x, (size_t)c->K, nr, c->w + (size_t)(8 * s0) * c->w_row, c->w_row, nm, out,
                    (size_t)c->M);
    } else {
        c->k->gemm_block(c->K, x, (size_t)c->K, nr, c->wp + (size_t)(s0 * c->KC) * 64, ns, c->M - 8 * s0, out,
                         (size_t)c->M);
    }
}

static void block_task(void *p, int ith, int nth) {
    (void)nth;
    const gemm_ctx *c = p;
    const int64_t sg = ith / c->n_rb, rb = ith % c->n_rb; /* consecutive pieces share their strips */
    const int64_t r0 = rb * c->rpp, s0 = sg * STRIPS_PER_PIECE;
    const int64_t nr = c->n - r0 < c->rpp ? c->n - r0 : c->rpp;
    const int64_t ns = c->S - s0 < STRIPS_PER_PIECE ? c->S - s0 : STRIPS_PER_PIECE;
    run_block(c, r0, nr, s0, ns);
}

/* Grows a 64-byte aligned float buffer (never shrunk). */
static llm_status reserve(float **buf, size_t *len, size_t need) {
    if (need <= *len) return LLM_OK;
    void *p = NULL;
    if (posix_memalign(&p, 64, need * sizeof(float)) != 0) return llm__err(LLM_ERR_NO_MEMORY, "matmul: no memory");
    free(*buf);
    *buf = p;
    *len = need;
    return LLM_OK;
}

llm_status llm__cpu_gemm(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w) {
    llm__cpu *cpu = llm__cpu_of(be);
    gemm_ctx c = {.k = &cpu->k, .wt = w->dtype};
    if (!cpu->k.gemm_block || (c.wt != LLM_DTYPE_F32 && c.wt != LLM_DTYPE_F16 && c.wt != LLM_DTYPE_BF16))
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul: no tiled product for %s weights", llm_dtype_name(c.wt));
    c.w = llm__host_ptr(w);
    c.w_row = w->nb[1];
    c.x = llm__host_ptr(x);
    c.out = llm__host_ptr(out);
    c.n = x->ne[1] * x->ne[2] * x->ne[3];
    c.K = x->ne[0];
    c.M = w->ne[1];
    c.KC = (c.K + 7) / 8;
    c.S = (c.M + 7) / 8;
    const int nt = be->n_threads;
    c.in_place = cpu->k.gemm_rows[c.wt];
    llm_status st = LLM_OK;
    if (!c.in_place) {
        st = reserve(&cpu->gemm_w, &cpu->gemm_w_len, (size_t)(c.S * c.KC) * 64);
        if (st != LLM_OK) return st;
        c.wp = cpu->gemm_w;
    }
    if (c.wt == LLM_DTYPE_F32) {
        c.xf = (float *)c.x;
    } else {
        const llm_dtype at = cpu->k.act_type[c.wt];
        if (llm_dtype_row_size(at, (uint64_t)c.K, &c.a_row) != LLM_OK)
            return llm__err(LLM_ERR_INVALID_ARG, "matmul: K=%lld is not whole %s blocks", (long long)c.K,
                            llm_dtype_name(at));
        st = reserve(&cpu->gemm_x, &cpu->gemm_x_len, (size_t)(c.n * c.K));
        if (st == LLM_OK) st = llm__cpu_grow(&cpu->act, &cpu->act_size, c.a_row * (size_t)c.n, "matmul", "activations");
        if (st != LLM_OK) return st;
        c.act = cpu->act;
        c.xf = cpu->gemm_x;
        llm__threadpool_run(cpu->tp, act_task, &c, c.n < nt ? (int)c.n : nt);
    }
    const int big = c.M * c.K >= 65536;
    if (!c.in_place) llm__threadpool_run(cpu->tp, pack_task, &c, big ? (c.S < 4 * nt ? (int)c.S : 4 * nt) : 1);
    c.n_sg = (c.S + STRIPS_PER_PIECE - 1) / STRIPS_PER_PIECE;
    c.rpp = ROWS_PER_PIECE;
    while ((c.n + c.rpp - 1) / c.rpp * c.n_sg > 65535) c.rpp *= 2; /* the pool's limit on pieces */
    c.n_rb = (c.n + c.rpp - 1) / c.rpp;
    if (c.n * c.M * c.K < 32768) { /* not worth waking the workers (the bits do not depend on the split) */
        run_block(&c, 0, c.n, 0, c.S);
        return LLM_OK;
    }
    llm__threadpool_run(cpu->tp, block_task, &c, (int)(c.n_rb * c.n_sg));
    return LLM_OK;
}
