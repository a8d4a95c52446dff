/*
 * llama/arch.h -- runnable models: an architecture's forward pass, written
 * only against the runtime's ops, so it runs unchanged on any backend.
 *
 * From a model descriptor (llama/models.h) and a backend (llama/runtime.h),
 * llm_net_create builds a runnable network: weights are wrapped from the file
 * mapping (no copy on the CPU backend), and an activation arena sized for
 * `max_batch` tokens is allocated once, so forward calls do not allocate.
 * K/V storage is separate (llm_net_kv_create) and paged: the caller (the
 * engine, with libs/kv's bookkeeping) passes each sequence's int32 block table.
 *
 *     llm_model_desc *desc;  llm_model_desc_from_gguf(path, &desc);
 *     llm_backend *be;       llm_backend_create("cpu", NULL, &be);
 *     llm_net *net;          llm_net_create(desc, be, NULL, &net);
 *     llm_net_kv *kv;        llm_net_kv_create(net, 64, 16, &kv);   // 64 blocks of 16 tokens
 *     int32_t table[4] = {0, 1, 2, 3};                               // logical -> physical
 *     llm_net_seq seq = {n, table, 4};
 *     llm_net_batch b = llm_net_batch_default();
 *     b.tokens = ids; b.positions = pos; b.n_tokens = n; b.seqs = &seq; b.n_seqs = 1;
 *     b.logits = out; b.logits_mode = LLM_LOGITS_LAST;              // out: [1][n_vocab]
 *     llm_status st = llm_net_forward(net, kv, &b);
 *     ... llm_net_kv_free(kv); llm_net_free(net); llm_backend_free(be); llm_model_desc_free(desc);
 *
 * Supported architectures: llm_model_arch_list() ("llama", "qwen2", "qwen3",
 * "gemma3", "phi3", and the encoders "bert" and "nomic-bert": see llm_net_is_encoder). Errors keep a
 * thread-local message, readable with
 * llm_net_last_error(); a failing runtime op's own message is copied into it.
 */
#ifndef LLAMA_ARCH_H
#define LLAMA_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "llama/models.h"
#include "llama/runtime.h"
#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the last error raised by an llm_net_* call on this thread ("" if none). */
const char *llm_net_last_error(void);

typedef struct llm_net llm_net;       /* a runnable model on one backend */
typedef struct llm_net_kv llm_net_kv; /* paged K/V storage for every layer of one llm_net */

typedef struct llm_net_params {
    int32_t max_batch;  /* most tokens one forward may take (default 512) */
    llm_dtype type_k;   /* K cache element type (llama.cpp's type_k): LLM_DTYPE_F16
                           (default), F32, BF16, Q8_0, Q4_0, Q4_1, Q5_0 or Q5_1. A
                           quantized type needs head_dim to be a multiple of its 32-element
                           block (llm_net_plan and llm_net_create fail otherwise) */
    llm_dtype type_v;   /* V cache element type (type_v), the same choices; default F16 */
    int32_t n_ctx_seq;  /* the context size of one sequence (the engine passes its
                           per-session n_ctx); 0 (default) = unknown, read as within the
                           model's original context. Only architectures whose RoPE depends
                           on it read it: phi3 with longrope takes rope_factors_long when
                           n_ctx_seq rounded up to a multiple of 256 exceeds
                           rope.scaling.original_context_length, else rope_factors_short,
                           as llama.cpp does for a context of n_ctx_seq tokens (it pads
                           n_ctx to 256) */
    int32_t ffn_rows;   /* the gated feed-forward block of the dense decoders
                           (llama, qwen2, qwen3, gemma3, phi3, qwen35; not
                           qwen3moe's experts) runs on at most this many of a
                           batch's tokens at a time (the last run may take up to 7
                           more), so the arena holds its two n_ff-wide intermediates
                           for that many rows rather than max_batch: 0 (default) =
                           128; rounded down to a multiple of 4, at least 8. The
                           runs take the same kernels, in the same groups of rows, as
                           the whole batch, so the results are the same bits */
} llm_net_params;

/* Defaults: max_batch 512, F16 K and V, n_ctx_seq 0, ffn_rows 0 (128). */
llm_net_params llm_net_default_params(void);

/* Non-zero if an architecture tag has a forward here ("llama"). Every
 * architecture a descriptor can be built for has one (one registry). */
