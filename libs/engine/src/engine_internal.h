/* Private to llama-engine: the model and session objects and the helpers
 * shared by the engine's source files. */
#ifndef LLM_ENGINE_INTERNAL_H
#define LLM_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "llama/engine.h"
#include "llama/engine_embed.h"
#include "llama/kv.h"
#include "llama/models.h"
#include "llama/runtime.h"
#include "llama/sampling.h"
#include "llama/tokenizer.h"

#include "engine_fwd.h"
#include "engine_kv.h"
#include "engine_chat_bridge.h"
#include "engine_constraint.h"

#include "engine_error.h"

/* Monotonic clock in milliseconds. */
double llm__now_ms(void);
/* Peak resident set size of the process in bytes (0 if unknown). */
uint64_t llm__peak_rss(void);

/* The model's embedding pipeline (llm_embed_info) and llm_embed's
 * counters (under the model lock). */
typedef struct llm__embed_cfg {
    llm_embed_info info;
    char unsupported[96];     /* non-empty: the stated pooling we lack (e.g. "max") */
    int32_t n_prefix, n_suffix; /* special tokens the encoding adds before / after a text */
    llm_embed_stats stats;
} llm__embed_cfg;

struct llm_model {
    char err[LLM__ERR_CAP];
    llm_model_desc *desc;
    llm_backend *be;
    llm_tokenizer *tok;
    llm_kv_pool *pool;     /* the main layer group: every layer without a window group */
    llm_kv_pool *pool_swa; /* the sliding-window layers' own group, or NULL (engine_kv.h) */
    llm__fwd *fwd;
    pthread_mutex_t lock; /* serializes fwd, pools and the scratch below */
    llm_model_info info;
    char *name, *arch, *chat_template, *weight_type, *bos_text, *eos_text;
    char backend_name[16];
    char kernels_name[64]; /* llm_backend_kernels of be, or "" */
    int32_t n_ctx, n_batch, block_size, kv_blocks;
    int32_t n_pass; /* most tokens per forward pass: n_batch, or for an encoder max(n_batch, 1024) (engine_model.c) */
    int32_t n_swa, kv_blocks_swa; /* window of the window group and its pool's blocks (0: none) */
    uint64_t kv_bytes;
    double load_ms;
    int32_t *pos; /* [n_batch] positions of one forward pass, used under `lock` */
    bool vocab_only; /* tokenizer and metadata only: desc, be, pool, fwd, pos are NULL */
    llm__embed_cfg embed; /* the model's embedding pipeline (engine_embed.c) */
    /* Recurrent models: the free state slots (engine_kv.c), a stack of
     * n_state_free of the n_state_slots slot numbers 1..n_state_slots. */
    int32_t *state_free;
    int32_t n_state_free, n_state_slots;
    llm__model_grammar grammar; /* constraints: vocabulary and compiled grammars (engine_constraint.c) */
};

/* ---- the batch loop (engine_compute.c) ----------------------------------- */

/* One KV sequence's next tokens for llm__compute(). */
typedef struct llm__job {
    llm__kvseq seq;           /* the sequence; its length is the first new position */
    const llm_token *tokens;  /* [n] tokens to append and compute */
    int32_t n;
    bool index;               /* offer full blocks to the prefix index (sessions yes, embeddings no) */
    llm__fwd_out what;        /* LOGITS_LAST, LOGITS_ALL or HIDDEN_ALL */
    float *rows;              /* ALL modes: [n - rows_from][width] rows of tokens rows_from.. */
    int32_t rows_from;        /* ALL modes: first token whose row is wanted (0..n) */
    float *last;              /* [width] the last token's row, or NULL (ALL modes);
                                 LOGITS_LAST: required, [n_vocab] */
    const atomic_int *cancel; /* polled before every op and between passes; may be NULL */
    int32_t done;             /* out: tokens computed and committed to the sequence */
} llm__job;

/* Runs `job` in passes of at most n_batch tokens; the model lock is held by
 * the caller. On failure the sequence holds the tokens of the passes that
 * completed (job->done of them); rows of those passes are valid. The
 * message goes to this thread and to `err` (a handle's LLM__ERR_CAP buffer,
 * may be NULL). Returns LLM_OK, LLM_CANCELLED (the flag is left set for the
 * caller to consume), LLM_ERR_EXHAUSTED, LLM_ERR_NO_MEMORY, backend errors. */
