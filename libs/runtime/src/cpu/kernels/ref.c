/*
 * cpu/kernels/ref.c -- the plain C reference for every CPU kernel.
 *
 * These are the definitions the SIMD variants are tested against. Quantized
 * dot products follow the integer formulation llama.cpp uses (weights paired
 * with Q8_0 / Q8_1 / Q8_K activations, integer sums per block, one float
 * multiply-add per block), so they agree with llama.cpp up to float rounding.
 */
#include <math.h>
#include <string.h>

#include "cpu/kernels.h"
#include "cpu/vexp.h"
#include "dtype/blocks.h"

#define H2F(h) llm_fp16_to_fp32(h)

static uint32_t le32(const uint8_t b[4]) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* ------------------------------------------------------------------ gelu -- */

/* gelu(x) = x/2 (1 + erf(x / sqrt 2)). erf by Abramowitz & Stegun 7.1.26
 * (|error| <= 1.5e-7): for z = |x| / sqrt 2, t = 1 / (1 + p z),
 * erfc(z) ~ t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^(-z^2); the negative
 * side uses erfc directly (no cancellation in 1 - erf). The AVX2 variant
 * (cpu/encoder_x86_256.c) evaluates the same expression lane by lane. */
void llm__gelu_erf_row_scalar(float *out, const float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        if (v <= -10.0f) {
            out[i] = 0.0f;
            continue;
        }
        if (v >= 10.0f) {
            out[i] = v;
            continue;
        }
        const float z = fabsf(v) * 0.70710678118654752f;
        const float t = 1.0f / fmaf(0.3275911f, z, 1.0f);
        float pl = fmaf(1.061405429f, t, -1.453152027f);
        pl = fmaf(pl, t, 1.421413741f);
        pl = fmaf(pl, t, -0.284496736f);
        pl = fmaf(pl, t, 0.254829592f);
        const float erfc = pl * t * llm__exp_poly(-z * z);
        out[i] = v >= 0.0f ? 0.5f * v * (2.0f - erfc) : 0.5f * v * erfc;
    }
}

/* ------------------------------------------------------------ float types -- */

float llm__dot_f32_scalar(int64_t n, const float *x, const float *y) {
    double s = 0.0; /* double accumulation: an order-insensitive reference */
    for (int64_t i = 0; i < n; i++) {
        s += (double)x[i] * (double)y[i];
    }
    return (float)s;
}

float llm__dot_f16_scalar(int64_t n, const uint16_t *x, const uint16_t *y) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += (double)H2F(x[i]) * (double)H2F(y[i]);
    }
    return (float)s;
}

static float dot_f32(int64_t n, const void *w, const void *a) {
    return llm__dot_f32_scalar(n, (const float *)w, (const float *)a);
}

static float dot_f16(int64_t n, const void *w, const void *a) {
    return llm__dot_f16_scalar(n, (const uint16_t *)w, (const uint16_t *)a);
}

static float dot_bf16(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += (double)llm_bf16_to_fp32(x[i]) * (double)llm_bf16_to_fp32(y[i]);
    }
    return (float)s;
}

/* ---------------------------------------------------- legacy 32-element -- */

static float dot_q4_0_q8_0(int64_t n, const void *w, const void *a) {
    const llm_block_q4_0 *x = w;
    const llm_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        int32_t sumi = 0;
        for (int j = 0; j < 16; j++) {
            sumi += ((x[b].qs[j] & 0x0F) - 8) * y[b].qs[j];
            sumi += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + 16];
        }
        sum += (float)sumi * (H2F(x[b].d) * H2F(y[b].d));
    }
    return sum;
}

