/*
 * cpu/moe_cpu.c -- the mixture-of-experts ops on the CPU: expert selection
 * (moe_topk), the product of each token by the experts it was routed to
 * (matmul_id), and the weighted sum of the expert outputs (moe_sum).
 *
 * matmul_id follows llama.cpp's CPU mul_mat_id: every (token, slot) row of
 * x is converted once to the weights' activation type, the rows are grouped
 * by expert, and each expert multiplies all its rows with the per-row dot of
 * the kernel registry (scalar or AVX2, chosen when the backend is created;
 * dot4 where the pair has one, equal bit for bit), or with the kernel
 * llama.cpp's mul_mat_id takes for that type and shape: its repacked gemv,
 * one row at a time, for the types it repacks (Q4_0, Q4_K with M % 8 == 0);
 * its tiled kernel for an expert with 8 or more rows of a K-quant. Work is cut into pieces
 * of (expert, 16 weight rows): a piece reads its weight rows once for every
 * token routed to that expert, and each output is one dot by one thread, so
 * results depend neither on the thread count nor on how the tokens are
 * grouped.
 *
 * moe_topk and moe_sum are a few operations per expert and token, next to
 * the expert products' K per output: plain C (moe_sum's loop is one
 * multiply and one add per element, which the compiler may vectorize
 * without changing a bit, since -ffp-contract=off keeps them apart).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "dtype/blocks.h"

#define ROWS_PER_PIECE 16

/* ------------------------------------------------------------ moe_topk -- */

llm_status llm__cpu_moe_topk(llm_backend *be, const llm_tensor *weights, int32_t *ids, const llm_tensor *probs,
                             int32_t n_used, int norm) {
    (void)be;
    const int64_t n = probs->ne[1] * probs->ne[2] * probs->ne[3], ne = probs->ne[0];
    const float *P = llm__host_ptr(probs);
    float *W = llm__host_ptr(weights);
    for (int64_t t = 0; t < n; t++) {
        const float *p = P + t * ne;
        int32_t *id = ids + t * n_used;
        float *w = W + t * n_used;
        /* Insertion into a descending list of n_used: an equal value goes
         * after those already there, so the lower index comes first. */
        int32_t have = 0;
        for (int64_t e = 0; e < ne; e++) {
            const float v = p[e];
            if (have == n_used && !(v > p[id[have - 1]])) continue;
            int32_t j = have < n_used ? have++ : n_used - 1;
            while (j > 0 && v > p[id[j - 1]]) {
                id[j] = id[j - 1];
                j--;
            }
            id[j] = (int32_t)e;
        }
        for (int32_t j = 0; j < n_used; j++) w[j] = p[id[j]];
        if (norm) {
            double sum = 0.0; /* ggml_vec_sum_f32: double, in order */
            for (int32_t j = 0; j < n_used; j++) sum += (double)w[j];
            float s = (float)sum;
            if (!(s >= 6.103515625e-5f)) s = 6.103515625e-5f; /* ggml_clamp(sum, 2^-14, inf) */
            for (int32_t j = 0; j < n_used; j++) w[j] = w[j] / s;
        }
    }
    return LLM_OK;
}

/* ------------------------------------------------------------- moe_sum -- */

typedef struct {
    float *out;
    const float *e, *w;
    int64_t n, n_used, E;
} sum_ctx;

static void sum_task(void *p, int ith, int nth) {
    const sum_ctx *c = p;
    int64_t b, end;
    llm__split_range(c->n, ith, nth, &b, &end);
    for (int64_t t = b; t < end; t++) {
        float *o = c->out + t * c->E;
        const float *e = c->e + t * c->n_used * c->E, *w = c->w + t * c->n_used;
        const float w0 = w[0];
        for (int64_t i = 0; i < c->E; i++) o[i] = e[i] * w0;
        for (int64_t j = 1; j < c->n_used; j++) {
            const float *ej = e + j * c->E;
            const float wj = w[j];
            for (int64_t i = 0; i < c->E; i++) {
                const float prod = ej[i] * wj;
                o[i] = o[i] + prod;
            }
        }
    }
}

