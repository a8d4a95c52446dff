/*
 * llama/sampling.h -- token sampling over host logits, a reproducible RNG and
 * stop-sequence matching on streamed text.
 *
 * Usage (the usual chain; error handling elided):
 *
 *     llm_sampler_params sp = llm_sampler_default_params();
 *     sp.n_vocab_max = 49152; sp.temperature = 0.8f; sp.top_k = 40;
 *     sp.seed = 42;
 *     llm_sampler_chain *ch;
 *     llm_sampler_chain_from_params(&sp, &ch);
 *     for (;;) {
 *         const float *logits = ...;            // [n_vocab], not modified
 *         int32_t tok;
 *         if (llm_sampler_chain_sample(ch, logits, n_vocab, &tok) < 0) break;
 *         llm_sampler_chain_accept(ch, tok);    // feeds the penalty window
 *         ...
 *     }
 *     llm_sampler_chain_free(ch);
 *
 *     const char *stops[] = {"\nUser:", "</s>"};
 *     llm_stop_matcher *sm;
 *     llm_stop_matcher_create(stops, 2, &sm);
 *     const char *out; size_t n;
 *     if (llm_stop_matcher_feed(sm, piece, piece_len, &out, &n) == LLM_END_OF_STREAM) ...
 *     fwrite(out, 1, n, stdout);                // text safe to show now
 *     llm_stop_matcher_free(sm);
 *
 * A chain is built by adding samplers in order and must end with exactly one
 * selector (llm_sampler_chain_add_greedy or llm_sampler_chain_add_dist). Each
 * sample() call starts from the caller's logits (read only, never written)
 * and lets every sampler narrow or reshape a candidate set held in buffers
 * allocated once at create time for n_vocab_max tokens: no allocation happens
 * per token. Penalties and logit bias change a few tokens as "patches" beside
 * the caller's array (no copy of the vocabulary) which top-k reads directly.
 * No sampler sorts the whole vocabulary: top-k uses a bounded heap after a
 * 16-logits-at-a-time threshold scan, min-p a threshold, top-p and typical-p
 * a 256-bucket (1/8 logit or nat wide) mass histogram after which only the
 * one boundary bucket is sorted; on the full vocabulary top-p first tries a
 * histogram of just the logits within 8 of the max (the cut is almost always
 * there) after one vectorized pass for the total mass.
 *
 * Candidate order and ties. Logits are compared by the total order
 * (logit descending, then position ascending); at the first sampler positions
 * are token ids. NaN and +-INFINITY logits are never selected (zero weight);
 * a mask or bias forbids a token with -INFINITY.
 *
 * RNG (exact, so another implementation, e.g. a CUDA sampler, can reproduce
 * every draw). Word n (n = 0, 1, 2, ...) of a chain's stream is
 *     word (n mod 4) of Philox4x32-10(counter = {lo32(n/4), hi32(n/4), 0, 0},
 *                                      key = {lo32(seed), hi32(seed)})
 * which is the sequence cuRAND's curand() returns after
 * curand_init(seed, 0, 0, &state) for the Philox4_32_10 generator. A draw
 * consumes exactly one word w and uses u = (w >> 8) * 2^-24 in [0, 1).
 * Every llm_sampler_chain_add_dist draw, and nothing else, consumes a word;
 * reset() rewinds the stream to n = 0.
 *
 * Draw (exact). Given candidate logits x[0..n) (current order) and
 * M = max finite x: w[i] = llm exp(x[i] - M) (our polynomial below, 0 for
 * non-finite x). Positions are cut in blocks of 256; a block's sum is eight
 * float lanes (lane j sums positions with index % 8 == j, in increasing
 * order) then added lane 0..7 left to right; Z is the sum of block sums in
 * block order. The target t = u * Z. Walking blocks with acc += block sum,
 * the first block where acc + sum > t is entered and walked element by
 * element (acc += w[i]); the first i with acc > t is drawn. If rounding lets
 * the walk finish, the last position with w > 0 is drawn.
 *
 * Float determinism. Every float operation is IEEE-754 binary32 (double for
 * a few scalar logs) in a fixed order; the library is compiled with
 * -ffp-contract=off so no fused multiply-add changes a rounding (the AVX2
 * variants of the exp loops, picked at run time on x86-64, are the same C code
 * and give bit-identical sums), and uses no libm function in any result:
 * exp(x) for x in [-80, 0] (0 below -80) is 2^n * P6(r) with the
 * Cody-Waite reduction r = x - n*ln2 (n = round-to-nearest(x*log2(e)),
 * ln2 split as 0.693359375 - 2.12194440e-4) and the degree-6 Taylor
 * polynomial; log is a double atanh series. Hence the same seed and the same
 * logits give the same tokens on every platform with IEEE float evaluation
 * (FLT_EVAL_METHOD == 0, e.g. x86-64 SSE, AArch64; not x87).
 *
 * Threads. No global mutable state. A chain or a stop matcher may be used by
 * any thread, one thread at a time. Error text is thread-local.
 *
 * Header compiles alone as C11 and inside C++17.
 */
