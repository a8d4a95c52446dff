/*
 * test_llama_order.c -- the kernels that reproduce llama.cpp's x86 arithmetic
 * (cpu/vexp.h, kernels.h): the polynomial exp against a double-precision
 * exp, its special values, and the scalar and AVX2 variants against each
 * other. Those must agree bit for bit (not merely closely), since the
 * forward's bit-identity with llama.cpp (test_forward.c) rests on them on
 * every CPU that runs either variant.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "cpu/vexp.h"
#include "llama/runtime.h"

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}
static float frand(void) { return (float)rnd() / 4294967296.0f * 2.0f - 1.0f; }

/* Distance in units in the last place between two finite positive floats. */
static int64_t ulps(float a, float b) {
    return llabs((int64_t)llm__f2u(a) - (int64_t)llm__f2u(b));
}

/* A degree-5 polynomial on |b| <= ln2/2 is good to a few ulps over the whole
 * normal range; measured worst here is 2 ulp, we allow 3. Below the normal
 * range the scale split loses bits gracefully: 1e-6 relative of the smallest
 * normal is plenty for probabilities. */
Test(llama_order, exp_poly_accuracy) {
    int64_t worst = 0;
    for (int i = 0; i < 2000000; i++) {
        float x = frand() * 87.0f;
        float got = llm__exp_poly(x), want = (float)exp((double)x);
        int64_t u = ulps(got, want);
        worst = u > worst ? u : worst;
        cr_assert_leq(u, 3, "exp(%a) = %a, want %a", (double)x, (double)got, (double)want);
    }
    for (float x = -103.0f; x < -87.0f; x += 0.01f) {
        double want = exp((double)x);
        cr_assert_leq(fabs((double)llm__exp_poly(x) - want), 1e-6 * 1.2e-38, "exp(%g)", (double)x);
    }
    cr_log_info("exp_poly: worst %lld ulp over [-87, 87]", (long long)worst);
}

Test(llama_order, exp_poly_special_values) {
    cr_assert_eq(llm__exp_poly(0.0f), 1.0f);
    cr_assert_eq(llm__exp_poly(-INFINITY), 0.0f);   /* masked attention cells */
    cr_assert_eq(llm__exp_poly(-1000.0f), 0.0f);
    cr_assert(isinf(llm__exp_poly(1000.0f)) && llm__exp_poly(1000.0f) > 0);
    cr_assert(isinf(llm__exp_poly(INFINITY)));
    cr_assert(isnan(llm__exp_poly(NAN)));
}

static void kernel_sets(llm__cpu_kernels *s, llm__cpu_kernels *v) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels_scalar(s);
    llm__cpu_kernels_scalar(v);
    llm__cpu_kernels_x86(v, llm__cpu_features());
}

Test(llama_order, swiglu_and_softmax_rows_bit_identical) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    for (int rep = 0; rep < 300; rep++) {
        const int64_t n = 1 + rnd() % 300;
        const float spread = rep % 3 == 0 ? 200.0f : 12.0f; /* 200: exercises the out-of-range scale path */
        float *x = malloc(sizeof(float) * (size_t)n), *g = malloc(sizeof(float) * (size_t)n);
        float *o1 = malloc(sizeof(float) * (size_t)n), *o2 = malloc(sizeof(float) * (size_t)n);
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            x[i] = frand() * spread;
            g[i] = frand() * 4.0f;
            if (rep % 5 == 0 && rnd() % 4 == 0) x[i] = -INFINITY; /* masked cells */
            mx = x[i] > mx ? x[i] : mx;
        }
        if (rep % 5 != 0) {
            s.swiglu_row(o1, x, g, n);
            v.swiglu_row(o2, x, g, n);
            cr_assert_eq(memcmp(o1, o2, sizeof(float) * (size_t)n), 0, "swiglu_row n=%lld", (long long)n);
        }
        if (isfinite(mx)) {
            double s1 = s.exp_sum_row(o1, x, mx, n), s2 = v.exp_sum_row(o2, x, mx, n);
            cr_assert_eq(memcmp(o1, o2, sizeof(float) * (size_t)n), 0, "exp_sum_row values n=%lld", (long long)n);
            cr_assert(s1 == s2, "exp_sum_row sums n=%lld: %a vs %a", (long long)n, s1, s2);
        }
        free(x); free(g); free(o1); free(o2);
    }
}

