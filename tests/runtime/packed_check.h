/*
 * packed_check.h -- for the kernel tests: a pair's packed tiles (kernels.h
 * llm__pack8_fn) against the outputs they must equal bit for bit.
 */
#ifndef LLM_TEST_PACKED_CHECK_H
#define LLM_TEST_PACKED_CHECK_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "llama/runtime.h"

/* pr's 8 rows (w, stride wb) packed, then by 4 activation rows (a, stride
 * ab) must give want4 ([act row][weight row], the pair's dot4) bit for bit,
 * and write no more than each row's 8 outputs. pr->pack8 must be set. */
static inline void packed_check(const struct llm__dot_pair *pr, const char *name, int n, const void *w, size_t wb,
                                const void *a, size_t ab, const float (*want4)[8]) {
    cr_assert(pr->pack8_bytes && pr->dot8x4_packed, "%s: pack8 without its size or product", name);
    const size_t bytes = (pr->pack8_bytes(n) + 63) & ~(size_t)63;
    void *pk = aligned_alloc(64, bytes);
    cr_assert_not_null(pk);
    memset(pk, 0xA5, bytes);
    pr->pack8(n, w, wb, pk);
    float o[4][9];
    memset(o, 0xFF, sizeof o);
    pr->dot8x4_packed(n, pk, a, ab, &o[0][0], 9);
    for (int r = 0; r < 4; r++) {
        uint32_t bits;
        memcpy(&bits, &o[r][8], 4);
        cr_assert_eq(bits, 0xFFFFFFFFu, "%s n=%d packed: wrote past row %d's 8 outputs", name, n, r);
        for (int col = 0; col < 8; col++) {
            cr_assert(memcmp(&o[r][col], &want4[r][col], sizeof(float)) == 0,
                      "%s n=%d packed [%d][%d]: %.9g, dot4 %.9g", name, n, r, col, o[r][col], want4[r][col]);
        }
    }
    free(pk);
}

/* pr's dot16x4_packed (kernels.h) on two groups: w's 8 rows (stride wb) and
 * the same rows in reverse order, packed at the matmul's 64-byte-rounded
 * stride. Row r of the first group must give want4[j][r], row r of the
 * second want4[j][7 - r], bit for bit, and nothing past 16 outputs per
 * activation row may be written. */
static inline void packed16_check(const struct llm__dot_pair *pr, const char *name, int n, const void *w, size_t wb,
                                  const void *a, size_t ab, const float (*want4)[8]) {
    const size_t bytes = (pr->pack8_bytes(n) + 63) & ~(size_t)63;
    char *rev = malloc(8 * wb);
    char *pk = aligned_alloc(64, 2 * bytes);
    cr_assert(rev && pk);
    for (int r = 0; r < 8; r++) memcpy(rev + (size_t)r * wb, (const char *)w + (size_t)(7 - r) * wb, wb);
    memset(pk, 0xA5, 2 * bytes);
    pr->pack8(n, w, wb, pk);
    pr->pack8(n, rev, wb, pk + bytes);
    float o[4][17];
    memset(o, 0xFF, sizeof o);
    pr->dot16x4_packed(n, pk, bytes, a, ab, &o[0][0], 17);
    for (int j = 0; j < 4; j++) {
        uint32_t bits;
        memcpy(&bits, &o[j][16], 4);
        cr_assert_eq(bits, 0xFFFFFFFFu, "%s n=%d dot16: wrote past row %d's 16 outputs", name, n, j);
        for (int r = 0; r < 16; r++) {
            const float want = r < 8 ? want4[j][r] : want4[j][15 - r];
            cr_assert(memcmp(&o[j][r], &want, sizeof want) == 0, "%s n=%d dot16 [%d][%d]: %.9g, dot4 %.9g", name, n,
                      j, r, o[j][r], want);
        }
    }
    free(rev);
    free(pk);
}

/* packed_check with each of the n_prod products prods[v] (the variants
 * built and supported here, NULL where not) in place of pr's; prods[0], the
 * AVX2 one, must exist, and pr's own product must be one of them. */
static inline void packed_check_variants(const struct llm__dot_pair *pr, const char *name, int n, const void *w,
                                         size_t wb, const void *a, size_t ab, const float (*want4)[8],
                                         const llm__vec_dot8x4_packed_fn *prods, int n_prod) {
    cr_assert(pr->pack8, "%s: no packed tiles with AVX2", name);
    cr_assert(prods[0], "%s: the AVX2 packed product is missing", name);
    int registered = 0;
    for (int v = 0; v < n_prod; v++) {
        if (!prods[v]) {
            continue;
        }
        struct llm__dot_pair p = *pr;
        p.dot8x4_packed = prods[v];
        registered |= prods[v] == pr->dot8x4_packed;
        char label[48];
        snprintf(label, sizeof label, "%s packed variant %d", name, v);
        packed_check(&p, label, n, w, wb, a, ab, want4);
    }
    cr_assert(registered, "%s: the registered packed product is none of the variants", name);
}

/* One matmul through the public API: out[n][M] = x[n][K] . w^T. */
static inline void prep_matmul(llm_backend *be, const llm_tensor *w, const float *x, int64_t n, float *out) {
    const int64_t K = w->ne[0], M = w->ne[1];
    llm_buffer *bx = NULL, *bo = NULL;
    cr_assert_eq(llm_buffer_alloc(be, (size_t)(n * K) * sizeof(float), &bx), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, (size_t)(n * M) * sizeof(float), &bo), LLM_OK);
    cr_assert_eq(llm_buffer_write(bx, 0, x, (size_t)(n * K) * sizeof(float)), LLM_OK);
    const llm_tensor tx = llm_tensor_2d(bx, 0, LLM_DTYPE_F32, K, n), to = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, M, n);
    cr_assert_eq(llm_op_matmul(be, &to, &tx, w), LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_buffer_read(bo, 0, out, (size_t)(n * M) * sizeof(float)), LLM_OK);
    llm_buffer_free(bx);
    llm_buffer_free(bo);
}