#ifndef LLAMA_SAMPLING_H
#define LLAMA_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". Never NULL. */
const char *llm_sampling_version(void);

/* Text of the last error raised by this library on the calling thread
 * ("" if none). Valid until the next failing call on this thread. Never
 * NULL. */
const char *llm_sampling_last_error(void);

/* ------------------------------------------------------------------ RNG */

/* Philox4x32-10 (Salmon et al., SC'11; Random123): the 10-round bijection of
 * a 128-bit counter under a 64-bit key. Pure function, no state. */
void llm_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* Word n of the stream defined above for a seed (see "RNG"). */
uint32_t llm_philox_stream_word(uint64_t seed, uint64_t n);

/* ---------------------------------------------------------- the chain */

typedef struct llm_sampler_chain llm_sampler_chain;

typedef struct llm_sampler_chain_params {
    int32_t n_vocab_max; /* largest n_vocab sample() will be given (> 0) */
    uint64_t seed;       /* RNG seed (see "RNG") */
} llm_sampler_chain_params;

/* Defaults: n_vocab_max 262144, seed 0x5eed. */
llm_sampler_chain_params llm_sampler_chain_default_params(void);

/* Create an empty chain, allocating every buffer sample() needs: 36 bytes
 * per vocab entry (a penalty sampler adds 4 more when it is added). On
 * success *out owns a chain the caller frees with llm_sampler_chain_free().
 * Returns LLM_OK, LLM_ERR_INVALID_ARG (NULL argument, n_vocab_max <= 0) or
 * LLM_ERR_NO_MEMORY; *out is NULL on error. */
llm_status llm_sampler_chain_create(const llm_sampler_chain_params *params,
                                    llm_sampler_chain **out);

/* Free a chain and every sampler in it. NULL is harmless. */
void llm_sampler_chain_free(llm_sampler_chain *chain);

/* One logit bias entry: logit[token] += bias before later samplers. */
typedef struct llm_logit_bias {
    int32_t token;
    float bias; /* -INFINITY bans the token */
} llm_logit_bias;

/* Masking hook for constrained decoding. Called with the current candidates:
 * ids[i] is the token id of logits[i] (when the mask is the first sampler,
 * n == n_vocab and ids[i] == i). Set logits[i] = -INFINITY to forbid a token;
 * do not reorder. Return LLM_OK, or a negative status that sample() returns. */
typedef llm_status (*llm_sampler_mask_fn)(void *user, const int32_t *ids, /* [n] */
                                          float *logits,                  /* [n] */
                                          size_t n);

/* Adders. Each appends one sampler to the end of the chain and returns LLM_OK,
 * LLM_ERR_INVALID_ARG (NULL chain or an argument out of its documented
 * range), LLM_ERR_NO_MEMORY, or LLM_ERR_STATE if the chain already ends with
 * a selector (greedy/dist must be last). On error the chain is unchanged.
 * min_keep (>= 0) is the least number of candidates a filter keeps. */

/* Adds bias[i].bias to the logit of bias[i].token (entries for the same token
 * add up; tokens >= the n_vocab of a call are ignored). The list is copied.
 * Tokens must be in [0, n_vocab_max). */
llm_status llm_sampler_chain_add_logit_bias(llm_sampler_chain *chain,
                                            const llm_logit_bias *bias, size_t n_bias);

/* Penalties over the last `window` accepted tokens (window >= 0; 0 disables).
 * For each candidate t seen c > 0 times in the window, in this order:
 *   repetition (llama style): x = x > 0 ? x / repeat : x * repeat;
 *   frequency and presence (OpenAI): x -= c * frequency + presence.
 * repeat > 0; 1, 0, 0 are neutral. History is fed by accept(). */