Test(llama_order, tiled_attention_products_bit_identical) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    for (int rep = 0; rep < 200; rep++) {
        /* Scores: dot of f16 rows of any length (tails too). */
        const int64_t n = 1 + rnd() % 200;
        uint16_t *hx = malloc(2 * (size_t)n), *hy = malloc(2 * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            hx[i] = llm_fp32_to_fp16(frand() * 3);
            hy[i] = llm_fp32_to_fp16(frand() * 3);
        }
        float a = s.dot_f16_8(n, hx, hy), b = v.dot_f16_8(n, hx, hy);
        cr_assert(memcmp(&a, &b, sizeof(a)) == 0, "dot_f16_8 n=%lld: %a vs %a", (long long)n, (double)a,
                  (double)b);
        /* The other order computes the same sum up to rounding. */
        double mag = 0;
        for (int64_t i = 0; i < n; i++) mag += fabs((double)llm_fp16_to_fp32(hx[i]) * llm_fp16_to_fp32(hy[i]));
        cr_assert(fabs((double)a - v.dot_f16(n, hx, hy)) <= 1e-5 * mag + 1e-7);
        free(hx); free(hy);

        /* Scores of one query against a cache, both orders, odd head sizes. */
        {
            const int64_t hd = rep % 4 == 0 ? 8 * (1 + rnd() % 40) : 32 * (1 + rnd() % 4), len = 1 + rnd() % 60;
            uint16_t *kc = malloc(2 * (size_t)(len * 3 * hd)), *q = malloc(2 * (size_t)hd);
            size_t offs[64];
            for (int64_t t = 0; t < len; t++) offs[t] = (size_t)(((t * 7) % len) * 3 * hd);
            for (int64_t i = 0; i < len * 3 * hd; i++) kc[i] = llm_fp32_to_fp16(frand() * 2);
            for (int64_t i = 0; i < hd; i++) q[i] = llm_fp32_to_fp16(frand() * 2);
            llm__kv_rows kr = {kc, offs, (size_t)hd, 1};
            float *s1 = malloc(4 * (size_t)len), *s2 = malloc(4 * (size_t)len);
            for (int tiled = 0; tiled < 2; tiled++) {
                s.attn_scores_f16(&kr, len, hd, q, 0.125f, tiled, s1);
                v.attn_scores_f16(&kr, len, hd, q, 0.125f, tiled, s2);
                for (int64_t t = 0; t < len; t++) {
                    const uint16_t *row = kc + offs[t] + hd;
                    float want = (tiled ? v.dot_f16_8(hd, q, row) : v.dot_f16(hd, q, row)) * 0.125f;
                    cr_assert(memcmp(&s2[t], &want, 4) == 0, "attn_scores hd=%lld tiled=%d t=%lld", (long long)hd,
                              tiled, (long long)t);
                    if (tiled) cr_assert(memcmp(&s1[t], &s2[t], 4) == 0, "attn_scores scalar vs avx2");
                }
            }
            free(kc); free(q); free(s1); free(s2);
        }
        /* Value sums through a scrambled block table, F16 and F32 caches. */
        const int64_t hd = 8 * (1 + rnd() % 12) + (rep % 3 == 0 ? 5 : 0), bs = 4, len = 1 + rnd() % 90;
        const int64_t nblk = (len + bs - 1) / bs;
        int32_t table[32];
        for (int64_t k = 0; k < nblk; k++) table[k] = (int32_t)((k * 5 + 1) % nblk);
        size_t offs[128];
        for (int64_t t = 0; t < nblk * bs; t++) offs[t] = (size_t)((table[t / bs] * bs + t % bs) * 2 * hd);
        const int64_t cells = nblk * bs * 2 * hd;
        uint16_t *vh = malloc(2 * (size_t)cells);
        float *vf = malloc(4 * (size_t)cells);
        for (int64_t i = 0; i < cells; i++) {
            vf[i] = frand();
            vh[i] = llm_fp32_to_fp16(vf[i]);
        }
        float *pr = malloc(4 * (size_t)len), *scr = malloc(4 * (size_t)(32 * hd));
        float *r1 = malloc(4 * (size_t)hd), *r2 = malloc(4 * (size_t)hd), *r3 = malloc(4 * (size_t)hd);
        for (int64_t t = 0; t < len; t++) pr[t] = (frand() + 1.0f) / (float)len;
        for (int f16 = 0; f16 < 2; f16++) {
            llm__kv_rows kr = {f16 ? (const void *)vh : (const void *)vf, offs, (size_t)hd, f16};
            s.attn_wsum8(&kr, len, hd, pr, r1, scr);
            v.attn_wsum8(&kr, len, hd, pr, r2, scr);
            cr_assert_eq(memcmp(r1, r2, 4 * (size_t)hd), 0, "attn_wsum8 hd=%lld len=%lld f16=%d", (long long)hd,
                         (long long)len, f16);
            v.attn_wsum(&kr, len, (len + 31) / 32 * 32, hd, pr, r3, scr);
            for (int64_t d = 0; d < hd; d++) cr_assert(fabsf(r1[d] - r3[d]) <= 1e-5f);
        }
        free(vh); free(vf); free(pr); free(scr); free(r1); free(r2); free(r3);
    }
}