static float dot_q4_1_q8_1(int64_t n, const void *w, const void *a) {
    const llm_block_q4_1 *x = w;
    const llm_block_q8_1 *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        int32_t sumi = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (x[b].qs[j] & 0x0F) * y[b].qs[j];
            sumi += (x[b].qs[j] >> 4) * y[b].qs[j + 16];
        }
        /* sum_i (d q_i + m) d_y y_i = d d_y sumi + m s_y */
        sum += (H2F(x[b].d) * H2F(y[b].d)) * (float)sumi + H2F(x[b].m) * H2F(y[b].s);
    }
    return sum;
}

static float dot_q5_0_q8_0(int64_t n, const void *w, const void *a) {
    const llm_block_q5_0 *x = w;
    const llm_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        uint32_t qh = le32(x[b].qh);
        int32_t sumi = 0;
        for (int j = 0; j < 16; j++) {
            int lo = (x[b].qs[j] & 0x0F) | (int)((qh >> j) & 1) << 4;
            int hi = (x[b].qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            sumi += (lo - 16) * y[b].qs[j] + (hi - 16) * y[b].qs[j + 16];
        }
        sum += (float)sumi * (H2F(x[b].d) * H2F(y[b].d));
    }
    return sum;
}

static float dot_q5_1_q8_1(int64_t n, const void *w, const void *a) {
    const llm_block_q5_1 *x = w;
    const llm_block_q8_1 *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        uint32_t qh = le32(x[b].qh);
        int32_t sumi = 0;
        for (int j = 0; j < 16; j++) {
            int lo = (x[b].qs[j] & 0x0F) | (int)((qh >> j) & 1) << 4;
            int hi = (x[b].qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            sumi += lo * y[b].qs[j] + hi * y[b].qs[j + 16];
        }
        sum += (H2F(x[b].d) * H2F(y[b].d)) * (float)sumi + H2F(x[b].m) * H2F(y[b].s);
    }
    return sum;
}

static float dot_q8_0_q8_0(int64_t n, const void *w, const void *a) {
    const llm_block_q8_0 *x = w;
    const llm_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        int32_t sumi = 0;
        for (int j = 0; j < LLM_QK32; j++) {
            sumi += x[b].qs[j] * y[b].qs[j];
        }
        sum += (float)sumi * (H2F(x[b].d) * H2F(y[b].d));
    }
    return sum;
}

/* ------------------------------------------------------------- K-quants -- */

static float dot_q4_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(x[b].scales, sc, mn);
        int32_t sumq = 0, summ = 0;
        for (int j = 0; j < 8; j++) {
            int32_t s = 0;
            for (int i = 0; i < 32; i++) {
                int q = (x[b].qs[32 * (j / 2) + i] >> (4 * (j % 2))) & 15;
                s += q * y[b].qs[32 * j + i];
            }
            sumq += sc[j] * s;
            summ += mn[j] * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
        }
        sum += y[b].d * H2F(x[b].d) * (float)sumq - y[b].d * H2F(x[b].dmin) * (float)summ;
    }
    return sum;
}

static float dot_q5_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q5_k *x = w;
    const llm_block_q8_k *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(x[b].scales, sc, mn);
        int32_t sumq = 0, summ = 0;
        for (int j = 0; j < 8; j++) {
            int32_t s = 0;
            for (int i = 0; i < 32; i++) {
                int e = 32 * j + i;
                int q = (x[b].qs[32 * (j / 2) + i] >> (4 * (j % 2))) & 15;
                q |= ((x[b].qh[e % 32] >> (e / 32)) & 1) << 4;
                s += q * y[b].qs[e];
            }
            sumq += sc[j] * s;
            summ += mn[j] * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
        }
        sum += y[b].d * H2F(x[b].d) * (float)sumq - y[b].d * H2F(x[b].dmin) * (float)summ;
    }
    return sum;
}

