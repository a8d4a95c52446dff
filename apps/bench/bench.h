/* llm-bench's parts: peak.c measures the machine's limits for --peak. */
#ifndef LLM_APP_BENCH_H
#define LLM_APP_BENCH_H

#include <stddef.h>

typedef struct bench_peak_result {
    int n_threads;
    double read_gbs;       /* memory read bandwidth, GB/s (1e9 bytes) */
    double int8_avx2_gops; /* int8 multiply-adds / s (vpmaddubsw + vpmaddwd), 1e9 */
    double int8_vnni_gops; /* the same by AVX-VNNI vpdpbusd, 0 without it */
    int has_vnni;
    double int8_avx512_gops;   /* the same by AVX-512 VNNI vpdpbusd on 512 bits, 0 without it */
    double fp32_gflops;        /* fp32 flops / s by 8-float FMAs (2 per lane) */
    double fp32_avx512_gflops; /* the same by 16-float FMAs, 0 without AVX-512 */
    int has_avx512;            /* AVX-512 F, BW and VNNI */
} bench_peak_result;

/* Measures on n_threads threads, reading a buffer of `mib` MiB. 0, or -1 when
 * the CPU lacks AVX2+FMA (nothing measured) or memory is short. */
int bench_peak(int n_threads, size_t mib, bench_peak_result *r);

#endif