/* The grouped attention kernels (kernels.h *_g: the query heads of one KV
 * head at once) against the single-query kernels, query by query, bit for
 * bit, in both variants: the forward uses the grouped ones, and its
 * identity with llama.cpp rests on the per-query chains being unchanged.
 * Odd shapes: head sizes that are not multiples of 8 or 32 (fallbacks),
 * group sizes 1 to 7 (GQA 1, 3, 4 and the register blocks' tails), lengths
 * with tails of 4, 8 and 32 cells, n_all beyond len, a scrambled block
 * table, F16 and F32 caches for the value sums. */
static void grouped_attention_check(const llm__cpu_kernels *gs, const char *name);

/* Both copies of the grouped kernels where the CPU has them: attention_x86_256.c
 * (8-lane registers) and attention_x86_512.c (16 lanes), each against the
 * single-query kernels. */
Test(llama_order, grouped_attention_equals_per_query) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    llm__cpu_kernels_attn_x86_256(&v);
    grouped_attention_check(&v, "avx2");
    if (llm__cpu_features() & LLM__CPU_AVX512F) {
        llm__cpu_kernels_attn_x86_512(&v);
        grouped_attention_check(&v, "avx512");
    } else {
        cr_log_info("no AVX-512F: the 16-lane copy is not checked here");
    }
}

