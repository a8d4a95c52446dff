/*
 * llama/rope.h -- the rotary position embedding vocabulary: which pairs a
 * rotation turns (llm_rope_mode) and how positions are scaled
 * (llm_rope_scale_kind). Defined once, here: the runtime's llm_op_rope takes
 * them (llama/runtime.h), and a model descriptor's hyper-parameters report
 * them (llama/models.h), so a value read from a file goes to the op as is.
 *
 *     llm_rope_params r = {0};
 *     r.mode = hp->rope_type;          // LLM_ROPE_MODE_NORMAL for GGUF llama
 *     r.scaling = hp->rope_scaling;    // LLM_ROPE_SCALE_NONE, LINEAR, LLAMA3
 *
 * The numbers of llm_rope_mode are ggml's (NEOX is its mode bit 2). Includes
 * only standard C headers; C11 and C++.
 */
#ifndef LLAMA_ROPE_H
#define LLAMA_ROPE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum llm_rope_mode {
    LLM_ROPE_MODE_NORMAL = 0, /* rotate adjacent pairs (x[2i], x[2i+1]) (Llama GGUF) */
    LLM_ROPE_MODE_NEOX = 2    /* rotate halves (x[i], x[i + n_dims/2]) (NeoX, Qwen, HF) */
} llm_rope_mode;

typedef enum llm_rope_scale_kind {
    LLM_ROPE_SCALE_NONE = 0,
    LLM_ROPE_SCALE_LINEAR = 1, /* positions multiplied by freq_scale */
    LLM_ROPE_SCALE_YARN = 2,   /* YaRN: a file may say so; llm_op_rope rejects it
                                  (LLM_ERR_UNSUPPORTED), no kernel implements it */
    LLM_ROPE_SCALE_LLAMA3 = 3  /* per-frequency factors from the Llama 3.1 rule */
} llm_rope_scale_kind;

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ROPE_H */