int llm_net_supports_arch(const char *arch);
/* Non-zero if an architecture tag names an encoder ("bert", "nomic-bert"):
 * what llm_net_is_encoder will say of a net built for it. */
int llm_net_arch_is_encoder(const char *arch);

/* What llm_net_create and llm_net_kv_create will allocate for a descriptor
 * and params, computed by the same code that carves the arena. */
typedef struct llm_net_memory {
    size_t arena_bytes;              /* backend activation arena for max_batch tokens */
    size_t host_bytes;               /* host scratch of the net */
    size_t kv_bytes_per_token;       /* K + V of one token over all layers that hold K/V (not a hybrid
                                        net's recurrent layers), in type_k / type_v */
    size_t kv_bytes_per_token_layer; /* the same for one layer */
    size_t kv_bytes_per_token_swa;   /* K + V of one token over the sliding-window layers
                                        only (0 without window layers) */
    int32_t n_swa;                   /* the window in tokens of those layers (0: none) */
    int32_t n_layer_swa;             /* how many layers use the window */
    size_t state_bytes;              /* recurrent state of one sequence (llm_net_state_bytes;
                                        0 for nets without recurrent layers) */
} llm_net_memory;

/* Fills *out for desc and params (NULL: defaults). A K/V storage of
 * n_blocks blocks of block_size tokens takes kv_bytes_per_token * block_size
 * * n_blocks bytes; one with a separate window group (llm_net_kv_create_swa)
 * takes (kv_bytes_per_token - kv_bytes_per_token_swa) * block_size * n_blocks
 * + kv_bytes_per_token_swa * block_size * n_blocks_swa. Returns LLM_OK, LLM_ERR_INVALID_ARG (NULL, bad params) or
 * LLM_ERR_UNSUPPORTED (architecture without a forward); *out is zeroed on
 * failure. */
llm_status llm_net_plan(const llm_model_desc *desc, const llm_net_params *params,
                        llm_net_memory *out);

/* Builds a runnable network for desc on be. desc and be must outlive the net
 * (weights stay in desc's mapping on the CPU backend). params may be NULL.
 * Returns LLM_OK; LLM_ERR_UNSUPPORTED (architecture or a weight type the
 * backend cannot multiply); LLM_ERR_BAD_FORMAT (a tensor missing or with the
 * wrong shape; the message names it); LLM_ERR_NO_MEMORY; LLM_ERR_INVALID_ARG.
 * On failure *out is NULL. */
llm_status llm_net_create(const llm_model_desc *desc, llm_backend *be,
                          const llm_net_params *params, llm_net **out);
/* Frees the net (not desc, not the backend). KV storage must be freed first.
 * NULL is harmless. */
void llm_net_free(llm_net *net);

const llm_model_hparams *llm_net_hparams(const llm_net *net);
int32_t llm_net_max_batch(const llm_net *net);

/* Non-zero if the net is an encoder (bert): it has no KV cache
 * (llm_net_kv_create refuses it, kv_bytes are 0) and llm_net_forward takes
 * kv = NULL, ignores block tables, needs each sequence at positions
 * 0..n_tokens-1 (a whole text, attending to itself in both directions) and
 * computes hidden states only (logits_mode NONE, `hidden` set: the last
 * layer's output, there being no final norm). */
int llm_net_is_encoder(const llm_net *net);

/* Bytes of K plus V for one token in one layer: n_head_kv rows of head_dim
 * elements of type_k plus as many of type_v (a quantized row is head_dim / 32
 * blocks). Multiply by n_layer for a whole token. */
size_t llm_net_kv_bytes_per_token_layer(const llm_net *net);

/* Allocates K/V storage for n_blocks blocks of block_size tokens: per layer
 * one K and one V backend buffer [n_blocks][n_head_kv][block_size][head_dim]
 * (contents zero). Returns LLM_OK, LLM_ERR_NO_MEMORY or LLM_ERR_INVALID_ARG. */
llm_status llm_net_kv_create(llm_net *net, int32_t n_blocks, int32_t block_size,
                             llm_net_kv **out);
/* Layer groups. A net whose sliding-window layers (llm_net_memory.n_layer_swa)
 * never read keys before their window can keep those layers' K/V apart:
 * llm_net_kv_create_swa gives the window layers their own storage of
 * n_blocks_swa blocks, addressed through each sequence's own second block
 * table (llm_net_seq.block_table_swa), so that the caller can release the
 * window group's blocks that left every window (libs/kv,
 * llm_kv_seq_release_before) while the other layers keep the whole
 * sequence. n_blocks_swa == 0 is llm_net_kv_create: one group, one table.
 * Returns as llm_net_kv_create (LLM_ERR_INVALID_ARG also for n_blocks_swa <
 * 0, or > 0 on a net without window layers). */
