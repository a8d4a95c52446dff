/*
 * cpu/attention_fa.c -- K/V rows of any cache type (F32, F16, BF16, Q8_0,
 * Q4_0, Q4_1, Q5_0, Q5_1): how they are written, and attention over them in
 * the order of llama.cpp's CPU flash attention.
 *
 * Writes. llama.cpp stores a new K/V row into its cache with the CPU type
 * traits' from_float of the cache type (ggml-cpu set_rows): for F16 and
 * BF16 a round to nearest even; for Q8_0 the SIMD quantize_row_q8_0, which
 * on x86 scales by 127 / amax and rounds half to even (its _ref scales by
 * 1 / (amax / 127) and rounds half away from zero: different bits); for
 * Q4_0, Q4_1, Q5_0, Q5_1 the _ref quantizers themselves (quantize_row_q4_0
 * calls quantize_row_q4_0_ref). llm__cpu_kv_quantize_row does the same, in
 * plain C, whatever kernels the backend runs.
 *
 * Rotation. A quantized cache holds rotated rows: llama.cpp (this version,
 * llama_kv_cache attn_rot_k / attn_rot_v) multiplies K and Q by a normalised
 * Hadamard matrix H when K is quantized, and V when V is quantized, if
 * head_dim is a multiple of 64 (quantization error spreads evenly over a
 * rotated row), and multiplies the attention output by H again (H H = I).
 * Its CPU backend computes these products as fast Walsh-Hadamard transforms
 * (ggml_compute_forward_fwht): per row of n values x * (1 / sqrtf(n)), then
 * butterflies (u + v, u - v) for strides 1, 2, 4, ..., n / 2; every output
 * is one rounding of the previous stage's values, so the result does not
 * depend on vector width. n is 64 for V and the largest power of two that
 * divides head_dim for K (head_dim is cut into rows of n). The rotation is
 * internal to the cache: the op's result is still attention over the
 * unrotated K and V, up to the quantization error.
 *
 * Attention. llama.cpp needs flash attention for a quantized V cache; with a
 * quantized (or BF16) K, or K and V of different types, its CPU op
 * (ggml_compute_forward_flash_attn_ext_f16_one_chunk; the tiled and split-KV
 * variants take F16/F32 caches of one type only) computes, per query row and
 * head, over the visible keys t in ascending order (masked cells are
 * skipped):
 *     Qq = from_float of K's vec_dot type (q)       (Q8_0, Q8_1, F16, BF16, F32)
 *     s  = vec_dot_K(k_t, Qq) * scale
 *     if s > M: ms = expf(M - s), M = s, VKQ *= ms  (vs = 1)
 *     else:     vs = expf(s - M)                     (ms = 1)
 *     VKQ += vs * v_t      (V F16: in an F16 accumulator, each element
 *                           rounded to F16 after its fma; else V converted
 *                           to F32 by the type's to_float and fma'd in F32)
 *     S = S * ms + vs      (gcc contracts it into one fma in ggml's C++)
 * and at the end out = VKQ * (1 / S). Every step but the dot product is
 * elementwise, so its bits do not depend on vector width; the dot is the
 * kernel table's dot for the cache type, which for the AVX2 kernels is
 * llama.cpp's vec_dot order. Units (token, GQA group) are split between
 * threads, each computed by one thread, so the split changes no bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "dtype/blocks.h"

int llm__cpu_kv_type_ok(llm_dtype t) {
    switch (t) {
    case LLM_DTYPE_F32: case LLM_DTYPE_F16: case LLM_DTYPE_BF16: case LLM_DTYPE_Q8_0:
    case LLM_DTYPE_Q4_0: case LLM_DTYPE_Q4_1: case LLM_DTYPE_Q5_0: case LLM_DTYPE_Q5_1:
        return 1;
    default:
        return 0;
    }
}

/* ggml-cpu's x86 quantize_row_q8_0, in plain C: d = amax / 127 stored as
 * F16, quants round(x * (127 / amax)) half to even (vroundps). No fma. */