static float dot_q6_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q6_k *x = w;
    const llm_block_q8_k *y = a;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        int32_t sumq = 0;
        for (int j = 0; j < 16; j++) {
            int32_t s = 0;
            for (int i = 0; i < 16; i++) {
                int e = 16 * j + i, h = e / 128, r = e % 128;
                int lo = (x[b].ql[64 * h + r % 64] >> (4 * (r / 64))) & 15;
                int hi = (x[b].qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
                s += ((lo | hi << 4) - 32) * y[b].qs[e];
            }
            sumq += x[b].scales[j] * s;
        }
        sum += y[b].d * H2F(x[b].d) * (float)sumq;
    }
    return sum;
}

/* ----------------------------------------------------------- quantizers -- */

static void quant_f32(const float *x, void *y, int64_t n) { memcpy(y, x, (size_t)n * sizeof(float)); }

static void quant_f16(const float *x, void *y, int64_t n) {
    uint16_t *o = y;
    for (int64_t i = 0; i < n; i++) {
        o[i] = llm_fp32_to_fp16(x[i]);
    }
}

static void quant_bf16(const float *x, void *y, int64_t n) {
    uint16_t *o = y;
    for (int64_t i = 0; i < n; i++) {
        o[i] = llm_fp32_to_bf16(x[i]);
    }
}

static void quant_q8_0(const float *x, void *y, int64_t n) {
    (void)llm_dtype_quantize_row(LLM_DTYPE_Q8_0, x, y, (size_t)n);
}
static void quant_q8_1(const float *x, void *y, int64_t n) {
    (void)llm_dtype_quantize_row(LLM_DTYPE_Q8_1, x, y, (size_t)n);
}
/* Exactly ggml's quantize_row_q8_K (kernels/kquant_x86_256.c describes the method;
 * its AVX2 variant gives the same bytes for every input, NaN and inf too). */
static void quant_q8_k(const float *x, void *vy, int64_t n) {
    llm_block_q8_k *y = vy;
    for (int64_t b = 0; b < n / LLM_QK_K; b++, x += LLM_QK_K) {
        float amax = 0.0f, max = 0.0f;
        for (int i = 0; i < LLM_QK_K; i++) {
            if (fabsf(x[i]) > amax) { /* strict: the first of equals wins, NaNs never */
                amax = fabsf(x[i]);
                max = x[i];
            }
        }
        if (amax == 0.0f) {
            memset(&y[b], 0, sizeof y[b]);
            continue;
        }
        const float iscale = -127.0f / max;
        for (int i = 0; i < LLM_QK_K; i++) {
            /* Adding 1.5 * 2^23 rounds to an integer (half to even) in the
             * low mantissa bits; no fma: ggml rounds the product first. */
            const float p = iscale * x[i];
            const float t = p + 12582912.0f; /* separate statements: never contracted */
            uint32_t u;
            memcpy(&u, &t, 4);
            const int32_t v = (int32_t)(u & 0x007FFFFFu) - 0x00400000;
            y[b].qs[i] = (int8_t)(uint8_t)(v > 127 ? 127 : v); /* low byte */
        }
        for (int j = 0; j < LLM_QK_K / 16; j++) {
            int sum = 0;
            for (int i = 0; i < 16; i++) sum += y[b].qs[16 * j + i];
            y[b].bsums[j] = (int16_t)sum;
        }
        y[b].d = 1.0f / iscale;
    }
}

/* ------------------------------------------------------------ row kernels -- */

static void rms_norm_row(float *out, const float *x, const float *w, int64_t n, float eps) {
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++) {
        ss += (double)(x[i] * x[i]);
    }
    const float scale = 1.0f / sqrtf((float)(ss / (double)n) + eps);
    for (int64_t i = 0; i < n; i++) {
        out[i] = w ? (x[i] * scale) * w[i] : x[i] * scale;
    }
}

/* The value sums from key t_start on: keys before it have probability 0
 * and are skipped (kernels.h, attn_wsum_g). */
static void wsum_from(const llm__kv_rows *v, int64_t t_start, int64_t len, int64_t hd, const float *p,
                      float *out) {
    for (int64_t d = 0; d < hd; d++) {
        double s = 0.0;
        for (int64_t t = t_start; t < len; t++) {
            const void *row = llm__kv_row(v, t);
            float x = v->f16 ? H2F(((const uint16_t *)row)[d]) : ((const float *)row)[d];
            s += (double)(p[t] * x);
        }
        out[d] = (float)s;
    }
}

