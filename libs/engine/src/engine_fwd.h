/* Private to llama-engine: the forward-pass adapter.
 *
 * The engine talks to the model's forward pass only through this interface,
 * so that the sessions, KV bookkeeping and embeddings do not depend on how
 * the architecture code is organised. It owns the KV storage (one runtime
 * buffer sized from the pool) and the activation arena. */
#ifndef LLM_ENGINE_FWD_H
#define LLM_ENGINE_FWD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/models.h"
#include "llama/runtime.h"

typedef struct llm__fwd llm__fwd;

typedef struct llm__fwd_params {
    int32_t n_ctx;       /* longest sequence */
    int32_t n_batch;     /* most tokens per run */
    int32_t n_blocks;    /* KV blocks in storage */
    int32_t block_size;  /* tokens per block */
    llm_dtype type_k;    /* K cache type (F16, F32, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) */
    llm_dtype type_v;    /* V cache type (the same choices) */
    int32_t n_blocks_swa; /* > 0: the window layers' own storage of that many blocks
                             (a second layer group with its own block tables); 0: none */
    int32_t n_state_slots; /* recurrent models: per-sequence state slots (1..n); 0: none */
} llm__fwd_params;

/* K + V bytes of one token in the main group's layers and in the window
 * group's (0 when p has no window group); both 0 on error. */
void llm__fwd_token_bytes(const llm_model_desc *d, const llm__fwd_params *p, size_t *main_bytes,
                          size_t *swa_bytes);

/* The sliding window of the model's window layers in tokens, or 0 when no
 * layer has one (then there is no window group). */
int32_t llm__fwd_window(const llm_model_desc *d);

/* Bytes the adapter will allocate for KV storage (both layer groups) and
 * for its arena, for a descriptor and params (used by the memory plan and by
 * load), as the net reports them (llm_net_plan). Errors: llm_net_last_error(). */
llm_status llm__fwd_sizes(const llm_model_desc *d, const llm__fwd_params *p,
                          uint64_t *kv_bytes, uint64_t *scratch_bytes);

/* Binds descriptor d (must outlive the adapter) to backend be and
 * allocates KV storage and arena. Message via llm__fail-compatible text in
 * *err (LLM__ERR_CAP bytes) on failure. */
llm_status llm__fwd_create(const llm_model_desc *d, llm_backend *be, const llm__fwd_params *p,
                           llm__fwd **out, char *err, size_t err_cap);
void llm__fwd_free(llm__fwd *f);

/* What to return from a run. */
typedef enum llm__fwd_out {
    LLM__FWD_LOGITS_LAST = 0, /* out: [n_vocab] logits of the last token */
    LLM__FWD_HIDDEN_ALL = 1,  /* out: [n][n_embd] final-norm hidden states */
    LLM__FWD_LOGITS_ALL = 2   /* out: [n][n_vocab] logits of every token */
} llm__fwd_out;

/* One sequence of a run: n consecutive tokens of the run, and its block
 * tables (the window group's when the storage has one, else NULL). */
typedef struct llm__fwd_seq {
    int32_t n;
    const int32_t *block_table; /* [n_table] */
    int32_t n_table;
    const int32_t *block_table_swa; /* [n_table_swa] */
    int32_t n_table_swa;
    int32_t state_slot; /* recurrent models: the sequence's state slot (1..); 0 otherwise */
} llm__fwd_seq;

/* Runs tokens[0..n) at positions[0..n) of one sequence whose K/V blocks are
 * in seq's tables (seq->n is ignored); earlier positions must already be in the cache.
 * Writes the new K/V, then fills `out` as `what` says. Checks *cancel (may
 * be NULL) between layers and returns LLM_CANCELLED if it is set (the K/V
 * of this run is then unspecified: the caller drops those positions).
 * Errors: message in err. */
llm_status llm__fwd_run(llm__fwd *f, const int32_t *tokens, const int32_t *positions, int32_t n,
                        const llm__fwd_seq *seq, llm__fwd_out what,
                        float *out, const atomic_int *cancel, char *err, size_t err_cap);

/* True if the model is an encoder (bert): no KV storage; run it with
 * llm__fwd_encode only. */
bool llm__fwd_is_encoder(const llm__fwd *f);

/* Runs an encoder over n_seqs whole texts packed back to back (seq_lens[s]
 * tokens each, positions 0..len-1 each; n <= n_batch in total), each text
 * attending to itself only, and writes hidden [n][n_embd] (the last layer's
 * output). Errors: message in err. */
llm_status llm__fwd_encode(llm__fwd *f, const int32_t *tokens, const int32_t *positions, int32_t n,
                           const int32_t *seq_lens, int32_t n_seqs, float *hidden, const atomic_int *cancel,
                           char *err, size_t err_cap);

/* Runs several sequences in one forward pass (the scheduler's step):
 * tokens/positions [n] hold seqs[0]'s tokens, then seqs[1]'s, ...; `logits`
 * receives [n_seqs][n_vocab], the last token's row of each sequence. No
 * cancel: a step is never interrupted. Errors: message in err. */
llm_status llm__fwd_run_seqs(llm__fwd *f, const int32_t *tokens, const int32_t *positions, int32_t n,
                             const llm__fwd_seq *seqs, int32_t n_seqs, float *logits, char *err,
                             size_t err_cap);

/* Copies recurrent state slot src into dst (a fork). Errors: message in err. */
llm_status llm__fwd_state_copy(llm__fwd *f, int32_t src, int32_t dst, char *err, size_t err_cap);

/* Copies token slots [0, n_tokens) of physical block src to dst in the K
 * and V of every layer of one group (swa: the window group, else the main
 * one): the copy-on-write of a shared partial block, on the backend. */
llm_status llm__fwd_copy_block(llm__fwd *f, bool swa, int32_t src, int32_t dst, int32_t n_tokens,
                               char *err, size_t err_cap);

#endif