llm_status llm__cpu_moe_sum(llm_backend *be, const llm_tensor *out, const llm_tensor *e, const llm_tensor *w) {
    llm__cpu *cpu = llm__cpu_of(be);
    sum_ctx c = {llm__host_ptr(out), llm__host_ptr(e), llm__host_ptr(w), out->ne[1] * out->ne[2] * out->ne[3],
                 e->ne[1], out->ne[0]};
    int nth = c.n * c.n_used * c.E < 65536 ? 1 : be->n_threads;
    if (nth > c.n) nth = (int)c.n;
    llm__threadpool_run(cpu->tp, sum_task, &c, nth);
    return LLM_OK;
}

/* ----------------------------------------------------------- matmul_id -- */

typedef struct {
    const llm__cpu_kernels *k;
    llm__vec_dot_fn dot;
    llm__vec_dot4_fn dot4;  /* NULL: dot only */
    llm__vec_dot_fn tdot;   /* the tiled pair (experts with 8 or more rows), or NULL */
    llm__vec_dot4_fn tdot4;
    llm__vec_dot4x1_fn dot4x1; /* 4 weight rows x 1 row, same bits as dot (needs sc), or NULL */
    llm__vec_dot8_fn dot8;  /* rows8: 8 weight rows x 1..2 rows, same bits as dot, or NULL */
    float *sc;              /* with dot4x1: [P][K / 32][2] the rows' block scales d (and s) */
    llm_dtype act_type;
    llm__quantize_fn quant; /* NULL: F32 activations, copied */
    const char *x;          /* F32 [n][kx][K] */
    int64_t kx, K, M, n_used;
    const char *w;          /* [n_expert][M][w_row] */
    size_t w_row, w_exp;
    char *g;                /* gathered activations [P][a_row], grouped by expert */
    size_t a_row;
    const int32_t *pair;    /* [P] t * n_used + j of each gathered row */
    const int64_t *off;     /* [n_expert + 1] the expert's gathered rows */
    const int32_t *pieces;  /* [n_pieces][2] expert, first weight row */
    int64_t n_pieces;
    float *out;             /* [n][n_used][M] */
} mmid_ctx;

/* Gathers and converts the rows [b, e) of the grouped order. */
static void gather_rows(const mmid_ctx *c, int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
        const int64_t pr = c->pair[r], t = pr / c->n_used, j = pr % c->n_used;
        const float *src = (const float *)(c->x + (size_t)((t * c->kx + (c->kx == 1 ? 0 : j)) * c->K) * 4);
        char *dst = c->g + (size_t)r * c->a_row;
        if (c->quant) c->quant(src, dst, c->K);
        else memcpy(dst, src, (size_t)c->K * 4);
        if (c->sc) { /* as matmul_cpu.c unpacks them for dot4x1 */
            const int64_t nb = c->K / 32;
            float *sc = c->sc + r * nb * 2;
            if (c->act_type == LLM_DTYPE_Q8_1) {
                const llm_block_q8_1 *y = (const llm_block_q8_1 *)dst;
                for (int64_t k = 0; k < nb; k++) {
                    sc[2 * k] = llm_fp16_to_fp32(y[k].d);
                    sc[2 * k + 1] = llm_fp16_to_fp32(y[k].s);
                }
            } else {
                const llm_block_q8_0 *y = (const llm_block_q8_0 *)dst;
                for (int64_t k = 0; k < nb; k++) sc[2 * k] = llm_fp16_to_fp32(y[k].d);
            }
        }
    }
}

typedef struct {
    const mmid_ctx *c;
    int64_t P;
} gather_job;

static void gather_job_task(void *p, int ith, int nth) {
    const gather_job *j = p;
    int64_t b, e;
    llm__split_range(j->P, ith, nth, &b, &e);
    gather_rows(j->c, b, e);
}