static void attn_wsum(const llm__kv_rows *v, int64_t len, int64_t n_all, int64_t hd, const float *p,
                      float *out, float *scratch) {
    (void)scratch;
    (void)n_all;
    wsum_from(v, 0, len, hd, p, out);
}

static float dot_f16_8(int64_t n, const uint16_t *x, const uint16_t *y) {
    float lane[8] = {0};
    for (int64_t i = 0; i < n; i++) {
        lane[i % 8] = fmaf(H2F(x[i]), H2F(y[i]), lane[i % 8]);
    }
    return llm__hsum8(lane);
}

static void scores_from(const llm__kv_rows *k, int64_t t_start, int64_t len, int64_t hd, const uint16_t *q16,
                        float scale, int tiled, float *scores) {
    for (int64_t t = t_start; t < len; t++) {
        const uint16_t *row = llm__kv_row(k, t);
        scores[t] = (tiled ? dot_f16_8(hd, q16, row) : llm__dot_f16_scalar(hd, q16, row)) * scale;
    }
}

static void attn_scores_f16(const llm__kv_rows *k, int64_t len, int64_t hd, const uint16_t *q16, float scale,
                            int tiled, float *scores) {
    scores_from(k, 0, len, hd, q16, scale, tiled, scores);
}

/* Lane t % 8 of the absolute index t, from t_start on. */
static void wsum8_from(const llm__kv_rows *v, int64_t t_start, int64_t len, int64_t hd, const float *p,
                       float *out) {
    for (int64_t d = 0; d < hd; d++) {
        float lane[8] = {0};
        for (int64_t t = t_start; t < len; t++) {
            const void *row = llm__kv_row(v, t);
            float x = v->f16 ? H2F(((const uint16_t *)row)[d]) : ((const float *)row)[d];
            lane[t % 8] = fmaf(x, p[t], lane[t % 8]);
        }
        out[d] = llm__hsum8(lane);
    }
}

static void attn_wsum8(const llm__kv_rows *v, int64_t len, int64_t hd, const float *p, float *out,
                       float *scratch) {
    (void)scratch;
    wsum8_from(v, 0, len, hd, p, out);
}

/* Grouped forms: the simple per-query loops (the reference the SIMD
 * variants are checked against). */
static void attn_scores_f16_g(const llm__kv_rows *k, int64_t t_start, int64_t len,
                              int64_t hd, const uint16_t *q16, int64_t nq, float scale, int tiled, float *scores,
                              int64_t sstride, float *qf) {
    (void)qf;
    for (int64_t j = 0; j < nq; j++) {
        scores_from(k, t_start, len, hd, q16 + j * hd, scale, tiled, scores + j * sstride);
    }
}

static void attn_wsum_g(const llm__kv_rows *v, int64_t t_start, int64_t len, int64_t n_all, int64_t hd,
                        const float *p, int64_t pstride, int64_t nq, int tiled, float *out, float *scratch) {
    (void)n_all;
    (void)scratch;
    for (int64_t j = 0; j < nq; j++) {
        if (tiled) {
            wsum8_from(v, t_start, len, hd, p + j * pstride, out + j * hd);
        } else {
            wsum_from(v, t_start, len, hd, p + j * pstride, out + j * hd);
        }
    }
}

static void swiglu_row(float *out, const float *x, const float *g, int64_t n) {
    const int64_t n8 = n - n % 8;
    for (int64_t i = 0; i < n; i++) {
        const float e = i < n8 ? llm__exp_poly(-x[i]) : expf(-x[i]);
        out[i] = (x[i] / (1.0f + e)) * g[i];
    }
}