static void kv_q8_0(const float *x, llm_block_q8_0 *y, int64_t n) {
    for (int64_t b = 0; b < n / LLM_QK32; b++, x += LLM_QK32) {
        float amax = 0.0f;
        for (int i = 0; i < LLM_QK32; i++) {
            const float a = fabsf(x[i]);
            amax = a > amax ? a : amax;
        }
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[b].d = llm_fp32_to_fp16(d);
        for (int i = 0; i < LLM_QK32; i++) {
            const float v = x[i] * id;
            y[b].qs[i] = (int8_t)lrintf(v); /* |v| <= 127: round half to even */
        }
    }
}

void llm__cpu_kv_quantize_row(llm_dtype t, const float *x, void *y, int64_t n) {
    if (t == LLM_DTYPE_Q8_0) {
        kv_q8_0(x, y, n);
    } else {
        /* F32, F16, BF16 (round to nearest even) and the _ref quantizers. */
        (void)llm_dtype_quantize_row(t, x, y, (size_t)n);
    }
}

static int is_quantized(llm_dtype t) {
    return t != LLM_DTYPE_F32 && t != LLM_DTYPE_F16 && t != LLM_DTYPE_BF16;
}

int64_t llm__cpu_kv_rot(llm_dtype t, int64_t hd, int is_v) {
    if (!is_quantized(t) || hd % 64 != 0) {
        return 0;
    }
    if (is_v) {
        return 64;
    }
    int64_t n = 64;
    while (hd % (2 * n) == 0) {
        n *= 2;
    }
    return n;
}

void llm__cpu_fwht(float *x, int64_t len, int64_t n) {
    const float scale = 1.0f / sqrtf((float)n);
    for (int64_t r = 0; r < len; r += n) {
        float *y = x + r;
        for (int64_t j = 0; j < n; j++) {
            y[j] *= scale;
        }
        for (int64_t h = 1; h < n; h <<= 1) {
            for (int64_t i = 0; i < n; i += 2 * h) {
                for (int64_t j = i; j < i + h; j++) {
                    const float u = y[j], v = y[j + h];
                    y[j] = u + v;
                    y[j + h] = u - v;
                }
            }
        }
    }
}

/* Bytes of one row of hd elements of a cache type (hd a multiple of its block). */
static size_t row_bytes(llm_dtype t, int64_t hd) {
    return (size_t)hd / llm_dtype_block_size(t) * llm_dtype_block_bytes(t);
}

llm_status llm__cpu_kv_write_any(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                                 const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                                 const int32_t *block_table) {
    llm__cpu *cpu = llm__cpu_of(be);
    const int64_t hd = k_cache->ne[0], bs = k_cache->ne[1], n_kv = k_cache->ne[2];
    const int64_t n = k->ne[2] * k->ne[3];
    const float *ks = llm__host_ptr(k), *vs = llm__host_ptr(v);
    char *kc = llm__host_ptr(k_cache), *vc = llm__host_ptr(v_cache);
    const size_t krow = row_bytes(k_cache->dtype, hd), vrow = row_bytes(v_cache->dtype, hd);
    const int64_t rot_k = llm__cpu_kv_rot(k_cache->dtype, hd, 0), rot_v = llm__cpu_kv_rot(v_cache->dtype, hd, 1);
    float *tmp = NULL; /* [hd] a rotated row */
    if (rot_k || rot_v) {
        llm_status st = llm__cpu_reserve_tscratch(cpu, be->n_threads, (size_t)hd);
        if (st != LLM_OK) {
            return st;
        }
        tmp = cpu->tscratch[0];
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t p = positions[i];
        for (int64_t h = 0; h < n_kv; h++) {
            /* A row is whole blocks of the type (hd is a multiple of the
             * block), and the rotation's rows of rot values never cross it. */
            const size_t row = llm__cpu_kv_row_index(block_table, bs, n_kv, p, h);
            const float *kr = ks + (i * n_kv + h) * hd, *vr = vs + (i * n_kv + h) * hd;
            if (rot_k) {
                memcpy(tmp, kr, (size_t)hd * sizeof(float));
                llm__cpu_fwht(tmp, hd, rot_k);
                kr = tmp;
            }
            llm__cpu_kv_quantize_row(k_cache->dtype, kr, kc + row * krow, hd);
            if (rot_v) {
                memcpy(tmp, vr, (size_t)hd * sizeof(float));
                llm__cpu_fwht(tmp, hd, rot_v);
                vr = tmp;
            }
            llm__cpu_kv_quantize_row(v_cache->dtype, vr, vc + row * vrow, hd);
        }
    }
    return LLM_OK;
}

