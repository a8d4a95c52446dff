/*
 * peak.c -- this machine's limits, for llm-bench --peak: memory read
 * bandwidth (a buffer far larger than the caches, read by every thread) and
 * the arithmetic peaks of the instructions our kernels use, measured by
 * register-only loops (no memory traffic): int8 multiply-adds by AVX2
 * vpmaddubsw + vpmaddwd (the quantized dots), by AVX-VNNI vpdpbusd and by
 * AVX-512 VNNI vpdpbusd on 512 bits when the CPU has them, and fp32 FMAs on
 * 8-float vectors (and 16-float ones with AVX-512).
 *
 * Each figure is the best of several passes: the machine may be shared, and
 * the best pass is the one least disturbed. The loops are built for the
 * instruction sets they name (target attributes) and run only after the CPU
 * reported them.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include "bench.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    int kind;              /* 0 read, 1 int8 avx2, 2 int8 vnni, 3 fp32 fma, 4 int8 avx512, 5 fp32 avx512 */
    const uint8_t *buf;    /* kind 0: the slice to read */
    size_t len;            /* its bytes (multiple of 128) */
    int64_t iters;         /* kinds 1..3: loop iterations */
    pthread_barrier_t *bar;
    double t0, t1;         /* start / end of this thread's work */
    uint64_t sink;         /* keeps the results alive */
} peak_job;

#if HAVE_X86
__attribute__((target("avx2"))) static uint64_t read_avx2(const uint8_t *p, size_t len) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < len; i += 128) {
        a0 = _mm256_xor_si256(a0, _mm256_load_si256((const __m256i *)(p + i)));
        a1 = _mm256_xor_si256(a1, _mm256_load_si256((const __m256i *)(p + i + 32)));
        a2 = _mm256_xor_si256(a2, _mm256_load_si256((const __m256i *)(p + i + 64)));
        a3 = _mm256_xor_si256(a3, _mm256_load_si256((const __m256i *)(p + i + 96)));
    }
    __m256i x = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    return (uint64_t)_mm256_extract_epi64(x, 0) ^ (uint64_t)_mm256_extract_epi64(x, 3);
}

/* The register-only loops keep every operand in a register (16 ymm without
 * AVX-512): an empty asm "changes" the shared multiplicand s every
 * iteration, so no product can be hoisted out of the loop. (The first form
 * had an asm on each of 8 per-chain multiplicands, 18 live vectors: GCC kept
 * the arrays in memory, every step paid a store and a load, and the "peak"
 * came out below what the kernels reach.) */
#define PEAK_CHAINS 12

/* vpmaddubsw + vpmaddwd + vpaddd: 32 int8 multiply-adds per chain step (the
 * inner step of a Q4/Q8 block dot). Only the vpaddd is carried from one
 * iteration to the next, so 6 chains cover its latency; each has its own
 * multiplicand u[j], so no product can be shared between chains. */
__attribute__((target("avx2"))) static uint64_t int8_avx2(int64_t iters) {
    __m256i s = _mm256_set1_epi8(-5), one = _mm256_set1_epi16(1);
    __m256i acc[6], u[6];
    for (int j = 0; j < 6; j++) acc[j] = _mm256_set1_epi32(j), u[j] = _mm256_set1_epi8((char)(3 + j));
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < 6; j++) acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(u[j], s), one));
        __asm__ volatile("" : "+x"(s));
    }
    __m256i x = acc[0];
    for (int j = 1; j < 6; j++) x = _mm256_add_epi32(x, acc[j]);
    return (uint64_t)_mm256_extract_epi64(x, 0);
}

/* PEAK_CHAINS accumulators as named variables: GCC kept an array of them
 * on the stack (a store per step) even with no loads in the loop. */
#define PEAK_EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define PEAK_EACH10(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9)

/* AVX-VNNI vpdpbusd on 256 bits: 32 per chain step; the accumulator is the
 * carried operand, so 10 chains cover its latency (12 did not fit GCC 12's
 * allocation of the 16 ymm registers). */
