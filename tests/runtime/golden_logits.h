/*
 * golden_logits.h -- reader for data/logits_golden.bin, written by
 * scripts/golden/logits/make_logits_golden.py from llama.cpp (llama-cpp-python).
 */
#ifndef LLM_TEST_GOLDEN_LOGITS_H
#define LLM_TEST_GOLDEN_LOGITS_H

#include <stdint.h>

typedef struct golden_prompt {
    char name[64];
    int32_t n_tokens;
    int32_t *tokens;     /* [n_tokens] llama.cpp's tokenization */
    int32_t *argmax;     /* [n_tokens] */
    float *gap;          /* [n_tokens] top1 - top2 logit */
    int32_t *top_ids;    /* [n_tokens][topk] */
    float *top_logits;   /* [n_tokens][topk] */
    int32_t n_full;
    int32_t *full_pos;   /* [n_full] */
    float *full_logits;  /* [n_full][n_vocab] */
    int32_t n_cont;
    int32_t *cont;       /* [n_cont] greedy continuation */
    float *cont_gap;     /* [n_cont] top1 - top2 at each step */
} golden_prompt;

typedef struct golden_set {
    int32_t n_prompts, n_vocab, topk, n_cont;
    golden_prompt *prompts;
} golden_set;

/* Loads path; returns 0 on success, -1 on a read/format error. */
int golden_load(const char *path, golden_set *g);
void golden_free(golden_set *g);

#endif
