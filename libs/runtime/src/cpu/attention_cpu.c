/*
 * cpu/attention_cpu.c -- writing K/V into the paged cache and causal GQA
 * attention reading it back through a block table.
 *
 * Cache layout per layer: [n_blocks][n_head_kv][block_size][head_dim], F16 or
 * F32. Attention works on the query heads of one token that share a KV head
 * (a GQA group) at a time: scores against every visible key, a softmax per
 * head, then weighted sums of the value rows, each K/V row read once for
 * the whole group (kernels.h, *_g). The (token, head) pairs are split
 * between threads in ranges of equal work, each pair computed entirely by
 * one thread, so the split changes no bit.
 *
 * Sliding window (n_swa > 0): a query at position p sees the keys
 * p - n_swa < t <= p. llama.cpp gives the keys before the window a score of
 * -inf, so they add exact zeros to the maximum, the exponential sums and the
 * value sums; here they are not read at all (kernels.h, t_start), with every
 * other key in the lane / slot / group of 8 of its absolute index, which
 * gives the same bits. The block table entries before the first visible key
 * of the batch are not read either.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"

llm_status llm__cpu_kv_write(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                             const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                             const int32_t *block_table, int32_t n_table) {
    (void)n_table;
    if (k_cache->dtype != v_cache->dtype ||
        (k_cache->dtype != LLM_DTYPE_F16 && k_cache->dtype != LLM_DTYPE_F32)) {
        return llm__cpu_kv_write_any(be, k_cache, v_cache, k, v, positions, block_table);
    }
    const llm__cpu_kernels *kern = &llm__cpu_of(be)->k;
    const int64_t hd = k_cache->ne[0], bs = k_cache->ne[1], n_kv = k_cache->ne[2];
    const int64_t n = k->ne[2] * k->ne[3];
    const float *ks = llm__host_ptr(k), *vs = llm__host_ptr(v);
    const int f16 = k_cache->dtype == LLM_DTYPE_F16;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t h = 0; h < n_kv; h++) {
            const size_t at = llm__cpu_kv_row_index(block_table, bs, n_kv, positions[i], h) * (size_t)hd;
            const float *kr = ks + (i * n_kv + h) * hd, *vr = vs + (i * n_kv + h) * hd;
            if (f16) {
                kern->quantize[LLM_DTYPE_F16](kr, (uint16_t *)llm__host_ptr(k_cache) + at, hd);
                kern->quantize[LLM_DTYPE_F16](vr, (uint16_t *)llm__host_ptr(v_cache) + at, hd);
            } else {
                memcpy((float *)llm__host_ptr(k_cache) + at, kr, (size_t)hd * sizeof(float));
                memcpy((float *)llm__host_ptr(v_cache) + at, vr, (size_t)hd * sizeof(float));
            }
        }
    }
    return LLM_OK;
}

/* Query heads processed together (at most): the heads of one GQA group
 * that read the same KV head; larger groups go in runs of this many. */
#define GMAX 4

typedef struct {
    const llm__cpu_kernels *k;
    float **scratch;          /* per thread: see scratch_floats() */
    float *out;               /* [n][n_head][hd] */
    const float *q;           /* [n][n_head][hd] */
    const void *kc, *vc;      /* caches */
    const int32_t *pos;       /* [n] */
    const size_t *offs;       /* [n_all] element offsets of KV head 0's rows through the block table */
    int64_t n, n_head, n_kv, hd, bs, smax, n_all;
    float scale;
    int64_t n_swa; /* 0: no window */
    int f16;
    int tiled; /* 1: sum in the order of a tiled matrix product (see below) */
} attn_ctx;

/* Per-thread scratch: [GMAX][smax] scores, [GMAX][hd] q as floats,
 * [GMAX][hd] q16 (halves, in floats' room), [GMAX][32][hd] slot partials. */
static size_t scratch_floats(int64_t smax, int64_t hd) {
    return (size_t)(GMAX * smax + GMAX * hd + GMAX * hd + GMAX * 32 * hd + 16);
}

/* First key query i sees: 0, or the start of its sliding window. */
static int64_t first_key(const attn_ctx *c, int64_t i) {
    const int64_t lo = (int64_t)c->pos[i] + 1 - c->n_swa;
    return c->n_swa > 0 && lo > 0 ? lo : 0;
}

/* Work of unit u = (token i, head h): about its number of keys, plus a
 * constant for the per-unit overhead. */
static int64_t unit_cost(const attn_ctx *c, int64_t i) {
    return (int64_t)c->pos[i] + 1 - first_key(c, i) + 32;
}