typedef struct {
    const llm__cpu_kernels *k;
    float **scratch;       /* per thread: see scratch_floats() */
    float *out;            /* [n][n_head][hd] */
    const float *q;        /* [n][n_head][hd] */
    const char *kc, *vc;   /* caches */
    const int32_t *pos;    /* [n] */
    const size_t *slot;    /* [positions] row index of logical position t's KV head 0 row */
    llm_dtype tk, tv, tq;  /* K, V types; tq: K's dot partner (the type q is converted to) */
    size_t krow, vrow;     /* bytes of one head's row */
    int64_t n, n_head, n_kv, hd, bs;
    int64_t rot_k, rot_v;  /* Hadamard rotation row lengths (0: none) */
    float scale;
    int64_t n_swa;
} fa_ctx;

/* Keys per tile of fa_group: their scores and exponentials are computed
 * together (expf_n takes many values at once), then applied in key order. */
#define FA_TILE 16

/* Per-thread scratch for a group of G query heads: per head q converted (at
 * most 4 bytes per element), VKQ as floats, VKQ as halves, q rotated; one V
 * row as floats; per tile the scores, the exponentials' arguments and
 * results, and which keys raised the maximum. All in floats' room. */
static size_t scratch_floats(int64_t hd, int64_t G) {
    return (size_t)(G * (4 * hd + 16) + hd + 64 + 4 * FA_TILE * G);
}

static int64_t first_key(const fa_ctx *c, int64_t i) {
    const int64_t lo = (int64_t)c->pos[i] + 1 - c->n_swa;
    return c->n_swa > 0 && lo > 0 ? lo : 0;
}

/* The G query heads of token i that read KV head g (a GQA group), together:
 * each K/V row is loaded, and V dequantized, once for all of them. Every
 * head goes through exactly the steps llama.cpp gives it alone, in the same
 * order, so grouping changes no bit. Keys go in tiles of FA_TILE: first the
 * scores of the tile, then (per head, in key order) the running maximum and
 * each key's exponential argument, then all the tile's expf at once, then
 * the accumulator updates in key order; each head's accumulators still see
 * exactly llama.cpp's sequence of operations. */