llm_status llm_net_kv_create_swa(llm_net *net, int32_t n_blocks, int32_t n_blocks_swa, int32_t block_size,
                                 llm_net_kv **out);
void llm_net_kv_free(llm_net_kv *kv);
/* Copies token slots [0, n_tokens) of physical block src into block dst, in
 * the K and V of every layer of the main group (every layer unless the
 * storage has a separate window group), on the backend (no host round trip):
 * the copy-on-write of a shared partial block. src == dst or n_tokens == 0
 * does nothing. Returns LLM_OK, LLM_ERR_INVALID_ARG (a block outside [0,
 * n_blocks) or n_tokens outside [0, block_size]) or a backend error (dst's
 * earlier layers may then be copied already). */
llm_status llm_net_kv_copy_block(llm_net_kv *kv, int32_t src, int32_t dst, int32_t n_tokens);
/* The same for the window group's own storage (blocks in [0, n_blocks_swa));
 * LLM_ERR_INVALID_ARG if the storage has no separate window group. */
llm_status llm_net_kv_copy_block_swa(llm_net_kv *kv, int32_t src, int32_t dst, int32_t n_tokens);
/* Recurrent state (hybrid recurrent nets such as qwen35, whose Gated
 * DeltaNet layers carry a per-sequence state instead of K/V): a pool of
 * n_slots slots numbered 1..n_slots, each holding every recurrent layer's
 * convolution state and delta-rule state (F32, llm_net_state_bytes bytes).
 * A slot also remembers the position it has reached: a forward whose
 * sequence starts at position 0 zeroes the slot first; one that starts at p >
 * 0 needs the slot at p (else LLM_ERR_INVALID_ARG: recompute the sequence
 * from 0). A forward that fails or is cancelled leaves its slots invalid
 * (position -1), since some layers may have advanced and others not.
 * llm_net_kv_state_alloc (once, after llm_net_kv_create) returns LLM_OK,
 * LLM_ERR_INVALID_ARG (not a recurrent net, n_slots < 1, already allocated)
 * or LLM_ERR_NO_MEMORY. */
int llm_net_is_recurrent(const llm_net *net);
size_t llm_net_state_bytes(const llm_net *net);
llm_status llm_net_kv_state_alloc(llm_net_kv *kv, int32_t n_slots);
int32_t llm_net_kv_state_slots(const llm_net_kv *kv);
/* Copies slot src's state and position into slot dst (a fork). LLM_OK,
 * LLM_ERR_INVALID_ARG (a slot out of range) or a backend error. */
llm_status llm_net_kv_state_copy(llm_net_kv *kv, int32_t src, int32_t dst);
/* The position a slot has reached (its tokens 0..pos-1 are in the state), or
 * -1 when empty or invalid. */
int32_t llm_net_kv_state_pos(const llm_net_kv *kv, int32_t slot);

/* The K and V cache tensors of a layer (for tests and other backends' tools). */
llm_status llm_net_kv_layer(const llm_net_kv *kv, int32_t layer, llm_tensor *k, llm_tensor *v);

/* One sequence's slice of a batch: its tokens are n_tokens consecutive
 * entries of the batch (sequences follow each other in order). With a
 * separate window group (llm_net_kv_create_swa) the window layers read and
 * write through block_table_swa, whose entries before the window of the
 * sequence's first token may be -1 (released); otherwise it is ignored. */
typedef struct llm_net_seq {
    int32_t n_tokens;
    const int32_t *block_table; /* [n_table] physical block of logical block i */
    int32_t n_table;
    const int32_t *block_table_swa; /* [n_table_swa] the window group's table, or NULL */
    int32_t n_table_swa;
} llm_net_seq;

typedef enum llm_logits_mode {
    LLM_LOGITS_NONE = 0, /* no logits (e.g. a prefill chunk) */
    LLM_LOGITS_LAST = 1, /* one row per sequence: its last token */
    LLM_LOGITS_ALL = 2   /* one row per token */
} llm_logits_mode;