static void dot_task(void *p, int ith, int nth) {
    const mmid_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n_pieces, ith, nth, &b, &e);
    for (int64_t pc = b; pc < e; pc++) {
        const int64_t ex = c->pieces[2 * pc], r0 = c->pieces[2 * pc + 1];
        const int64_t r1 = r0 + ROWS_PER_PIECE < c->M ? r0 + ROWS_PER_PIECE : c->M;
        const int64_t g0 = c->off[ex], g1 = c->off[ex + 1];
        const char *wex = c->w + (size_t)ex * c->w_exp;
        /* llama.cpp's tiled K-quant kernel takes an expert with 8 or more
         * rows: groups of 4 through its dot4, the rest through its dot. */
        const int tiled = c->tdot && g1 - g0 >= 8;
        const llm__vec_dot_fn dot = tiled ? c->tdot : c->dot;
        const llm__vec_dot4_fn dot4 = tiled ? c->tdot4 : c->dot4;
        /* Groups of 4 rows through dot4 (one weight row decoded for four). */
        int64_t g4 = g0;
        if (dot4) {
            for (int64_t r = r0; r < r1; r++) {
                const char *wr = wex + (size_t)r * c->w_row;
                for (int64_t g = g0; g + 4 <= g1; g += 4) {
                    float o4[4];
                    dot4(c->K, wr, c->g + (size_t)g * c->a_row, c->a_row, o4);
                    for (int q = 0; q < 4; q++) c->out[(size_t)c->pair[g + q] * (size_t)c->M + (size_t)r] = o4[q];
                }
            }
            g4 = g0 + (g1 - g0) / 4 * 4;
        }
        /* The other rows (a decode step: one row per expert) one at a time,
         * several weight rows per call where a kernel does that with dot's
         * bits: dot8 (rows8 types, up to 2 rows) or dot4x1. */
        for (int64_t g = g4; g < g1;) {
            const int two = !tiled && c->dot8 && g + 1 < g1;
            const char *a = c->g + (size_t)g * c->a_row;
            float *o0 = c->out + (size_t)c->pair[g] * (size_t)c->M;
            float *o1 = two ? c->out + (size_t)c->pair[g + 1] * (size_t)c->M : NULL;
            int64_t r = r0;
            if (!tiled && c->dot8) {
                for (; r + 8 <= r1; r += 8) {
                    float o8[2][8];
                    c->dot8(c->K, wex + (size_t)r * c->w_row, c->w_row, a, c->a_row, two ? 2 : 1, &o8[0][0], 8);
                    memcpy(o0 + r, o8[0], sizeof o8[0]);
                    if (two) memcpy(o1 + r, o8[1], sizeof o8[1]);
                }
            } else if (!tiled && c->dot4x1) {
                const float *sc = c->sc + g * (c->K / 32) * 2;
                for (; r + 4 <= r1; r += 4) c->dot4x1(c->K, wex + (size_t)r * c->w_row, c->w_row, a, sc, o0 + r);
            }
            for (; r < r1; r++) {
                o0[r] = dot(c->K, wex + (size_t)r * c->w_row, a);
                if (two) o1[r] = dot(c->K, wex + (size_t)r * c->w_row, a + c->a_row);
            }
            g += two ? 2 : 1;
        }
    }
}

/* cpu->moe grown to at least `need` bytes (64-byte aligned). */
static llm_status reserve(llm__cpu *cpu, size_t need) {
    return llm__cpu_grow(&cpu->moe, &cpu->moe_size, need, "matmul_id", "scratch");
}

static size_t up64(size_t v) { return (v + 63) & ~(size_t)63; }