static void fa_group(const fa_ctx *c, int64_t i, int64_t g, float *scratch) {
    const int64_t hd = c->hd, G = c->n_head / c->n_kv, h0 = g * G;
    const llm__cpu_kernels *k = c->k;
    const int64_t qstride = hd + 4;                    /* floats per converted q */
    char *qq = (char *)scratch;                        /* [G][qstride floats] q converted */
    float *vkq = scratch + G * qstride;                /* [G][hd] F32 accumulators */
    uint16_t *vkq16 = (uint16_t *)(vkq + G * hd);      /* [G][hd] F16 accumulators (V F16) */
    float *qrot = vkq + G * hd + (G * hd + 1) / 2 + 8; /* [hd] one q rotated */
    float *v32 = qrot + hd;                            /* [hd] the V row as floats */
    float *ts = v32 + hd;                              /* [FA_TILE][G] scores, then expf arguments */
    float *te = ts + FA_TILE * G;                      /* [FA_TILE][G] their expf */
    float *tup = te + FA_TILE * G;                     /* [FA_TILE][G] 1: the key raised the maximum */
    float S[64], M[64];
    const int v16 = c->tv == LLM_DTYPE_F16;
    for (int64_t j = 0; j < G; j++) {
        const float *qr = c->q + (i * c->n_head + h0 + j) * hd;
        if (c->rot_k) {
            memcpy(qrot, qr, (size_t)hd * sizeof(float));
            llm__cpu_fwht(qrot, hd, c->rot_k);
            qr = qrot;
        }
        k->quantize[c->tq](qr, qq + (size_t)j * (size_t)qstride * sizeof(float), hd);
        S[j] = 0.0f;
        M[j] = -INFINITY;
    }
    if (v16) {
        memset(vkq16, 0, (size_t)(G * hd) * sizeof(uint16_t));
    } else {
        memset(vkq, 0, (size_t)(G * hd) * sizeof(float));
    }
    const llm__vec_dot_fn dot = k->dot[c->tk];
    const size_t koff = (size_t)(g * c->bs) * c->krow, voff = (size_t)(g * c->bs) * c->vrow; /* head g's rows */
    const int64_t len = (int64_t)c->pos[i] + 1;
    for (int64_t t0 = first_key(c, i); t0 < len; t0 += FA_TILE) {
        const int64_t nt = len - t0 < FA_TILE ? len - t0 : FA_TILE;
        for (int64_t u = 0; u < nt; u++) {
            const char *kr = c->kc + c->slot[t0 + u] * c->krow + koff;
            for (int64_t j = 0; j < G; j++) {
                ts[u * G + j] = dot(hd, kr, qq + (size_t)j * (size_t)qstride * sizeof(float)) * c->scale;
            }
        }
        for (int64_t j = 0; j < G; j++) {
            for (int64_t u = 0; u < nt; u++) {
                const float s = ts[u * G + j];
                if (s > M[j]) { /* ms = e^(M - s), vs = 1 */
                    ts[u * G + j] = M[j] - s;
                    M[j] = s;
                    tup[u * G + j] = 1.0f;
                } else { /* ms = 1, vs = e^(s - M) */
                    ts[u * G + j] = s - M[j];
                    tup[u * G + j] = 0.0f;
                }
            }
        }
        k->expf_n(te, ts, nt * G);
        for (int64_t u = 0; u < nt; u++) {
            const char *vr = c->vc + c->slot[t0 + u] * c->vrow + voff;
            const float *vf = (const float *)vr;
            if (!v16 && c->tv != LLM_DTYPE_F32) {
                k->to_float[c->tv](vr, v32, hd);
                vf = v32;
            }
            for (int64_t j = 0; j < G; j++) {
                float ms = 1.0f, vs = 1.0f;
                if (tup[u * G + j] != 0.0f) {
                    ms = te[u * G + j];
                    if (v16) {
                        k->fa_scale_f16(hd, vkq16 + j * hd, ms);
                    } else {
                        k->fa_scale_f32(hd, vkq + j * hd, ms);
                    }
                } else {
                    vs = te[u * G + j];
                }
                if (v16) {
                    k->fa_mad_f16(hd, vkq16 + j * hd, (const uint16_t *)vr, vs);
                } else {
                    k->fa_mad_f32(hd, vkq + j * hd, vf, vs);
                }
                S[j] = fmaf(S[j], ms, vs);
            }
        }
    }
    for (int64_t j = 0; j < G; j++) {
        float *o = vkq + j * hd;
        if (v16) {
            for (int64_t d = 0; d < hd; d++) {
                v32[d] = llm_fp16_to_fp32(vkq16[j * hd + d]);
            }
            o = v32;
        }
        const float inv = S[j] == 0.0f ? 0.0f : 1.0f / S[j];
        k->fa_scale_f32(hd, o, inv);
        if (c->rot_v) {
            llm__cpu_fwht(o, hd, c->rot_v); /* back from V's rotated basis */
        }
        memcpy(c->out + (i * c->n_head + h0 + j) * hd, o, (size_t)hd * sizeof(float));
    }
}

/* Work of a unit (token, GQA group): its keys plus a constant for the
 * per-unit overhead. */
