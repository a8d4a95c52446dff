/*
 * cpu/cpu_features.c -- what the running CPU (and this build) offers the
 * kernels, checked in one place. The backend caps the result at the level
 * llm_kernels or LLM_CPU_KERNELS asks for (llm__cpu_features_upto) and hands
 * the flags to the registry fill (llm__cpu_kernels_x86), which picks its
 * entries from them alone.
 */
#include "cpu/kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#endif

#if (defined(__x86_64__) || defined(__i386__)) && defined(LLM_CPU_AVX2_BUILT) && defined(__GNUC__)
static unsigned detect(void) {
    unsigned f = 0, a = 0, b = 0, c = 0, d = 0;
    __builtin_cpu_init();
    /* F16C through CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports
     * does not know "f16c". AVX2 implies OS support for the YMM state. */
    const int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c)) return 0;
    f |= LLM__CPU_AVX2;
    /* AVX-VNNI (VEX vpdpbusd / vpdpwssd on ymm): CPUID leaf 7 sub-leaf 1,
     * EAX bit 4. */
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4))) f |= LLM__CPU_AVX_VNNI;
    /* libgcc's AVX-512 checks include XGETBV (the OS saves the 512-bit state). */
    if (__builtin_cpu_supports("avx512f")) f |= LLM__CPU_AVX512F;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) f |= LLM__CPU_AVX512DQ;
    /* Every CPU with AVX-512 VNNI has F, BW, DQ and VL too; checked anyway. */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512vnni")) {
        f |= LLM__CPU_AVX512_VNNI;
    }
    if (__builtin_cpu_supports("gfni")) f |= LLM__CPU_GFNI;
    return f;
}
#else
static unsigned detect(void) { return 0; }
#endif

unsigned llm__cpu_features(void) {
    /* CPUID is cheap, but the answer never changes: asked once per backend
     * and per test, so it is not cached (no shared state to guard). */
    return detect();
}

unsigned llm__cpu_features_upto(int level) {
    const unsigned f = llm__cpu_features();
    if (level >= LLM__ISA_ALL) return f;
    if (level >= LLM__ISA_AVX_VNNI) return f & (LLM__CPU_AVX2 | LLM__CPU_AVX_VNNI);
    if (level >= LLM__ISA_AVX2) return f & LLM__CPU_AVX2;
    return 0;
}

int llm__cpu_has_avx2(void) { return (llm__cpu_features() & LLM__CPU_AVX2) != 0; }