/* First unit whose cumulative cost reaches target: splits the units into
 * ranges of equal work, so that under the causal mask the thread with the
 * late tokens does not get three times the work of the one with the early
 * ones. Which thread computes a unit changes none of its bits. */
static int64_t split_at(const attn_ctx *c, int64_t target) {
    int64_t cum = 0;
    for (int64_t i = 0; i < c->n; i++) {
        const int64_t uc = unit_cost(c, i), tc = uc * c->n_head;
        if (cum + tc > target) {
            return i * c->n_head + (target - cum + uc - 1) / uc;
        }
        cum += tc;
    }
    return c->n * c->n_head;
}

/* max over s[0 .. len), NaNs skipped (as a running "s[t] > m ? s[t] : m"
 * skips them). Eight running maxima so that the loop vectorises. The order
 * in which a maximum is found cannot change it, except for the sign of a
 * zero maximum, and e^(x - 0) = e^(x + 0) for every x (both zeros give 1),
 * so no probability changes. */
static float row_max(const float *s, int64_t len) {
    float m[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int64_t t = 0;
    for (; t + 8 <= len; t += 8) {
        for (int l = 0; l < 8; l++) {
            m[l] = s[t + l] > m[l] ? s[t + l] : m[l];
        }
    }
    float mx = -INFINITY;
    for (; t < len; t++) {
        mx = s[t] > mx ? s[t] : mx;
    }
    for (int l = 0; l < 8; l++) {
        mx = m[l] > mx ? m[l] : mx;
    }
    return mx;
}

/* Query heads h .. h + nq - 1 of token i, all reading KV head kvh. */
static void attn_group(const attn_ctx *c, int64_t i, int64_t h, int64_t nq, int64_t kvh, float *scratch) {
    float *scores = scratch;                              /* [nq][smax] */
    float *qf = scores + GMAX * c->smax;                  /* [nq][hd] */
    uint16_t *q16 = (uint16_t *)(qf + GMAX * c->hd);      /* [nq][hd] */
    float *partial = qf + 2 * GMAX * c->hd;               /* [nq][32][hd] */
    const int64_t u = i * c->n_head + h;
    const float *qr = c->q + u * c->hd;                   /* [nq][hd], heads are adjacent */
    const int64_t len = (int64_t)c->pos[i] + 1;
    const int64_t ts = first_key(c, i); /* keys ts .. len - 1 */
    llm__kv_rows kr = {c->kc, c->offs, (size_t)(kvh * c->bs * c->hd), c->f16};
    llm__kv_rows vr = kr;
    vr.base = c->vc;
    if (c->f16) {
        /* q is rounded to F16 like llama.cpp does before its F16 dot. */
        c->k->quantize[LLM_DTYPE_F16](qr, q16, nq * c->hd);
        c->k->attn_scores_f16_g(&kr, ts, len, c->hd, q16, nq, c->scale, c->tiled, scores, c->smax, qf);
    } else {
        for (int64_t j = 0; j < nq; j++) {
            for (int64_t t = ts; t < len; t++) {
                scores[j * c->smax + t] = c->k->dot_f32(c->hd, qr + j * c->hd, llm__kv_row(&kr, t)) * c->scale;
            }
        }
    }
    const int64_t len8 = (len + 7) & ~(int64_t)7;
    const int64_t ts8 = ts & ~(int64_t)7;
    for (int64_t j = 0; j < nq; j++) {
        float *s = scores + j * c->smax;
        const float mx = row_max(s + ts, len - ts);
        /* The exponentials go in groups of 8 over a row padded with masked
         * (-inf, so zero) cells, as llama.cpp's softmax over its padded
         * cache view does; the padding changes no sum. The groups wholly
         * before the window would add exact zeros (skipped); the one it
         * starts in gets -inf cells for the keys it hides. */
        for (int64_t t = ts8; t < ts; t++) {
            s[t] = -INFINITY;
        }
        for (int64_t t = len; t < len8; t++) {
            s[t] = -INFINITY;
        }
        const double sum = c->k->exp_sum_row(s + ts8, s + ts8, mx, len8 - ts8);
        const float inv = (float)(1.0 / sum);
        for (int64_t t = ts; t < len; t++) {
            s[t] *= inv;
        }
        if (c->f16) {
            /* With an F16 cache the probabilities are rounded to F16 too, as
             * llama.cpp's F16 value product does (see kernels/x86_256.c). */
            c->k->round_f16(len - ts, s + ts);
        }
    }
    c->k->attn_wsum_g(&vr, ts, len, c->n_all, c->hd, scores, c->smax, nq, c->tiled, c->out + u * c->hd, partial);
}

static void attn_task(void *p, int ith, int nth) {
    attn_ctx *c = p;
    const int64_t group = c->n_head / c->n_kv;
    int64_t total = 0;
    for (int64_t i = 0; i < c->n; i++) {
        total += unit_cost(c, i) * c->n_head;
    }
    const int64_t b = split_at(c, total * ith / nth);
    const int64_t e = ith == nth - 1 ? c->n * c->n_head : split_at(c, total * (ith + 1) / nth);
    /* KV head outermost: one KV head's K and V rows (256 KB at 1000 cells of
     * 64 F16 values) stay in L2 across the tokens, where cycling through all
     * KV heads per token would evict them before their next use. */
    for (int64_t kvh = 0; kvh < c->n_kv && b < e; kvh++) {
        for (int64_t i = b / c->n_head; i <= (e - 1) / c->n_head; i++) {
            const int64_t lo = kvh * group > b - i * c->n_head ? kvh * group : b - i * c->n_head;
            const int64_t hi = (kvh + 1) * group < e - i * c->n_head ? (kvh + 1) * group : e - i * c->n_head;
            for (int64_t h = lo; h < hi; h += GMAX) {
                attn_group(c, i, h, hi - h < GMAX ? hi - h : GMAX, kvh, c->scratch[ith]);
            }
        }
    }
}

llm_status llm__cpu_attention(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                              const llm_tensor *k_cache, const llm_tensor *v_cache,
                              const int32_t *positions, const int32_t *block_table,
                              int32_t n_table, const llm_attn_params *p) {
    (void)n_table;
    if (k_cache->dtype != v_cache->dtype ||
        (k_cache->dtype != LLM_DTYPE_F16 && k_cache->dtype != LLM_DTYPE_F32)) {
        /* Quantized, BF16 or mixed caches: llama.cpp's flash-attention order. */
        return llm__cpu_attention_fa(be, out, q, k_cache, v_cache, positions, block_table, p);
    }
    llm__cpu *cpu = llm__cpu_of(be);
    attn_ctx c;
    c.k = &cpu->k;
    c.out = llm__host_ptr(out);
    c.q = llm__host_ptr(q);
    c.kc = llm__host_ptr(k_cache);
    c.vc = llm__host_ptr(v_cache);
    c.pos = positions;
    c.n = q->ne[2] * q->ne[3];
    c.n_head = q->ne[1];
    c.hd = q->ne[0];
    c.bs = k_cache->ne[1];
    c.n_kv = k_cache->ne[2];
    c.scale = p->scale;
    c.n_swa = p->n_swa;
    c.f16 = k_cache->dtype == LLM_DTYPE_F16;
    int64_t maxpos = 0;
    for (int64_t i = 0; i < c.n; i++) {
        maxpos = positions[i] > maxpos ? positions[i] : maxpos;
    }
    /* Summation order. llama.cpp multiplies Q by K and the probabilities by
     * V with a register-tiled matrix product when a batch holds two or more
     * tokens (one 8-lane accumulator per output) and with its 4 x 8-lane dot
     * product for a single token, over a cache view padded to a multiple of
     * 256 cells. We sum in the same orders (kernels.h) so that our logits
     * equal its own; n_all rounded up to 32 puts every visible cell in the
     * dot product's lanes, as the padding does. The price: decoding one
     * token and prefilling it in a batch agree to float rounding, not bit
     * for bit, exactly as in llama.cpp. */
    c.tiled = c.n >= 2 && c.hd % 8 == 0;
    c.n_all = (maxpos + 1 + 31) / 32 * 32;
    c.smax = (maxpos + 1 + 15) / 16 * 16;
    llm_status st = llm__cpu_reserve_tscratch(cpu, be->n_threads, scratch_floats(c.smax, c.hd));
    if (st != LLM_OK) {
        return st;
    }
    c.scratch = cpu->tscratch;
    const int64_t n_pos = maxpos + 1;
    if ((st = llm__cpu_reserve_kv_offs(cpu, n_pos)) != LLM_OK) {
        return st;
    }
    /* Slot offsets of the keys some query sees (from the earliest window
     * start on): the table entries before it are never read. */
    int64_t t_lo = n_pos;
    for (int64_t i = 0; i < c.n; i++) {
        const int64_t f = first_key(&c, i);
        t_lo = f < t_lo ? f : t_lo;
    }
    for (int64_t t = t_lo; t < n_pos; t++) {
        cpu->kv_offs[t] = llm__cpu_kv_row_index(block_table, c.bs, c.n_kv, t, 0) * (size_t)c.hd;
    }
    c.offs = cpu->kv_offs;
    int64_t units = c.n * c.n_head;
    int nth = units < be->n_threads ? (int)units : be->n_threads;
    llm__threadpool_run(cpu->tp, attn_task, &c, nth);
    return LLM_OK;
}