/* A debug tap: if a batch's `tap` is non-NULL, llm_net_forward calls it once
 * after each named stage of every layer, in forward order, with the tensor
 * that stage just computed, so that intermediate values can be compared with
 * another implementation (llama.cpp's eval callback uses the same names) or
 * another backend. It is for debugging and checking, not for production use.
 *
 * Per layer l (0-based), with n = the batch's n_tokens, all tensors F32 and
 * contiguous, shapes outermost first:
 *   "attn_norm"  [n][n_embd]            rms_norm(x) * attn_norm weight
 *   "Qcur"       [n][n_head][head_dim]  query (+ bias) after RoPE
 *   "Kcur"       [n][n_head_kv][head_dim] key after RoPE (before the cache's type)
 *   "Vcur"       [n][n_head_kv][head_dim] value (+ bias; before the cache's type)
 *   "kqv_out"    [n][n_head*head_dim]   attention output, before Wo
 *   "attn_out"   [n][n_embd]            after Wo (+ bias)
 *   "ffn_inp"    [n][n_embd]            residual after the attention add
 *   "ffn_norm"   [n][n_embd]            rms_norm(ffn_inp) * ffn_norm weight
 *   "ffn_gate_b" [n][n_ff]              gate projection + its bias (only with ffn_gate.bias)
 *   "ffn_up_b"   [n][n_ff]              up projection + its bias (only with ffn_up.bias)
 *   "ffn_swiglu" [n][n_ff]              silu(gate) * up (gemma3: "ffn_geglu",
 *                                        gelu(gate) * up)
 *                (these three, of a batch longer than the net's ffn_rows,
 *                come as several calls, one per run of rows, [rows][n_ff]
 *                each, in row order: join them to get [n][n_ff])
 *   "ffn_out"    [n][n_embd]            after the down projection
 *   "l_out"      [n][n_embd]            residual after the FFN add
 * then, with layer -1 and only when logits or hidden states are requested:
 *   "result_norm" [rows][n_embd]        final norm; rows = n_tokens when
 *                                        `hidden` is set or logits_mode is ALL,
 *                                        else the last row of each sequence.
 *
 * The tensor (and what it points to) is valid only during the call: it views
 * the net's activation arena, which the next stage overwrites. Read it with
 * llm_buffer_read(t->buffer, t->offset, dst, llm_tensor_nbytes(t)); do not
 * keep it, write to it, or call any op on the net's backend from the tap
 * (reading buffers is allowed). name is a static string. The tap cannot fail
 * or stop the forward (use `cancel` for that). */
typedef void (*llm_net_tap_fn)(void *user, const char *name, int32_t layer, const llm_tensor *t);

typedef struct llm_net_batch {
    const int32_t *tokens;    /* [n_tokens] token ids */
    const int32_t *positions; /* [n_tokens] position of each token in its sequence */
    int32_t n_tokens;         /* 1..max_batch */
    const llm_net_seq *seqs;  /* [n_seqs]; sum of n_tokens must equal n_tokens */
    int32_t n_seqs;
    llm_logits_mode logits_mode;
    float *logits;            /* host [rows][n_vocab]; rows = n_seqs (LAST) or n_tokens (ALL) */
    float *hidden;            /* optional host [n_tokens][n_embd]: final normed hidden states */
    /* Optional: polled before every op; non-zero stops the forward with LLM_CANCELLED. */
    int (*cancel)(void *user);
    void *cancel_user;
    /* Optional debug tap (see llm_net_tap_fn); NULL costs nothing. */
    llm_net_tap_fn tap;
    void *tap_user;
    /* Recurrent nets (llm_net_is_recurrent): [n_seqs] the state slot of each
     * sequence (1..llm_net_kv_state_slots, all distinct); required there,
     * ignored by other nets. */
    const int32_t *state_slots;
} llm_net_batch;

/* A batch with everything zero/NULL and logits_mode LAST. */
llm_net_batch llm_net_batch_default(void);

/* Runs the network over a batch: writes each token's K/V into kv at its
 * position through its sequence's block table, attends causally to positions
 * 0..position of the same sequence (which must be in the cache already or in
 * this batch), and writes the requested logits.
 * Returns LLM_OK; LLM_CANCELLED (cancel, polled before every op, returned
 * non-zero: logits and hidden are unspecified and K/V of this batch's
 * positions may be partly written, so the caller must treat those positions
 * as not computed; the net and kv stay usable); LLM_ERR_INVALID_ARG (a bad id, position, table or count; nothing
 * computed); a backend error. */
llm_status llm_net_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *batch);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ARCH_H */
