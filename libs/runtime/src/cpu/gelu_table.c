/*
 * cpu/gelu_table.c -- the F16 GELU table of the CPU's GEGLU (llama.cpp's
 * rule, ggml-cpu with GGML_GELU_FP16): for every F16 bit pattern h,
 * table[h] = fp16(gelu_tanh(f)) with f = fp32(h) and
 *     gelu_tanh(f) = 0.5 f (1 + tanh(sqrt(2/pi) f (1 + 0.044715 f^2)))
 * in F32, evaluated exactly as llama.cpp's build evaluates it: gcc compiles
 * ggml-cpu.c with FP contraction, which fuses 1 + (0.044715 f) f into one
 * FMA (scripts/golden/kernels/geglu_llamacpp.py compared all 65536 entries:
 * without the FMA one entry, f = -1.999, differs). NaN inputs give the quiet
 * NaN of their sign, as llama.cpp's table holds.
 *
 * Built once per process on first use (pthread_once), then read-only: 128
 * KiB that only models with a GEGLU pay for.
 */
#include <math.h>
#include <pthread.h>

#include "cpu/kernels.h"

static uint16_t g_table[1 << 16];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
    const float coef_a = 0.044715f;
    const float sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    for (uint32_t h = 0; h < (1u << 16); h++) {
        const float f = llm_fp16_to_fp32((uint16_t)h);
        if (isnan(f)) {
            g_table[h] = (uint16_t)((h & 0x8000u) | 0x7E00u);
            continue;
        }
        /* One rounding per operation, the inner sum fused (see above). */
        const float inner = fmaf(coef_a * f, f, 1.0f);
        const float t = tanhf((sqrt_2_over_pi * f) * inner);
        g_table[h] = llm_fp32_to_fp16((0.5f * f) * (1.0f + t));
    }
}

const uint16_t *llm__gelu_f16_table(void) {
    (void)pthread_once(&g_once, build);
    return g_table;
}