/* The activation row counts prepared_check tries: 1..13, then 32 and 35,
 * past the matmul's PREP_TILE_ROWS (matmul_cpu.c: the group decoded into
 * packed tiles once, 4 rows at a time, 35's last 3 through dot). */
#define PREP_ROWS 15
#define PREP_ROWS_MAX 35
static inline int64_t prep_rows(int i) { return i < 13 ? i + 1 : i == 13 ? 32 : 35; }

/* A weight of type t ([M][K] at w, wrapped) through llm_op_matmul before and
 * after llm_backend_prepare_weight, for each prep_rows count of activation
 * rows from x ([PREP_ROWS_MAX][K]): the same bits every time. Returns *kept. */
static inline int prepared_check(llm_backend *be, llm_dtype t, int64_t K, int64_t M, const void *w, const float *x) {
    size_t row = 0;
    cr_assert_eq(llm_dtype_row_size(t, (uint64_t)K, &row), LLM_OK);
    llm_buffer *bw = NULL;
    cr_assert_eq(llm_buffer_wrap_host(be, w, row * (size_t)M, &bw), LLM_OK);
    const llm_tensor tw = llm_tensor_2d(bw, 0, t, K, M);
    const size_t per = (size_t)(PREP_ROWS_MAX * M);
    float *before = malloc(sizeof(float) * PREP_ROWS * per), *o = malloc(sizeof(float) * per);
    cr_assert(before && o);
    for (int c = 0; c < PREP_ROWS; c++) prep_matmul(be, &tw, x, prep_rows(c), before + (size_t)c * per);
    int kept = -1;
    cr_assert_eq(llm_backend_prepare_weight(be, &tw, &kept), LLM_OK, "%s", llm_runtime_last_error());
    for (int c = 0; c < PREP_ROWS; c++) {
        const int64_t n = prep_rows(c);
        prep_matmul(be, &tw, x, n, o);
        const float *want = before + (size_t)c * per;
        for (int64_t i = 0; i < n * M; i++) {
            cr_assert(memcmp(&o[i], &want[i], 4) == 0, "%s K=%lld n=%lld out[%lld][%lld]: prepared %.9g, unprepared %.9g",
                      llm_dtype_name(t), (long long)K, (long long)n, (long long)(i / M), (long long)(i % M), o[i],
                      want[i]);
        }
    }
    /* get_rows of the weight (from the copy where the backend can unpack
     * one): the file's rows, dequantized */
    float *g = malloc(sizeof(float) * (size_t)K), *want = malloc(sizeof(float) * (size_t)K);
    llm_buffer *br = NULL;
    cr_assert(g && want);
    cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * (size_t)K, &br), LLM_OK);
    const llm_tensor tr = llm_tensor_2d(br, 0, LLM_DTYPE_F32, K, 1);
    const int32_t ids[3] = {0, 17, (int32_t)M - 1};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(llm_op_get_rows(be, &tr, &tw, &ids[i], 1), LLM_OK, "%s", llm_runtime_last_error());
        cr_assert_eq(llm_buffer_read(br, 0, g, sizeof(float) * (size_t)K), LLM_OK);
        cr_assert_eq(llm_dtype_dequantize_row(t, (const char *)w + row * (size_t)ids[i], want, (size_t)K), LLM_OK);
        cr_assert(memcmp(g, want, sizeof(float) * (size_t)K) == 0, "%s K=%lld: get_rows of row %d", llm_dtype_name(t),
                  (long long)K, ids[i]);
    }
    llm_buffer_free(br);
    free(g);
    free(want);
    llm_buffer_free(bw);
    free(before);
    free(o);
    return kept;
}

/* A CPU backend of 2 threads for the prepared-weight tests. */
static inline llm_backend *prep_backend_k(llm_kernels kernels) {
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = 2;
    bp.kernels = kernels;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
    return be;
}
static inline llm_backend *prep_backend(void) { return prep_backend_k(LLM_KERNELS_AUTO); }

/* n bytes of an xorshift32 stream (state *st): random blocks, since every
 * byte pattern is a valid block of the K-quants (their scales aside). */
static inline void prep_random_bytes(void *p, size_t n, uint32_t *st) {
    for (size_t i = 0; i < n; i++) {
        *st ^= *st << 13;
        *st ^= *st >> 17;
        *st ^= *st << 5;
        ((uint8_t *)p)[i] = (uint8_t)(*st >> 24);
    }
}

/* When no weight of type t was kept, this CPU must have no prepared layout
 * for t (else it was registered and never taken). */
static inline void prep_none_kept_at(int kept_any, llm_dtype t, int isa_level) {
    if (kept_any) return;
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    const unsigned cpu = llm__cpu_features_upto(isa_level);
    if (cpu & LLM__CPU_AVX2) llm__cpu_kernels_x86(&k, cpu);
    cr_assert_null(k.prep[t].dot, "a %s prepared layout is registered but was never taken", llm_dtype_name(t));
    cr_log_info("no prepared %s layout on this CPU: nothing to compare", llm_dtype_name(t));
}
static inline void prep_none_kept(int kept_any, llm_dtype t) { prep_none_kept_at(kept_any, t, LLM__ISA_ALL); }

#endif