static void grouped_attention_check(const llm__cpu_kernels *gs, const char *name) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    v = *gs;
    static const int64_t hds[] = {64, 32, 128, 96, 40, 8, 16, 24, 69, 5, 13};
    static const int64_t nqs[] = {1, 3, 4, 2, 5, 7};
    for (int rep = 0; rep < 240; rep++) {
        const int64_t hd = hds[rep % 11], nq = nqs[(rep / 11) % 6];
        const int64_t len = rep % 7 == 0 ? 1 + rnd() % 8 : 1 + rnd() % 150, bs = 16, n_kv = 2, kvh = rep % 2;
        /* n_all: usually a multiple of 32 (as attention passes it); every
         * fifth rep not, so that the cells past its last whole 32 (summed in
         * double after the slots) are exercised too. */
        const int64_t n_all = rep % 5 == 2 ? len + rep % 29 : (len + (rep % 3 == 0 ? 40 : 0) + 31) / 32 * 32;
        const int64_t nblk = (n_all + bs - 1) / bs;
        int32_t table[16];
        for (int64_t b = 0; b < nblk; b++) table[b] = (int32_t)((b * 3 + 1) % nblk);
        size_t offs[256];
        for (int64_t t = 0; t < nblk * bs; t++) offs[t] = (size_t)((table[t / bs] * bs + t % bs) * n_kv * hd);
        const int64_t cells = nblk * bs * n_kv * hd;
        uint16_t *kh = malloc(2 * (size_t)cells), *vh = malloc(2 * (size_t)cells);
        float *vf = malloc(4 * (size_t)cells);
        for (int64_t i = 0; i < cells; i++) {
            kh[i] = llm_fp32_to_fp16(frand() * 2);
            vf[i] = frand();
            vh[i] = llm_fp32_to_fp16(vf[i]);
        }
        const int64_t stride = len + 3 + (int64_t)(rnd() % 9); /* rows of scores / probabilities */
        uint16_t *q16 = malloc(2 * (size_t)(nq * hd));
        float *qf = malloc(4 * (size_t)(nq * hd)), *sg = malloc(4 * (size_t)(nq * stride));
        float *s1 = malloc(4 * (size_t)len), *pr = malloc(4 * (size_t)(nq * stride));
        float *scr = malloc(4 * (size_t)(nq * 32 * hd)), *og = malloc(4 * (size_t)(nq * hd + 1));
        float *o1 = malloc(4 * (size_t)hd);
        for (int64_t i = 0; i < nq * hd; i++) q16[i] = llm_fp32_to_fp16(frand() * 2);
        llm__kv_rows kr = {kh, offs, (size_t)(kvh * hd), 1};
        for (int var = 0; var < 2; var++) {
            const llm__cpu_kernels *K = var ? &v : &s;
            for (int tiled = 0; tiled < 2; tiled++) {
                for (int64_t i = 0; i < nq * stride; i++) sg[i] = 1234.5f; /* nothing past len is written */
                K->attn_scores_f16_g(&kr, 0, len, hd, q16, nq, 0.125f, tiled, sg, stride, qf);
                for (int64_t j = 0; j < nq; j++) {
                    K->attn_scores_f16(&kr, len, hd, q16 + j * hd, 0.125f, tiled, s1);
                    cr_assert(memcmp(s1, sg + j * stride, 4 * (size_t)len) == 0,
                              "%s attn_scores_f16_g hd=%lld nq=%lld len=%lld tiled=%d query %lld",
                              var ? name : "scalar", (long long)hd, (long long)nq, (long long)len, tiled,
                              (long long)j);
                    for (int64_t t = len; t < stride; t++) cr_assert(sg[j * stride + t] == 1234.5f);
                }
                if (tiled) {
                    /* The tiled order is the same in both variants. */
                    for (int64_t j = 0; j < nq; j++) {
                        s.attn_scores_f16(&kr, len, hd, q16 + j * hd, 0.125f, 1, s1);
                        cr_assert(memcmp(s1, sg + j * stride, 4 * (size_t)len) == 0, "tiled scores scalar vs grouped");
                    }
                }
            }
            for (int64_t i = 0; i < nq * stride; i++) pr[i] = (frand() + 1.0f) / (float)len;
            for (int f16 = 0; f16 < 2; f16++) {
                llm__kv_rows vr = {f16 ? (const void *)vh : (const void *)vf, offs, (size_t)(kvh * hd), f16};
                for (int tiled = 0; tiled < 2; tiled++) {
                    og[nq * hd] = 777.0f;
                    K->attn_wsum_g(&vr, 0, len, n_all, hd, pr, stride, nq, tiled, og, scr);
                    cr_assert(og[nq * hd] == 777.0f, "attn_wsum_g writes past nq * hd");
                    for (int64_t j = 0; j < nq; j++) {
                        if (tiled) {
                            K->attn_wsum8(&vr, len, hd, pr + j * stride, o1, scr);
                        } else {
                            K->attn_wsum(&vr, len, n_all, hd, pr + j * stride, o1, scr);
                        }
                        cr_assert(memcmp(o1, og + j * hd, 4 * (size_t)hd) == 0,
                                  "%s attn_wsum_g hd=%lld nq=%lld len=%lld n_all=%lld f16=%d tiled=%d query %lld",
                                  var ? name : "scalar", (long long)hd, (long long)nq, (long long)len,
                                  (long long)n_all, f16, tiled, (long long)j);
                        if (tiled) {
                            s.attn_wsum8(&vr, len, hd, pr + j * stride, o1, scr);
                            cr_assert(memcmp(o1, og + j * hd, 4 * (size_t)hd) == 0, "tiled wsum scalar vs grouped");
                        }
                    }
                }
            }
        }
        free(kh); free(vh); free(vf); free(q16); free(qf); free(sg); free(s1); free(pr); free(scr); free(og);
        free(o1);
    }
}

/* The value sums of a decode step over long contexts, where the SIMD variant
 * sums the 32 slot chains in stretches of keys (attention_x86_256.c,
 * wsum_stretches): against the single-query kernel, bit for bit, for
 * lengths across several stretches and their edges, window starts
 * (t_start > 0, with p[t] = 0 before it for the reference, kernels.h) that
 * fall inside and on the edge of a stretch, and a scrambled block table. */
