/* rope_llama3.h -- private to llama-runtime: the Llama 3.1 RoPE frequency
 * rule, shared by the CPU backend (cpu/ops_cpu.c) and the CUDA backend's host
 * code (cuda/rope_cuda.cu), so both divide the angles by the same floats.
 *
 * Long wavelengths are slowed by `factor`, short ones kept, with a smooth
 * ramp between (as in Meta's reference code). Plain C, valid as C++. */
#ifndef LLM_RUNTIME_ROPE_LLAMA3_H
#define LLM_RUNTIME_ROPE_LLAMA3_H

#include <math.h>

#include "llama/runtime.h"

/* The divisor of frequency i (0 <= i < n_dims/2) under p's LLAMA3 fields. */
static inline float llm__rope_llama3_factor(const llm_rope_params *p, int i) {
    const float pi = 3.14159265358979323846f;
    float freq = powf(p->freq_base, -2.0f * (float)i / (float)p->n_dims);
    float wavelen = 2.0f * pi / freq;
    float low_wl = (float)p->llama3_orig_ctx / p->llama3_low_freq_factor;
    float high_wl = (float)p->llama3_orig_ctx / p->llama3_high_freq_factor;
    if (wavelen < high_wl) {
        return 1.0f;
    }
    if (wavelen > low_wl) {
        return p->llama3_factor;
    }
    float smooth = ((float)p->llama3_orig_ctx / wavelen - p->llama3_low_freq_factor) /
                   (p->llama3_high_freq_factor - p->llama3_low_freq_factor);
    return 1.0f / ((1.0f - smooth) / p->llama3_factor + smooth);
}

#endif