__attribute__((target("avx2,avxvnni"))) static uint64_t int8_vnni(int64_t iters) {
    __m256i s = _mm256_set1_epi8(-5), u = _mm256_set1_epi8(3), x = _mm256_setzero_si256();
#define DECL(j) __m256i a##j = _mm256_set1_epi32(j);
#define STEP(j) a##j = _mm256_dpbusd_avx_epi32(a##j, u, s);
#define SUM(j) x = _mm256_add_epi32(x, a##j);
    PEAK_EACH10(DECL)
    for (int64_t i = 0; i < iters; i++) {
        PEAK_EACH10(STEP)
        __asm__ volatile("" : "+x"(s));
    }
    PEAK_EACH10(SUM)
#undef DECL
#undef STEP
#undef SUM
    return (uint64_t)_mm256_extract_epi64(x, 0);
}

/* AVX-512 VNNI vpdpbusd on 512 bits: 64 per chain step. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vnni"))) static uint64_t int8_avx512(int64_t iters) {
    __m512i s = _mm512_set1_epi8(-5), u = _mm512_set1_epi8(3), x = _mm512_setzero_si512();
#define DECL(j) __m512i a##j = _mm512_set1_epi32(j);
#define STEP(j) a##j = _mm512_dpbusd_epi32(a##j, u, s);
#define SUM(j) x = _mm512_add_epi32(x, a##j);
    PEAK_EACH(DECL)
    for (int64_t i = 0; i < iters; i++) {
        PEAK_EACH(STEP)
        __asm__ volatile("" : "+v"(s));
    }
    PEAK_EACH(SUM)
#undef DECL
#undef STEP
#undef SUM
    /* vector adds wrap; _mm512_reduce_add_epi32 adds in C int, which overflows */
    const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1));
    return (uint64_t)_mm256_extract_epi64(h, 0);
}

/* PEAK_CHAINS independent 16-float FMA chains. */
__attribute__((target("avx2,fma,avx512f"))) static uint64_t fp32_avx512(int64_t iters) {
    __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-7f), x = _mm512_setzero_ps();
#define DECL(j) __m512 a##j = _mm512_set1_ps((float)j);
#define STEP(j) a##j = _mm512_fmadd_ps(a##j, a, b);
#define SUM(j) x = _mm512_add_ps(x, a##j);
    PEAK_EACH(DECL)
    for (int64_t i = 0; i < iters; i++) {
        PEAK_EACH(STEP)
        __asm__ volatile("" : "+v"(a), "+v"(b));
    }
    PEAK_EACH(SUM)
#undef DECL
#undef STEP
#undef SUM
    const float f = _mm512_reduce_add_ps(x);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* 10 independent 8-float FMA chains (enough to cover latency x ports). */
__attribute__((target("avx2,fma"))) static uint64_t fp32_fma(int64_t iters) {
    __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-7f);
    __m256 acc[10];
    for (int j = 0; j < 10; j++) acc[j] = _mm256_set1_ps((float)j);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < 10; j++) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
        __asm__ volatile("" : "+x"(a), "+x"(b));
    }
    __m256 x = acc[0];
    for (int j = 1; j < 10; j++) x = _mm256_add_ps(x, acc[j]);
    float f[8];
    _mm256_storeu_ps(f, x);
    uint32_t bits;
    memcpy(&bits, &f[0], sizeof bits);
    return bits;
}
#endif

static void *peak_thread(void *p) {
    peak_job *j = p;
    pthread_barrier_wait(j->bar);
    j->t0 = now_s();
#if HAVE_X86
    switch (j->kind) {
    case 0: j->sink = read_avx2(j->buf, j->len); break;
    case 1: j->sink = int8_avx2(j->iters); break;
    case 2: j->sink = int8_vnni(j->iters); break;
    case 4: j->sink = int8_avx512(j->iters); break;
    case 5: j->sink = fp32_avx512(j->iters); break;
    default: j->sink = fp32_fma(j->iters); break;
    }
#endif
    j->t1 = now_s();
    return NULL;
}