static void grouped_value_sums_check(const llm__cpu_kernels *gs);

Test(llama_order, grouped_value_sums_long_and_windowed) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    llm__cpu_kernels_attn_x86_256(&v);
    grouped_value_sums_check(&v);
    if (llm__cpu_features() & LLM__CPU_AVX512F) {
        llm__cpu_kernels_attn_x86_512(&v);
        grouped_value_sums_check(&v);
    }
}

static void grouped_value_sums_check(const llm__cpu_kernels *gs) {
    llm__cpu_kernels v = *gs;
    static const int64_t lens[] = {255, 256, 257, 511, 700, 1024, 1337};
    static const int64_t hds[] = {64, 128, 96, 32, 40};
    const int64_t bs = 16, n_kv = 2, nmax = 1344;
    const int64_t nblk = nmax / bs;
    size_t *offs = malloc(sizeof(size_t) * (size_t)nmax);
    for (int64_t t = 0; t < nmax; t++) offs[t] = (size_t)((((t / bs) * 29 + 5) % nblk * bs + t % bs) * n_kv * 128);
    uint16_t *vh = malloc(2 * (size_t)(nmax * n_kv * 128));
    for (int64_t i = 0; i < nmax * n_kv * 128; i++) vh[i] = llm_fp32_to_fp16(frand());
    float *pr = malloc(4 * (size_t)(4 * nmax)), *scr = malloc(4 * (size_t)(4 * 32 * 128));
    float *og = malloc(4 * (size_t)(4 * 128)), *o1 = malloc(4 * 128), *p1 = malloc(4 * (size_t)nmax);
    for (int rep = 0; rep < 70; rep++) {
        const int64_t len = lens[rep % 7], hd = hds[rep % 5], nq = 1 + rep % 4;
        const int64_t ts = rep % 3 == 0 ? 0 : rep % 3 == 1 ? len - 1 - (int64_t)(rnd() % (uint64_t)(len - 1))
                                                           : (len > 512 ? len - 512 : 0);
        const int64_t n_all = (len + 31) / 32 * 32;
        llm__kv_rows vr = {vh, offs, (size_t)((rep % 2) * hd), 1};
        for (int64_t i = 0; i < nq * nmax; i++) pr[i] = (frand() + 1.0f) / (float)len;
        for (int tiled = 0; tiled < 2; tiled++) { /* decode's 32 slots in stretches; a prompt's 8 */
            v.attn_wsum_g(&vr, ts, len, n_all, hd, pr, nmax, nq, tiled, og, scr);
            for (int64_t j = 0; j < nq; j++) {
                for (int64_t t = 0; t < len; t++) p1[t] = t < ts ? 0.0f : pr[j * nmax + t];
                if (tiled) v.attn_wsum8(&vr, len, hd, p1, o1, scr);
                else v.attn_wsum(&vr, len, n_all, hd, p1, o1, scr);
                cr_assert(memcmp(o1, og + j * hd, 4 * (size_t)hd) == 0,
                          "attn_wsum_g hd=%lld nq=%lld len=%lld t_start=%lld tiled=%d query %lld", (long long)hd,
                          (long long)nq, (long long)len, (long long)ts, tiled, (long long)j);
            }
        }
    }
    free(offs); free(vh); free(pr); free(scr); free(og); free(o1); free(p1);
}

/* The 2 x 4 and 4 x 1 matmul micro-kernels (unpacked activation scales)
 * against the plain dot product they stand in for: same bits, or the forward would
 * depend on how the matmul tiles its rows. */