static int64_t unit_cost(const fa_ctx *c, int64_t i) { return (int64_t)c->pos[i] + 1 - first_key(c, i) + 32; }

/* First unit whose cumulative cost reaches target (ranges of equal work). */
static int64_t split_at(const fa_ctx *c, int64_t target) {
    int64_t cum = 0;
    for (int64_t i = 0; i < c->n; i++) {
        const int64_t uc = unit_cost(c, i), tc = uc * c->n_kv;
        if (cum + tc > target) {
            return i * c->n_kv + (target - cum + uc - 1) / uc;
        }
        cum += tc;
    }
    return c->n * c->n_kv;
}

static void fa_task(void *p, int ith, int nth) {
    const fa_ctx *c = p;
    int64_t total = 0;
    for (int64_t i = 0; i < c->n; i++) {
        total += unit_cost(c, i) * c->n_kv;
    }
    const int64_t b = split_at(c, total * ith / nth);
    const int64_t e = ith == nth - 1 ? c->n * c->n_kv : split_at(c, total * (ith + 1) / nth);
    for (int64_t u = b; u < e; u++) {
        fa_group(c, u / c->n_kv, u % c->n_kv, c->scratch[ith]);
    }
}

llm_status llm__cpu_attention_fa(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                 const llm_tensor *k_cache, const llm_tensor *v_cache,
                                 const int32_t *positions, const int32_t *block_table,
                                 const llm_attn_params *p) {
    llm__cpu *cpu = llm__cpu_of(be);
    fa_ctx c;
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
    c.tk = k_cache->dtype;
    c.tv = v_cache->dtype;
    c.tq = cpu->k.act_type[c.tk];
    if (!cpu->k.dot[c.tk] || !cpu->k.quantize[c.tq] || !llm__cpu_kv_type_ok(c.tv) || !cpu->k.to_float[c.tv] ||
        !cpu->k.expf_n) {
        return llm__err(LLM_ERR_UNSUPPORTED, "attention: no %s x %s kernels for a %s/%s cache",
                        llm_dtype_name(c.tk), llm_dtype_name(c.tq), llm_dtype_name(c.tk), llm_dtype_name(c.tv));
    }
    c.krow = row_bytes(c.tk, c.hd);
    c.vrow = row_bytes(c.tv, c.hd);
    c.rot_k = llm__cpu_kv_rot(c.tk, c.hd, 0);
    c.rot_v = llm__cpu_kv_rot(c.tv, c.hd, 1);
    const int64_t bs = c.bs;
    int64_t maxpos = 0;
    for (int64_t i = 0; i < c.n; i++) {
        maxpos = positions[i] > maxpos ? positions[i] : maxpos;
    }
    if (c.n_head / c.n_kv > 64) {
        return llm__err(LLM_ERR_UNSUPPORTED, "attention: GQA groups of more than 64 query heads");
    }
    llm_status st = llm__cpu_reserve_tscratch(cpu, be->n_threads, scratch_floats(c.hd, c.n_head / c.n_kv));
    if (st != LLM_OK) {
        return st;
    }
    c.scratch = cpu->tscratch;
    const int64_t n_pos = maxpos + 1;
    if ((st = llm__cpu_reserve_kv_offs(cpu, n_pos)) != LLM_OK) {
        return st;
    }
    /* Slots of the keys some query sees: table entries before the earliest
     * window start are never read. */
    int64_t t_lo = n_pos;
    for (int64_t i = 0; i < c.n; i++) {
        const int64_t f = first_key(&c, i);
        t_lo = f < t_lo ? f : t_lo;
    }
    for (int64_t t = t_lo; t < n_pos; t++) {
        cpu->kv_offs[t] = llm__cpu_kv_row_index(block_table, bs, c.n_kv, t, 0);
    }
    c.slot = cpu->kv_offs;
    const int64_t units = c.n * c.n_kv;
    const int nth = units < be->n_threads ? (int)units : be->n_threads;
    llm__threadpool_run(cpu->tp, fa_task, &c, nth);
    return LLM_OK;
}