/* Runs kind on nt threads; returns the wall time from the first start to the last end. */
static double run_threads(int kind, int nt, const uint8_t *buf, size_t len, int64_t iters) {
    pthread_t th[256];
    peak_job jobs[256];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nt);
    size_t slice = (len / (size_t)nt) & ~(size_t)127;
    for (int i = 0; i < nt; i++) {
        jobs[i] = (peak_job){.kind = kind, .buf = buf + slice * (size_t)i, .len = slice, .iters = iters, .bar = &bar};
    }
    int started = 0;
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&th[i], NULL, peak_thread, &jobs[i]) != 0) break;
        started = i;
    }
    if (started != nt - 1) { /* cannot happen in practice; keep the barrier consistent */
        for (int i = 1; i <= started; i++) pthread_cancel(th[i]);
        pthread_barrier_destroy(&bar);
        return -1.0;
    }
    peak_thread(&jobs[0]);
    double t0 = jobs[0].t0, t1 = jobs[0].t1;
    for (int i = 1; i < nt; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].t0 < t0) t0 = jobs[i].t0;
        if (jobs[i].t1 > t1) t1 = jobs[i].t1;
    }
    pthread_barrier_destroy(&bar);
    return t1 - t0;
}

/* The best of 3 passes of kind on n_threads threads, in 1e9 operations per
 * second, ops_per_iter per loop iteration and thread. */
static double best_rate(int kind, int n_threads, int64_t iters, double ops_per_iter) {
    double best = 1e30;
    for (int pass = 0; pass < 3; pass++) {
        double t = run_threads(kind, n_threads, NULL, 0, iters);
        if (t > 0 && t < best) best = t;
    }
    return (double)iters * ops_per_iter * n_threads / best / 1e9;
}

int bench_peak(int n_threads, size_t mib, bench_peak_result *r) {
    memset(r, 0, sizeof *r);
    r->n_threads = n_threads;
#if !HAVE_X86
    (void)mib;
    return -1;
#else
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || n_threads < 1 || n_threads > 256) {
        return -1;
    }
    size_t len = mib << 20;
    uint8_t *buf = NULL;
    if (posix_memalign((void **)&buf, (size_t)2 << 20, len) != 0) {
        return -1;
    }
#ifdef MADV_HUGEPAGE
    /* In 2 MiB pages where the system gives them, as the backend's prepared
     * weights are (runtime.h llm_backend_prepare_weight): with 4 KiB pages
     * the TLB misses held this loop to about 80% of what a decode then read. */
    (void)madvise(buf, len, MADV_HUGEPAGE);
#endif
    for (size_t i = 0; i < len; i += 4096) memset(buf + i, (int)(i >> 12), 4096); /* fault every page in */
    size_t slice = (len / (size_t)n_threads) & ~(size_t)127;
    double best = 1e30;
    for (int pass = 0; pass < 5; pass++) {
        double t = run_threads(0, n_threads, buf, len, 0);
        if (t > 0 && t < best) best = t;
    }
    r->read_gbs = (double)(slice * (size_t)n_threads) / best / 1e9;
    free(buf);

    const int64_t iters = 20 * 1000 * 1000;
    /* per iteration and thread: chains x 32 (64) int8 multiply-adds */
    r->int8_avx2_gops = best_rate(1, n_threads, iters, 6 * 32.0);
    r->has_vnni = 0;
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
    r->has_vnni = __builtin_cpu_supports("avxvnni");
#endif
    if (r->has_vnni) r->int8_vnni_gops = best_rate(2, n_threads, iters, 10 * 32.0);
    r->has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vnni");
    if (r->has_avx512) {
        r->int8_avx512_gops = best_rate(4, n_threads, iters, PEAK_CHAINS * 64.0);
        r->fp32_avx512_gflops = best_rate(5, n_threads, iters, PEAK_CHAINS * 16 * 2.0);
    }
    /* per iteration and thread: 10 chains x 8 lanes x 2 flops */
    r->fp32_gflops = best_rate(3, n_threads, iters, 10 * 8 * 2.0);
    return 0;
#endif
}