static void silu_row(float *out, const float *x, int64_t n) {
    const int64_t n8 = n - n % 8;
    for (int64_t i = 0; i < n; i++) {
        const float e = i < n8 ? llm__exp_poly(-x[i]) : expf(-x[i]);
        out[i] = x[i] / (1.0f + e);
    }
}

static void geglu_row(float *out, const float *x, const float *g, int64_t n, const uint16_t *table) {
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        if (v <= -10.0f) {
            out[i] = 0.0f;
        } else if (v >= 10.0f) {
            out[i] = v * g[i];
        } else {
            out[i] = H2F(table[llm_fp32_to_fp16(v)]) * g[i];
        }
    }
}

static double exp_sum_row(float *y, const float *x, float max, int64_t n) {
    const int64_t n8 = n - n % 8;
    double sum = 0.0;
    for (int64_t i = 0; i < n8; i += 8) {
        for (int l = 0; l < 8; l++) {
            y[i + l] = llm__exp_poly(x[i + l] - max);
        }
        sum += (double)llm__hsum8(y + i);
    }
    for (int64_t i = n8; i < n; i++) {
        y[i] = expf(x[i] - max);
        sum += (double)y[i];
    }
    return sum;
}

static void round_f16(int64_t n, float *x) {
    for (int64_t i = 0; i < n; i++) {
        x[i] = H2F(llm_fp32_to_fp16(x[i]));
    }
}

static void fa_mad_f32(int64_t n, float *y, const float *x, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = fmaf(x[i], v, y[i]);
    }
}

static void fa_scale_f32(int64_t n, float *y, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] *= v;
    }
}

static void fa_mad_f16(int64_t n, uint16_t *y, const uint16_t *x, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = llm_fp32_to_fp16(fmaf(H2F(x[i]), v, H2F(y[i])));
    }
}

static void fa_scale_f16(int64_t n, uint16_t *y, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = llm_fp32_to_fp16(H2F(y[i]) * v);
    }
}

static void expf_n_libm(float *y, const float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = expf(x[i]);
    }
}

int llm__cpu_expf_matches_libm(llm__expf_n_fn f) {
    enum { N = 1024 + 8 };
    float x[N], y[N];
    uint32_t u = 0x12345678u;
    for (int i = 0; i < 1024; i++) { /* a sweep of [-110, 90], each point nudged by a few ulps */
        u = u * 1664525u + 1013904223u;
        x[i] = -110.0f + 200.0f * (float)i / 1024.0f;
        x[i] = nextafterf(x[i], (u >> 31) ? INFINITY : -INFINITY);
    }
    const float special[8] = {-INFINITY, INFINITY, NAN, 0.0f, -0.0f, -103.5f, -103.0f, 88.5f};
    memcpy(x + 1024, special, sizeof special);
    f(y, x, N);
    for (int i = 0; i < N; i++) {
        const float e = expf(x[i]);
        if (memcmp(&e, &y[i], sizeof e) != 0 && !(isnan(e) && isnan(y[i]))) {
            return 0;
        }
    }
    return 1;
}

/* KV rows to floats: the reference dequantizers (dtype/dequant.c), whose
 * arithmetic is ggml-base's. */
#define TO_FLOAT(name, type)                                                                       \
    static void to_float_##name(const void *x, float *y, int64_t n) {                            \
        (void)llm_dtype_dequantize_row(type, x, y, (size_t)n);                                     \
    }
TO_FLOAT(f32, LLM_DTYPE_F32)
TO_FLOAT(f16, LLM_DTYPE_F16)
TO_FLOAT(bf16, LLM_DTYPE_BF16)
TO_FLOAT(q8_0, LLM_DTYPE_Q8_0)
TO_FLOAT(q4_0, LLM_DTYPE_Q4_0)
TO_FLOAT(q4_1, LLM_DTYPE_Q4_1)
TO_FLOAT(q5_0, LLM_DTYPE_Q5_0)
TO_FLOAT(q5_1, LLM_DTYPE_Q5_1)
#undef TO_FLOAT