llm_status llm_sampler_chain_add_penalties(llm_sampler_chain *chain, int32_t window,
                                           float repeat, float frequency, float presence);

/* Keep the k best candidates (k <= 0 or k >= count: no-op). Output sorted by
 * logit descending (ties: lower position first). */
llm_status llm_sampler_chain_add_top_k(llm_sampler_chain *chain, int32_t k);

/* Nucleus: with probabilities p_i = softmax(x), keep the shortest prefix of the
 * candidates in logit-descending order whose cumulative probability is >= p,
 * and at least min_keep. p in (0, 1]; p == 1 is a no-op. */
llm_status llm_sampler_chain_add_top_p(llm_sampler_chain *chain, float p, size_t min_keep);

/* Keep candidates with p_i >= p * p_max, i.e. x_i >= max_x + ln(p) (ln by the
 * library's deterministic log), and at least min_keep (the best ones).
 * p in [0, 1]; 0 is a no-op. Order of survivors is preserved. */
llm_status llm_sampler_chain_add_min_p(llm_sampler_chain *chain, float p, size_t min_keep);

/* Locally typical sampling (Meister et al.): with H = -sum p_i ln p_i, order
 * candidates by |-ln p_i - H| ascending and keep the shortest prefix with
 * cumulative probability >= p, at least min_keep. p in (0, 1]; 1 is a no-op. */
llm_status llm_sampler_chain_add_typical(llm_sampler_chain *chain, float p, size_t min_keep);

/* Temperature: x *= 1/t (the reciprocal is taken once in float). t <= 0
 * keeps only the best candidate (greedy); t == 1 is a no-op. */
llm_status llm_sampler_chain_add_temperature(llm_sampler_chain *chain, float t);

/* Masking hook (see llm_sampler_mask_fn); `user` is passed through and not
 * owned. fn must not be NULL. */
llm_status llm_sampler_chain_add_mask(llm_sampler_chain *chain, llm_sampler_mask_fn fn,
                                      void *user);

/* Selector: the best candidate (ties: the first in candidate order, which at
 * the start is the lowest id). Consumes no RNG word. */
llm_status llm_sampler_chain_add_greedy(llm_sampler_chain *chain);

/* Selector: a random draw from softmax(x) over the candidates (see "Draw"),
 * consuming one RNG word. */
llm_status llm_sampler_chain_add_dist(llm_sampler_chain *chain);

/* Run the chain on logits[0..n_vocab) and write the chosen token to *token.
 * logits are read, never written. The chain's history is not changed (call
 * accept()). Returns LLM_OK; LLM_ERR_INVALID_ARG (NULL argument, n_vocab <= 0
 * or > n_vocab_max); LLM_ERR_STATE (the chain does not end with a selector,
 * or every token was masked / non-finite); or a mask hook's error. On error
 * *token is -1 and the RNG stream has not advanced. */
llm_status llm_sampler_chain_sample(llm_sampler_chain *chain, const float *logits, /* [n_vocab] */
                                    int32_t n_vocab, int32_t *token);

/* Record a generated (or prompt) token in the history of every penalty
 * sampler. Returns LLM_OK or LLM_ERR_INVALID_ARG (token outside
 * [0, n_vocab_max)); nothing changes on error. */
llm_status llm_sampler_chain_accept(llm_sampler_chain *chain, int32_t token);

/* Forget the history and rewind the RNG stream to its start. NULL harmless. */
void llm_sampler_chain_reset(llm_sampler_chain *chain);

/* Set a new seed and rewind the RNG stream. NULL harmless. */
void llm_sampler_chain_set_seed(llm_sampler_chain *chain, uint64_t seed);

/* Number of samplers in the chain (0 for NULL). */
size_t llm_sampler_chain_length(const llm_sampler_chain *chain);

/* The candidate set the selector saw in the last successful sample(), in
 * candidate order: copies min(count, cap) ids and logits (either pointer may
 * be NULL) and returns count (0 before any sample or after a failed one).
 * When no sampler narrowed or changed the logits, the set is the whole
 * vocabulary (ids 0..n_vocab-1) and `logits` is not written: they were the
 * caller's, unchanged. For inspection and tests. */