Test(llama_order, micro_kernels_equal_dot) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    static const llm_dtype types[] = {LLM_DTYPE_Q4_1, LLM_DTYPE_Q8_0};
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        const llm_dtype wt = types[ti], at = v.act_type[wt];
        if (!v.dot2x4[wt]) continue;
        for (int rep = 0; rep < 40; rep++) {
            const int64_t K = 32 * (1 + rnd() % 40), nb = K / 32;
            size_t wr, ar;
            cr_assert_eq(llm_dtype_row_size(wt, (uint64_t)K, &wr), LLM_OK);
            cr_assert_eq(llm_dtype_row_size(at, (uint64_t)K, &ar), LLM_OK);
            char *w = malloc(2 * wr), *a = malloc(4 * ar);
            float *x = malloc(sizeof(float) * (size_t)K), *sc = malloc(sizeof(float) * (size_t)(8 * nb));
            for (int r = 0; r < 2; r++) {
                for (int64_t i = 0; i < K; i++) x[i] = frand() * (rep % 2 ? 3.0f : 0.01f);
                cr_assert_eq(llm_dtype_quantize_row(wt, x, w + r * wr, (size_t)K), LLM_OK);
                if (wt == LLM_DTYPE_Q8_0 && rep % 4 == 3) {
                    /* Any byte, -128 included (a file may hold it): the sums stay exact. */
                    for (int64_t b = 0; b < nb; b++) {
                        for (int i = 0; i < 32; i++) w[r * wr + (size_t)b * 34 + 2 + (size_t)i] = (char)(rnd() >> 24);
                    }
                }
            }
            for (int j = 0; j < 4; j++) {
                for (int64_t i = 0; i < K; i++) x[i] = frand() * 2.0f;
                v.quantize[at](x, a + j * ar, K);
                for (int64_t b = 0; b < nb; b++) {
                    /* Q8_0 and Q8_1 both start with the half scale d; Q8_1 has s next. */
                    const uint16_t *blk = (const uint16_t *)(a + j * ar + (size_t)b * (ar / (size_t)nb));
                    sc[8 * b + j] = llm_fp16_to_fp32(blk[0]);
                    sc[8 * b + 4 + j] = at == LLM_DTYPE_Q8_1 ? llm_fp16_to_fp32(blk[1]) : 0.0f;
                }
            }
            /* dot4x1: four weight rows (the two above, repeated) by activation row 2. */
            if (v.dot4x1[wt]) {
                char *w4 = malloc(4 * wr);
                float sc1[2 * 64], o4[4];
                for (int r = 0; r < 4; r++) memcpy(w4 + r * wr, w + (r % 2) * wr, wr);
                for (int64_t b = 0; b < nb; b++) {
                    sc1[2 * b] = sc[8 * b + 2];
                    sc1[2 * b + 1] = sc[8 * b + 4 + 2];
                }
                v.dot4x1[wt](K, w4, wr, a + 2 * ar, sc1, o4);
                for (int r = 0; r < 4; r++) {
                    float want = v.dot[wt](K, w4 + r * wr, a + 2 * ar);
                    cr_assert(memcmp(&o4[r], &want, sizeof want) == 0, "dot4x1 %s K=%lld row %d: %a vs %a",
                              llm_dtype_name(wt), (long long)K, r, (double)o4[r], (double)want);
                }
                free(w4);
            }
            /* The registry's dot2x4, then (Q8_0) each built variant: AVX2, AVX-VNNI, AVX-512. */
            for (int var = 0; var < 4; var++) {
                llm__vec_dot2x4_fn d2x4 = v.dot2x4[wt];
                llm__vec_dot4x1_fn d4x1 = NULL;
                if (var > 0) {
                    if (wt != LLM_DTYPE_Q8_0 || !llm__cpu_has_avx2() || !llm__q8_0_micro_variant(var - 1, &d2x4, &d4x1)) {
                        continue;
                    }
                    char *w4 = malloc(4 * wr);
                    float sc1[2 * 64], o4[4];
                    for (int r = 0; r < 4; r++) memcpy(w4 + r * wr, w + ((r + 1) % 2) * wr, wr);
                    for (int64_t b = 0; b < nb; b++) sc1[2 * b] = sc[8 * b + 1], sc1[2 * b + 1] = 0.0f;
                    d4x1(K, w4, wr, a + ar, sc1, o4);
                    for (int r = 0; r < 4; r++) {
                        float want = v.dot[wt](K, w4 + r * wr, a + ar);
                        cr_assert(memcmp(&o4[r], &want, sizeof want) == 0, "dot4x1 variant %d K=%lld row %d: %a vs %a",
                                  var - 1, (long long)K, r, (double)o4[r], (double)want);
                    }
                    free(w4);
                }
                float out[2][4];
                d2x4(K, w, wr, a, ar, sc, out);
                for (int r = 0; r < 2; r++) {
                    for (int j = 0; j < 4; j++) {
                        float want = v.dot[wt](K, w + r * wr, a + j * ar);
                        cr_assert(memcmp(&out[r][j], &want, sizeof want) == 0,
                                  "%s variant %d K=%lld row %d col %d: %a vs %a", llm_dtype_name(wt), var, (long long)K,
                                  r, j, (double)out[r][j], (double)want);
                    }
                }
            }
            free(w); free(a); free(x); free(sc);
        }
    }
}

