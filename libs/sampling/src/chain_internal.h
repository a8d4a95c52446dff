/*
 * chain_internal.h -- the chain and sampler structs, shared by chain.c
 * (construction, history) and apply.c (the sample() driver).
 */
#ifndef LLM_CHAIN_INTERNAL_H
#define LLM_CHAIN_INTERNAL_H

#include "sampling_internal.h"

#define LLM__PATCH_CAP 1024 /* beyond this many patched tokens, copy instead */

typedef enum {
    K_BIAS,
    K_PENALTIES,
    K_TOP_K,
    K_TOP_P,
    K_MIN_P,
    K_TYPICAL,
    K_TEMPERATURE,
    K_MASK,
    K_GREEDY,
    K_DIST
} sampler_kind;

typedef struct sampler {
    sampler_kind kind;
    float f;         /* p, t, or repeat penalty */
    float freq, pres;
    int32_t i;       /* k or window */
    size_t min_keep;
    /* bias: sorted by token, duplicates merged */
    llm_logit_bias *bias; /* [n_bias] */
    size_t n_bias;
    /* penalties: ring of the last `i` accepted tokens and their counts */
    int32_t *ring;   /* [window] */
    int32_t *count;  /* [n_vocab_max], occurrences in ring */
    size_t ring_len, ring_head;
    llm_sampler_mask_fn fn;
    void *user;
} sampler;

struct llm_sampler_chain {
    int32_t n_vocab_max;
    uint64_t seed;
    uint64_t rng_n; /* next stream word */

    sampler *s;     /* [n_s] */
    size_t n_s, cap_s;

    float *work;    /* [n_vocab_max] private dense copy */
    int32_t *iota;  /* [n_vocab_max] ids[i] == i, for mask hooks */
    int32_t *cid[2];/* [n_vocab_max] sparse ping-pong ids */
    float *cx[2];   /* [n_vocab_max] sparse ping-pong logits */
    llm__scratch scratch;

    /* Dense patches: logit changes of a few tokens (penalties, bias) kept
     * beside the caller's array instead of copying it (see apply.c). */
    int32_t *pslot; /* [n_vocab_max] patch index of a token, or -1 */
    int32_t *pid;   /* [LLM__PATCH_CAP] */
    float *pval;    /* [LLM__PATCH_CAP] */
    size_t np;

    /* per-sample state */
    const float *dense; /* [n] caller's logits or work */
    bool dense_mode;
    int cur;            /* which ping-pong buffer holds the sparse list */
    size_t n;           /* candidate count */

    /* last selector's view, for llm_sampler_chain_last_candidates */
    size_t last_n;
    bool last_dense, last_dense_private;
};

#endif