size_t llm_sampler_chain_last_candidates(const llm_sampler_chain *chain, int32_t *ids,
                                         float *logits, size_t cap);

/* -------------------------------------------------- the usual chain */

typedef struct llm_sampler_params {
    int32_t n_vocab_max;        /* as llm_sampler_chain_params */
    uint64_t seed;
    float temperature;          /* <= 0: greedy */
    int32_t top_k;              /* <= 0: off */
    float top_p;                /* >= 1: off */
    float min_p;                /* <= 0: off */
    float typical_p;            /* >= 1: off */
    float repeat_penalty;       /* 1: off */
    float presence_penalty;     /* 0: off */
    float frequency_penalty;    /* 0: off */
    int32_t penalty_window;     /* last N accepted tokens; 0: off */
    const llm_logit_bias *logit_bias; /* [n_logit_bias], copied; may be NULL */
    size_t n_logit_bias;
    size_t min_keep;            /* for top-p, min-p, typical */
    llm_sampler_mask_fn mask;   /* NULL: none; else the chain's first sampler (constraints) */
    void *mask_user;            /* passed to mask, not owned */
} llm_sampler_params;

/* Defaults: n_vocab_max 262144, seed 0x5eed, temperature 0.8, top_k 40,
 * top_p 0.95, min_p 0.05, typical_p 1 (off), repeat 1, presence 0,
 * frequency 0, window 64, no bias, min_keep 1, no mask. */
llm_sampler_params llm_sampler_default_params(void);

/* Build the usual chain, in llama.cpp's order: [mask ->] logit bias -> penalties ->
 * top-k -> typical -> top-p -> min-p -> temperature -> dist; with
 * temperature <= 0: logit bias -> penalties -> greedy. Disabled stages are
 * left out. Returns as llm_sampler_chain_create plus the adders' codes. */
llm_status llm_sampler_chain_from_params(const llm_sampler_params *params,
                                         llm_sampler_chain **out);

/* ------------------------------------------------- stop sequences */

typedef struct llm_stop_matcher llm_stop_matcher;

/* Create a matcher for n_stops non-empty NUL-terminated strings (copied).
 * Returns LLM_OK, LLM_ERR_INVALID_ARG (NULL, or an empty string) or
 * LLM_ERR_NO_MEMORY; *out is NULL on error. n_stops may be 0 (pass-through
 * apart from holding back an incomplete UTF-8 sequence). */
llm_status llm_stop_matcher_create(const char *const *stops, size_t n_stops,
                                   llm_stop_matcher **out);

/* Free a matcher. NULL is harmless. */
void llm_stop_matcher_free(llm_stop_matcher *m);

/* Feed the next piece of detokenized text (len bytes, may be 0) and get the
 * text that is now safe to emit in *out / *out_len (not NUL-terminated; owned
 * by the matcher, valid until its next call). Text that could be the start of
 * a stop string, or an incomplete UTF-8 sequence at the end, is held back and
 * released once it cannot be. When a stop string completes, everything before
 * its first occurrence is emitted, the stop string and anything after it are
 * dropped, and LLM_END_OF_STREAM is returned (then and on later feeds, which
 * emit nothing). If several stops complete in one feed, the one ending first
 * wins (then the one starting first): the result does not depend on how the
 * text was cut into pieces. Stops are matched on bytes; for valid UTF-8 text and stops a
 * match always begins at a character boundary. Returns LLM_OK,
 * LLM_END_OF_STREAM, LLM_ERR_INVALID_ARG or LLM_ERR_NO_MEMORY (state kept). */
llm_status llm_stop_matcher_feed(llm_stop_matcher *m, const char *piece, size_t len,
                                 const char **out, size_t *out_len);

/* End of generation without a stop: release everything held back. Returns
 * LLM_OK (or LLM_END_OF_STREAM with nothing emitted if a stop was seen). */
llm_status llm_stop_matcher_flush(llm_stop_matcher *m, const char **out, size_t *out_len);

/* True once a stop string matched. */
bool llm_stop_matcher_stopped(const llm_stop_matcher *m);

/* Index of the matched stop string, or -1. */
int llm_stop_matcher_which(const llm_stop_matcher *m);

/* Clear held text and the stopped state. NULL is harmless. */
void llm_stop_matcher_reset(llm_stop_matcher *m);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_SAMPLING_H */