/* The matmul picks llama.cpp's shape-dependent kernels (kernels.h rows8 /
 * tiled / sgemm): Q4_K and Q4_0 with M % 8 == 0 through the repacked-order
 * pair (groups of 4 activation rows through dot4, the rest through dot),
 * other K-quants from 8 activation rows up through the tiled pair, F16 / BF16
 * from 2 rows up (K % 8 == 0, M % 4 == 0) through the sgemm pair, otherwise
 * the plain dot. Checked through llm_op_matmul against the kernels it should
 * have called (those are checked against llama.cpp's own in test_kernels). */
static void matmul_rows(llm_backend *be, llm_dtype wt, int64_t M, int64_t n, const void *w, size_t wr,
                        const float *x, int64_t K, float *out) {
    llm_buffer *bw, *bx, *bo;
    cr_assert_eq(llm_buffer_alloc(be, wr * (size_t)M, &bw), LLM_OK);
    cr_assert_eq(llm_buffer_write(bw, 0, w, wr * (size_t)M), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * (size_t)(n * K), &bx), LLM_OK);
    cr_assert_eq(llm_buffer_write(bx, 0, x, sizeof(float) * (size_t)(n * K)), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * (size_t)(n * M), &bo), LLM_OK);
    llm_tensor tw = llm_tensor_2d(bw, 0, wt, K, M), tx = llm_tensor_2d(bx, 0, LLM_DTYPE_F32, K, n);
    llm_tensor to = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, M, n);
    cr_assert_eq(llm_op_matmul(be, &to, &tx, &tw), LLM_OK);
    cr_assert_eq(llm_buffer_read(bo, 0, out, sizeof(float) * (size_t)(n * M)), LLM_OK);
    llm_buffer_free(bw);
    llm_buffer_free(bx);
    llm_buffer_free(bo);
}

Test(llama_order, matmul_picks_llamacpp_kquant_kernels) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    (void)s;
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = 2;
    llm_backend *be;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
    static const llm_dtype types[] = {LLM_DTYPE_Q4_K, LLM_DTYPE_Q6_K, LLM_DTYPE_Q4_0, LLM_DTYPE_F16,
                                      LLM_DTYPE_BF16};
    static const int64_t Ms[] = {16, 12, 10}, ns[] = {1, 2, 3, 6, 8, 11};
    const int64_t K = 512;
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        const llm_dtype wt = types[ti], at = v.act_type[wt];
        size_t wr, ar;
        cr_assert_eq(llm_dtype_row_size(wt, (uint64_t)K, &wr), LLM_OK);
        cr_assert_eq(llm_dtype_row_size(at, (uint64_t)K, &ar), LLM_OK);
        for (size_t mi = 0; mi < sizeof(Ms) / sizeof(Ms[0]); mi++) {
            const int64_t M = Ms[mi];
            /* Weights: random bytes below 0x40 (finite half scales, any quants;
             * small finite F16 / BF16 values). */
            char *w = malloc(wr * (size_t)M);
            for (int64_t m = 0; m < M; m++) {
                for (size_t b = 0; b < wr; b++) w[(size_t)m * wr + b] = (char)(rnd() & 0x3f);
            }
            for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
                const int64_t n = ns[ni];
                float *x = malloc(sizeof(float) * (size_t)(n * K)), *got = malloc(sizeof(float) * (size_t)(n * M));
                char *a = malloc(ar * (size_t)n);
                for (int64_t i = 0; i < n * K; i++) x[i] = frand() * 2.0f;
                for (int64_t r = 0; r < n; r++) v.quantize[at](x + r * K, a + (size_t)r * ar, K);
                matmul_rows(be, wt, M, n, w, wr, x, K, got);
                const struct llm__dot_pair *alt = NULL;
                if (v.rows8[wt].dot && M % 8 == 0) alt = &v.rows8[wt];
                else if (v.tiled[wt].dot && n >= 8) alt = &v.tiled[wt];
                else if (v.sgemm[wt].dot && n >= 2 && K % 8 == 0 && M % 4 == 0) alt = &v.sgemm[wt];
                const int64_t full = n & ~(int64_t)3;
                for (int64_t m = 0; m < M; m++) {
                    for (int64_t r = 0; r < n; r++) {
                        float want;
                        if (alt && r < full) {
                            float o4[4];
                            alt->dot4(K, w + (size_t)m * wr, a + (size_t)(r & ~(int64_t)3) * ar, ar, o4);
                            want = o4[r & 3];
                        } else {
                            want = (alt ? alt->dot : v.dot[wt])(K, w + (size_t)m * wr, a + (size_t)r * ar);
                        }
                        cr_assert(memcmp(&got[r * M + m], &want, 4) == 0, "%s M=%lld n=%lld out[%lld][%lld]: %a vs %a",
                                  llm_dtype_name(wt), (long long)M, (long long)n, (long long)r, (long long)m,
                                  (double)got[r * M + m], (double)want);
                    }
                }
                free(x); free(got); free(a);
            }
            free(w);
        }
    }
    llm_backend_free(be);
}