void llm__cpu_kernels_scalar(llm__cpu_kernels *k) {
    memset(k, 0, sizeof(*k));
    k->desc = "scalar";
    k->isa = LLM__ISA_SCALAR;
    static const struct {
        llm_dtype w, act;
        llm__vec_dot_fn dot;
    } pairs[] = {
        {LLM_DTYPE_F32, LLM_DTYPE_F32, dot_f32},       {LLM_DTYPE_F16, LLM_DTYPE_F16, dot_f16},
        {LLM_DTYPE_BF16, LLM_DTYPE_BF16, dot_bf16},    {LLM_DTYPE_Q4_0, LLM_DTYPE_Q8_0, dot_q4_0_q8_0},
        {LLM_DTYPE_Q4_1, LLM_DTYPE_Q8_1, dot_q4_1_q8_1}, {LLM_DTYPE_Q5_0, LLM_DTYPE_Q8_0, dot_q5_0_q8_0},
        {LLM_DTYPE_Q5_1, LLM_DTYPE_Q8_1, dot_q5_1_q8_1}, {LLM_DTYPE_Q8_0, LLM_DTYPE_Q8_0, dot_q8_0_q8_0},
        {LLM_DTYPE_Q4_K, LLM_DTYPE_Q8_K, dot_q4_k_q8_k}, {LLM_DTYPE_Q5_K, LLM_DTYPE_Q8_K, dot_q5_k_q8_k},
        {LLM_DTYPE_Q6_K, LLM_DTYPE_Q8_K, dot_q6_k_q8_k},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        k->act_type[pairs[i].w] = pairs[i].act;
        k->dot[pairs[i].w] = pairs[i].dot;
    }
    k->quantize[LLM_DTYPE_F32] = quant_f32;
    k->quantize[LLM_DTYPE_F16] = quant_f16;
    k->quantize[LLM_DTYPE_BF16] = quant_bf16;
    k->quantize[LLM_DTYPE_Q8_0] = quant_q8_0;
    k->quantize[LLM_DTYPE_Q8_1] = quant_q8_1;
    k->quantize[LLM_DTYPE_Q8_K] = quant_q8_k;
    k->rms_norm_row = rms_norm_row;
    k->fa_mad_f32 = fa_mad_f32;
    k->fa_scale_f32 = fa_scale_f32;
    k->fa_mad_f16 = fa_mad_f16;
    k->fa_scale_f16 = fa_scale_f16;
    k->dot_f16 = llm__dot_f16_scalar;
    k->dot_f32 = llm__dot_f32_scalar;
    k->attn_wsum = attn_wsum;
    k->round_f16 = round_f16;
    k->dot_f16_8 = dot_f16_8;
    k->attn_scores_f16 = attn_scores_f16;
    k->attn_wsum8 = attn_wsum8;
    k->attn_scores_f16_g = attn_scores_f16_g;
    k->attn_wsum_g = attn_wsum_g;
    k->swiglu_row = swiglu_row;
    k->geglu_row = geglu_row;
    k->silu_row = silu_row;
    k->exp_sum_row = exp_sum_row;
    k->gemm_block = llm__gemm_block_scalar;
    k->to_float[LLM_DTYPE_F32] = to_float_f32;
    k->to_float[LLM_DTYPE_F16] = to_float_f16;
    k->to_float[LLM_DTYPE_BF16] = to_float_bf16;
    k->to_float[LLM_DTYPE_Q8_0] = to_float_q8_0;
    k->to_float[LLM_DTYPE_Q4_0] = to_float_q4_0;
    k->to_float[LLM_DTYPE_Q4_1] = to_float_q4_1;
    k->to_float[LLM_DTYPE_Q5_0] = to_float_q5_0;
    k->to_float[LLM_DTYPE_Q5_1] = to_float_q5_1;
    k->expf_n = expf_n_libm;
}
