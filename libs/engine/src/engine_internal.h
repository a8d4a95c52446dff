/* Private to llama-engine: the model and session objects and the helpers
 * shared by the engine's source files. */
#ifndef LLM_ENGINE_INTERNAL_H
#define LLM_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "llama/engine.h"
#include "llama/kv.h"
#include "llama/models.h"
#include "llama/runtime.h"
#include "llama/sampling.h"
#include "llama/tokenizer.h"

#include "engine_fwd.h"
#include "engine_chat_bridge.h"

#include "engine_error.h"

/* Monotonic clock in milliseconds. */
double llm__now_ms(void);
/* Peak resident set size of the process in bytes (0 if unknown). */
uint64_t llm__peak_rss(void);

struct llm_model {
    char err[LLM__ERR_CAP];
    llm_model_desc *desc;
    llm_backend *be;
    llm_tokenizer *tok;
    llm_kv_pool *pool;
    llm__fwd *fwd;
    pthread_mutex_t lock; /* serializes fwd, pool and the scratch below */
    llm_model_info info;
    char *name, *arch, *chat_template, *weight_type, *bos_text, *eos_text;
    char backend_name[16];
    int32_t n_ctx, n_batch, block_size, kv_blocks;
    uint64_t kv_bytes;
    double load_ms;
    float *logits; /* [n_vocab] scratch used under `lock` */
    bool vocab_only; /* tokenizer and metadata only: desc, be, pool, fwd, logits are NULL */
};

struct llm_session {
    char err[LLM__ERR_CAP];
    llm_model *m;
    llm_kv_seq_id seq;       /* -1 until the first prefill */
    int32_t n_ctx;
    llm_token *ctx;          /* [cap_ctx] the tokens whose K/V the sequence holds */
    int32_t n_past, cap_ctx;
    float *logits;           /* [n_vocab] logits after the last computed token */
    int32_t *pos;            /* [n_batch] positions of the tokens of one forward */
    bool logits_ready;
    llm_token pending;       /* sampled but not yet computed */
    bool has_pending;
    llm_sampling_params sp;
    llm_sampler_chain *chain;
    char **stops;
    size_t n_stops;
    llm_stop_matcher *stop;
    llm_detokenizer *detok;  /* skips control tokens */
    bool stopped;            /* the current generation hit a stop string */
    atomic_int cancel;
    char *text;              /* pull API output buffer */
    size_t text_cap;
    /* telemetry */
    double t_prefill_start, t_first_token, ttft_ms, prefill_ms, decode_ms;
    int32_t prefill_tokens, reused_tokens, decode_tokens;
    int64_t total_prefill, total_reused, total_decode;
};

/* The sampling library's parameters for a session's llm_sampling_params
 * (engine_params.c: the one conversion, with compile-time field checks). */
llm_sampler_params llm__sampler_params_from(const llm_sampling_params *sp, int32_t n_vocab);

/* Loads the tokenizer and metadata of `path` into `m` (engine_vocab.c) and
 * fills m->info for a vocab-only model. The message is in llm_last_error(). */
llm_status llm__model_load_vocab(llm_model *m, const char *path);

/* Model helpers used by several files (model must be locked where noted). */
bool llm__model_is_eog(const llm_model *m, llm_token t);

#endif