/* A prompt pass may run its feed-forward block on the batch's rows in runs
 * (the models' llm_net_params.ffn_rows): runs of a multiple of 4 rows, none
 * shorter than 8, the last taking what is left. The matmul picks its kernels
 * by the number of rows and splits them in groups of 4 plus a tail (kernels.h,
 * llm__dot_pair), so every row must meet the same kernel in a run as in the
 * whole batch: here, for every weight type the CPU backend multiplies, with
 * M % 8 == 0 (rows8 pairs) and not (tiled K-quant pairs from 8 rows), the
 * rows of one matmul against the same rows in runs of 8 (and a last run of
 * 8..15), bit for bit. */
Test(llama_order, matmul_rows_in_runs_equal_one_pass) {
    llm__cpu_kernels s, v;
    kernel_sets(&s, &v);
    (void)s;
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = 2;
    llm_backend *be;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
    static const llm_dtype types[] = {LLM_DTYPE_F32,  LLM_DTYPE_F16,  LLM_DTYPE_BF16, LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_1,
                                      LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_1, LLM_DTYPE_Q8_0, LLM_DTYPE_Q2_K, LLM_DTYPE_Q3_K,
                                      LLM_DTYPE_Q4_K, LLM_DTYPE_Q5_K, LLM_DTYPE_Q6_K};
    static const int64_t Ms[] = {16, 12}, ns[] = {20, 45, 38};
    const int64_t K = 512;
    int checked = 0;
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        const llm_dtype wt = types[ti];
        if (!v.dot[wt]) continue; /* not multiplied by this build's CPU kernels */
        size_t wr;
        cr_assert_eq(llm_dtype_row_size(wt, (uint64_t)K, &wr), LLM_OK);
        for (size_t mi = 0; mi < sizeof(Ms) / sizeof(Ms[0]); mi++) {
            const int64_t M = Ms[mi];
            char *w = malloc(wr * (size_t)M);
            for (size_t b = 0; b < wr * (size_t)M; b++) w[b] = (char)(rnd() & 0x3f);
            for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
                const int64_t n = ns[ni];
                float *x = malloc(sizeof(float) * (size_t)(n * K)), *whole = malloc(sizeof(float) * (size_t)(n * M));
                float *runs = malloc(sizeof(float) * (size_t)(n * M));
                for (int64_t i = 0; i < n * K; i++) x[i] = frand() * 2.0f;
                matmul_rows(be, wt, M, n, w, wr, x, K, whole);
                for (int64_t r0 = 0, c; r0 < n; r0 += c) {
                    c = n - r0 <= 15 ? n - r0 : 8;
                    matmul_rows(be, wt, M, c, w, wr, x + r0 * K, K, runs + r0 * M);
                }
                for (int64_t i = 0; i < n * M; i++) {
                    cr_assert(memcmp(&whole[i], &runs[i], 4) == 0, "%s M=%lld n=%lld out[%lld][%lld]: %a vs %a",
                              llm_dtype_name(wt), (long long)M, (long long)n, (long long)(i / M),
                              (long long)(i % M), (double)whole[i], (double)runs[i]);
                }
                free(x); free(whole); free(runs);
                checked++;
            }
            free(w);
        }
    }
    cr_assert(checked >= 12 * 6, "only %d cases ran", checked);
    llm_backend_free(be);
}