llm_status llm__cpu_matmul_id(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                              const int32_t *ids) {
    llm__cpu *cpu = llm__cpu_of(be);
    const llm_dtype wt = w->dtype;
    if (!cpu->k.dot[wt]) {
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul_id: weight type %s is not supported on cpu", llm_dtype_name(wt));
    }
    mmid_ctx c;
    memset(&c, 0, sizeof c);
    c.k = &cpu->k;
    c.dot = cpu->k.dot[wt];
    c.dot4 = cpu->k.dot4[wt];
    /* llama.cpp's shape-dependent kernels (kernels.h), as its mul_mat_id
     * takes them: weights it repacks (rows8, M % 8 == 0) go through its gemv
     * one row at a time; the tiled K-quant kernel per expert (dot_task). */
    if (cpu->k.rows8[wt].dot && c.M % 8 == 0) {
        c.dot = cpu->k.rows8[wt].dot;
        c.dot4 = NULL;
        c.dot8 = cpu->k.rows8[wt].dot8;
    } else if (cpu->k.tiled[wt].dot) {
        c.tdot = cpu->k.tiled[wt].dot;
        c.tdot4 = cpu->k.tiled[wt].dot4;
    }
    c.act_type = cpu->k.act_type[wt];
    const int unpack = !c.dot8 && !c.tdot && cpu->k.dot4x1[wt] &&
                       (c.act_type == LLM_DTYPE_Q8_0 || c.act_type == LLM_DTYPE_Q8_1);
    const llm_dtype at = cpu->k.act_type[wt];
    c.quant = at == LLM_DTYPE_F32 ? NULL : cpu->k.quantize[at];
    c.x = llm__host_ptr(x);
    c.kx = x->ne[1];
    c.K = x->ne[0];
    c.M = w->ne[1];
    c.n_used = out->ne[1];
    c.w = llm__host_ptr(w);
    c.w_row = w->nb[1];
    c.w_exp = w->nb[2];
    c.out = llm__host_ptr(out);
    const int64_t n = out->ne[2] * out->ne[3], n_exp = w->ne[2], P = n * c.n_used;
    if (at == LLM_DTYPE_F32) {
        c.a_row = (size_t)c.K * 4;
    } else if (!c.quant || llm_dtype_row_size(at, (uint64_t)c.K, &c.a_row) != LLM_OK) {
        return llm__err(LLM_ERR_INVALID_ARG, "matmul_id: K=%lld is not whole %s blocks", (long long)c.K,
                        llm_dtype_name(at));
    }
    const int64_t per_exp = (c.M + ROWS_PER_PIECE - 1) / ROWS_PER_PIECE;
    /* Scratch: off [n_exp + 1], pair [P], pieces [n_exp * per_exp][2], g [P][a_row],
     * sc [P][K / 32][2] (dot4x1 only). */
    const size_t s_off = 0, s_pair = up64(s_off + (size_t)(n_exp + 1) * sizeof(int64_t)),
                 s_pc = up64(s_pair + (size_t)P * sizeof(int32_t)),
                 s_g = up64(s_pc + (size_t)(n_exp * per_exp) * 2 * sizeof(int32_t)),
                 s_sc = up64(s_g + (size_t)P * c.a_row),
                 need = s_sc + (unpack ? (size_t)P * (size_t)(c.K / 32) * 2 * sizeof(float) : 0);
    llm_status st = reserve(cpu, need);
    if (st) return st;
    char *s = cpu->moe;
    int64_t *off = (int64_t *)(s + s_off);
    int32_t *pair = (int32_t *)(s + s_pair), *pieces = (int32_t *)(s + s_pc);
    c.g = s + s_g;
    if (unpack) {
        c.sc = (float *)(s + s_sc);
        c.dot4x1 = cpu->k.dot4x1[wt];
    }
    /* Group the (token, slot) pairs by expert, in ascending pair order. */
    memset(off, 0, (size_t)(n_exp + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < P; i++) off[ids[i] + 1]++;
    for (int64_t e = 0; e < n_exp; e++) off[e + 1] += off[e];
    for (int64_t i = 0; i < P; i++) pair[off[ids[i]]++] = (int32_t)i;
    for (int64_t e = n_exp; e > 0; e--) off[e] = off[e - 1];
    off[0] = 0;
    int64_t np = 0;
    for (int64_t e = 0; e < n_exp; e++) {
        if (off[e + 1] == off[e]) continue; /* no token routed here: its weights are not read */
        for (int64_t r = 0; r < c.M; r += ROWS_PER_PIECE) {
            pieces[2 * np] = (int32_t)e;
            pieces[2 * np + 1] = (int32_t)r;
            np++;
        }
    }
    c.pair = pair;
    c.off = off;
    c.pieces = pieces;
    c.n_pieces = np;
    const int nt = be->n_threads;
    gather_job gj = {&c, P};
    int nth = P * c.K < 65536 ? 1 : (P < nt ? (int)P : nt);
    llm__threadpool_run(cpu->tp, gather_job_task, &gj, nth);
    /* Small products are not worth waking the workers; larger ones go out in
     * up to 4 pieces per thread (claimed by whichever thread is free). */
    nth = P * c.M * c.K < 32768 ? 1 : (np < (int64_t)nt * 4 ? (int)np : nt * 4);
    if (nth > 65535) nth = 65535;
    llm__threadpool_run(cpu->tp, dot_task, &c, nth > 0 ? nth : 1);
    return LLM_OK;
}