llm_status llm__compute(llm_model *m, llm__job *job, char *err);

/* ---- sessions ------------------------------------------------------------ */

/* The conversation: every token of it, and how many are in the KV cache.
 * Every entry point edits `tokens` and then computes from n_cached on. A
 * sampled token shown to the user but not yet computed is simply the last
 * token (n == n_cached + 1); an end-of-generation token never enters. */
typedef struct llm__context {
    llm_token *tokens;       /* [cap] */
    int32_t n, cap;          /* tokens held */
    int32_t n_cached;        /* tokens[0..n_cached) have K/V in `seq` (== its length) */
    llm__kvseq seq;          /* NONE while nothing is cached */
} llm__context;

/* Turning logits into text: sampler, stop strings, detokenizer. */
typedef struct llm__generation {
    llm_sampling_params sp;
    llm_sampler_chain *chain; /* [constraint mask ->] bias -> the usual chain of sp */
    llm_logit_bias *bias;     /* [n_bias] (scheduler requests) */
    size_t n_bias;
    llm__constraint *con;     /* NULL: unconstrained */
    char **stops;
    size_t n_stops;
    llm_stop_matcher *stop;
    llm_detokenizer *detok;  /* skips control tokens */
    bool stopped;            /* the current generation hit a stop string or EOG */
    char *text;              /* pull API output buffer */
    size_t text_cap;
} llm__generation;

typedef struct llm__session_stats {
    double t_prefill_start, ttft_ms, prefill_ms, decode_ms;
    int32_t prefill_tokens, reused_tokens, decode_tokens;
    int64_t total_prefill, total_reused, total_decode;
} llm__session_stats;

struct llm_session {
    char err[LLM__ERR_CAP];
    llm_model *m;
    int32_t n_ctx;
    llm__context ctx;
    float *logits;           /* [n_vocab] after token ctx.n_cached - 1 ... */
    bool logits_ready;       /* ... when ctx.n_cached == ctx.n and they are computed */
    llm__generation gen;
    atomic_int cancel;
    llm__session_stats stats;
};

/* ---- a session's context and its compute step (engine_context.c) -------- */

/* Makes room for n tokens in the context. */
llm_status llm__ctx_reserve(llm_session *s, int32_t n);
/* Computes the context from ctx.n_cached to ctx.n: the one compute step of
 * every entry point. With `all`, rows of tokens from index `rows_from` on go
 * there ([ctx.n - rows_from][n_vocab]) and the prefix cache is not used
 * (every row is wanted). A prefill (decoding false) restarts the prefill
 * telemetry, and on failure cuts the context back to what was computed; a
 * decode step's pending token stays pending on failure. */
llm_status llm__session_compute(llm_session *s, float *all, int32_t rows_from, bool decoding);
/* Rebuilds the sampler chain from gen.sp, gen.bias and gen.con (the RNG
 * restarts from the seed) (engine_session.c). On failure the old chain stays. */
llm_status llm__session_build_chain(llm_session *s);
/* Resets the stop matcher and the detokenizer for a new answer. */
void llm__session_start_generation(llm_session *s);

/* The sampling library's parameters for a session's llm_sampling_params
 * (engine_params.c: the one conversion, with compile-time field checks). */
llm_sampler_params llm__sampler_params_from(const llm_sampling_params *sp, int32_t n_vocab);

/* Loads the tokenizer and metadata of `path` into `m` (engine_vocab.c) and
 * fills m->info for a vocab-only model. The message is in llm_last_error(). */
llm_status llm__model_load_vocab(llm_model *m, const char *path);

/* Reads the model's embedding pipeline into m->embed (engine_embed.c);
 * called by llm_load_model once the tokenizer and forward exist. */
llm_status llm__embed_config_load(llm_model *m, const char *path);

/* Model helpers used by several files (model must be locked where noted). */
bool llm__model_is_eog(const llm_model *m, llm_token t);

#endif
