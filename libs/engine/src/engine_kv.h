/* Private to llama-engine: a KV sequence over the model's layer groups.
 *
 * A model whose sliding-window layers never read keys before their window
 * (Gemma 3: five of every six layers) keeps those layers' K/V in a group of
 * their own: a second, smaller libs/kv pool (m->pool_swa) and storage sized
 * for the window of each sequence, plus one pass. A sequence then has one id
 * in each pool; both always hold the same length and tokens, but the window
 * group releases the blocks that left the window of every later query
 * (llm_kv_seq_release_before; one block of slack is kept so that cutting
 * the last few tokens needs no recompute), so its blocks in use stay bounded
 * by ceil(window / block_size) + 2 per sequence between passes, and by
 * (window + n_batch - 2) / block_size + 4 during one (copy-on-write
 * included), while the main group keeps the whole sequence. Every engine file manages sequences through
 * these calls only; without a window group they are the plain pool calls.
 *
 * The prefix cache works per group: a cached prefix is reusable up to the
 * shorter of the two matches, and the window group's match needs its blocks
 * from position 0 (the chain hash), so a prefix whose early window blocks
 * were evicted is recomputed. A cut (truncate) that reaches into released
 * window blocks cannot keep the window layers: the sequence is dropped and
 * recomputed (from the prefix cache where it can).
 *
 * A hybrid recurrent model (Qwen3.5) also gives each sequence a state slot
 * (the recurrent layers' convolution and delta-rule states after its last
 * token). Such a state cannot be cut back: a cut to fewer tokens drops the
 * sequence (recomputed from position 0), and the prefix cache is not used
 * for it (llm__kvs_attach reuses nothing), since a state after a cached
 * prefix's last block is not kept. A fork copies the state. A failed or
 * cancelled pass leaves the state half-updated: llm__compute's cut to the
 * last whole pass then drops the sequence.
 *
 * All calls need the model lock. */
#ifndef LLM_ENGINE_KV_H
#define LLM_ENGINE_KV_H

#include <stdbool.h>
#include <stdint.h>

#include "llama/kv.h"
#include "llama/status.h"

#include "engine_fwd.h"

typedef struct llm_model llm_model;

/* One sequence: its id in the main pool and in the window pool (-1: none),
 * and a recurrent model's state slot. */
typedef struct llm__kvseq {
    llm_kv_seq_id id;  /* main group; -1 while the sequence does not exist */
    llm_kv_seq_id swa; /* window group, or -1 (no window group, or no sequence) */
    int32_t slot;      /* recurrent models: the sequence's state slot (1..); 0: none */
} llm__kvseq;

#define LLM__KVSEQ_NONE ((llm__kvseq){-1, -1, 0})

static inline bool llm__kvs_live(const llm__kvseq *s) { return s->id >= 0; }

/* Creates an empty sequence in every group. *s is NONE on failure. The
 * message goes to `err` (LLM__ERR_CAP bytes, may be NULL). */
llm_status llm__kvs_create(llm_model *m, llm__kvseq *s, char *err);
/* Frees the sequence in every group (full committed blocks stay cached) and
 * sets *s to NONE. A NONE sequence is harmless. */
void llm__kvs_free(llm_model *m, llm__kvseq *s);
/* *out shares every block of src (copy-on-write later). */
llm_status llm__kvs_fork(llm_model *m, const llm__kvseq *src, llm__kvseq *out, char *err);
/* Tokens in the sequence (-1 if it does not exist). */
int32_t llm__kvs_len(const llm_model *m, const llm__kvseq *s);
/* Cuts the sequence to at most n tokens: to n when the window group still
 * holds every key the window of a query at position n reads, else the
 * sequence is freed (*s = NONE). Returns the tokens kept (n or 0). */
int32_t llm__kvs_keep(llm_model *m, llm__kvseq *s, int32_t n);
/* For an empty sequence: takes the cached blocks of tokens[0..n) that every
 * group holds; *n_cached gets the tokens covered. */
void llm__kvs_attach(llm_model *m, llm__kvseq *s, const int32_t *tokens, int32_t n, int32_t *n_cached);
/* LLM_OK if appending n tokens fits in every group now, else
 * LLM_ERR_EXHAUSTED with the message in err (admission control). */
llm_status llm__kvs_admit(const llm_model *m, const llm__kvseq *s, int32_t n, char *err);
/* Appends n tokens (ids recorded for the prefix cache unless tokens is NULL)
 * to every group and performs the block copies the pools ask for. On
 * failure nothing changed. LLM_ERR_EXHAUSTED when a group's pool is full
 * (message in err), LLM_ERR_NO_MEMORY, backend errors. */
llm_status llm__kvs_append(llm_model *m, const llm__kvseq *s, const int32_t *tokens, int32_t n, char *err);
/* Fills fs's block tables (valid until the sequence's next change). */
void llm__kvs_tables(const llm_model *m, const llm__kvseq *s, llm__fwd_seq *fs);
/* The K/V of positions [0, n_written) is in storage: commits full blocks to
 * the prefix index (when the tokens were recorded) and releases the window
 * group's blocks that no query from position n_written on reads. */
void llm__kvs_commit(llm_model *m, const llm__kvseq *s, int32_t n_written);

/* Blocks in use and in total of each group (the window group's 0 if none). */
typedef struct llm__kvs_usage {
    int32_t used, cached, total;
    int32_t swa_used, swa_cached, swa_total;
    uint64_t lookups, hit_blocks, miss_blocks;
} llm__kvs_usage;
void llm__kvs_usage_get(const llm_model *m, llm__kvs_usage *u);

#endif
