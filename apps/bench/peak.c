/*
 * peak.c -- this machine's limits, for llm-bench --peak: memory read
 * bandwidth (a buffer far larger than the caches, read by every thread) and
 * the arithmetic peaks of the instructions our kernels use, measured by
 * register-only loops (no memory traffic): int8 multiply-adds by AVX2
 * vpmaddubsw + vpmaddwd (the quantized dots) and by AVX-VNNI vpdpbusd when
 * the CPU has it, and fp32 FMAs on 8-float vectors.
 *
 * Each figure is the best of several passes: the machine may be shared, and
 * the best pass is the one least disturbed. The loops are built for the
 * instruction sets they name (target attributes) and run only after the CPU
 * reported them.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int kind;              /* 0 read, 1 int8 avx2, 2 int8 vnni, 3 fp32 fma */
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

/* 8 independent chains of vpmaddubsw + vpmaddwd + vpaddd: 32 int8
 * multiply-adds per chain step (the inner step of a Q4/Q8 block dot). */
__attribute__((target("avx2"))) static uint64_t int8_avx2(int64_t iters) {
    /* a distinct multiplicand per chain, so no product can be shared or hoisted */
    __m256i s = _mm256_set1_epi8(-5), one = _mm256_set1_epi16(1);
    __m256i acc[8], u[8];
    for (int j = 0; j < 8; j++) acc[j] = _mm256_set1_epi32(j), u[j] = _mm256_set1_epi8((char)(3 + j));
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < 8; j++) {
            acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(u[j], s), one));
            __asm__ volatile("" : "+x"(u[j]));
        }
    }
    __m256i x = acc[0];
    for (int j = 1; j < 8; j++) x = _mm256_add_epi32(x, acc[j]);
    return (uint64_t)_mm256_extract_epi64(x, 0);
}

__attribute__((target("avx2,avxvnni"))) static uint64_t int8_vnni(int64_t iters) {
    __m256i s = _mm256_set1_epi8(-5);
    __m256i acc[8], u[8];
    for (int j = 0; j < 8; j++) acc[j] = _mm256_set1_epi32(j), u[j] = _mm256_set1_epi8((char)(3 + j));
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < 8; j++) {
            acc[j] = _mm256_dpbusd_avx_epi32(acc[j], u[j], s);
            __asm__ volatile("" : "+x"(u[j]));
        }
    }
    __m256i x = acc[0];
    for (int j = 1; j < 8; j++) x = _mm256_add_epi32(x, acc[j]);
    return (uint64_t)_mm256_extract_epi64(x, 0);
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
    if (posix_memalign((void **)&buf, 64, len) != 0) {
        return -1;
    }
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
    best = 1e30;
    for (int pass = 0; pass < 3; pass++) {
        double t = run_threads(1, n_threads, NULL, 0, iters);
        if (t > 0 && t < best) best = t;
    }
    /* per iteration and thread: 8 chains x 32 int8 multiply-adds */
    r->int8_avx2_gops = (double)iters * 8 * 32 * n_threads / best / 1e9;
    r->has_vnni = 0;
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
    r->has_vnni = __builtin_cpu_supports("avxvnni");
#endif
    if (r->has_vnni) {
        best = 1e30;
        for (int pass = 0; pass < 3; pass++) {
            double t = run_threads(2, n_threads, NULL, 0, iters);
            if (t > 0 && t < best) best = t;
        }
        r->int8_vnni_gops = (double)iters * 8 * 32 * n_threads / best / 1e9;
    }
    best = 1e30;
    for (int pass = 0; pass < 3; pass++) {
        double t = run_threads(3, n_threads, NULL, 0, iters);
        if (t > 0 && t < best) best = t;
    }
    /* per iteration and thread: 10 chains x 8 lanes x 2 flops */
    r->fp32_gflops = (double)iters * 10 * 8 * 2 * n_threads / best / 1e9;
    return 0;
#endif
}
