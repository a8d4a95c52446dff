/*
 * llama/grammar.h -- constrained generation: GBNF grammars, a matcher over
 * code points, token masks over a vocabulary.
 *
 * Link llama-grammar. Messages of failed calls: llm_grammar_last_error().
 *
 *     llm_grammar_vocab *voc;   // token bytes from the tokenizer, once per model
 *     llm_grammar_vocab_create(bytes, lens, n_vocab, flags, &voc);
 *     llm_grammar *g;
 *     if (llm_grammar_parse(text, strlen(text), voc, &g) != LLM_OK)
 *         fprintf(stderr, "%s\n", llm_grammar_last_error()); // "line 3, column 7: ..."
 *     llm_grammar_matcher *m;
 *     llm_grammar_matcher_create(g, voc, NULL, &m);
 *     uint32_t *mask = calloc(LLM_GRAMMAR_MASK_WORDS(n_vocab), 4);
 *     for (;;) {
 *         llm_grammar_matcher_fill_mask(m, mask, LLM_GRAMMAR_MASK_WORDS(n_vocab));
 *         int32_t tok = sample_with_mask(logits, mask);   // bit t set: t allowed
 *         llm_grammar_matcher_accept_token(m, tok);
 *         if (is_eog(tok)) break;
 *     }
 *     llm_grammar_matcher_rollback(m, 2);  // undo the last two tokens
 *     llm_grammar_matcher_free(m); llm_grammar_free(g); llm_grammar_vocab_free(voc);
 *
 * The language is llama.cpp's GBNF: `name ::= alternatives` rules (a rule
 * ends at a newline outside parentheses), `|`, `( )`, `* + ? {m} {m,}
 * {m,n}`, "literals" and [classes] with the escapes \n \r \t \\ \" \[ \] \-
 * \xHH \uHHHH \UHHHHHHHH, [^negated classes], `.` (any code point), `#`
 * comments, and token references <[id]>, <text> (the vocabulary token whose
 * bytes are exactly "<text>"), !<[id]> / !<text> (any one token but that).
 * The grammar must define `root`, every referenced rule, and no rule may be
 * left-recursive (directly or through rules that can be empty). Repetition
 * counts above 2000 are refused as llama.cpp refuses them.
 *
 * Matching follows llama.cpp: a matcher holds a set of pushdown stacks of
 * grammar positions; each code point advances every stack that accepts it.
 * Token bytes are UTF-8; a code point split across tokens is held as a
 * partial sequence and a token ending in one is allowed when some stack can
 * still accept a completion of it. Token references match a whole token by
 * id, at a token boundary. Tokens flagged LLM_GRAMMAR_TOKEN_SPECIAL match
 * only token references, never text; tokens flagged LLM_GRAMMAR_TOKEN_EOG
 * are allowed exactly when the grammar can end.
 *
 * Where this differs from llama.cpp (on purpose): special tokens never match
 * text (llama.cpp matches their text, e.g. "<|im_end|>" against a string
 * rule); a token reference matches only a whole token at a token boundary
 * (llama.cpp's mask, unlike its accept, also tests the id of a token that
 * reaches the reference part-way); lazy triggers are literal words and
 * tokens, not regular expressions, and the earliest word in the text wins;
 * bytes F8..FF are invalid UTF-8; the start rule is always `root`.
 *
 * Cost: fill_mask ORs precomputed token classes, one per stack "context"
 * (its top frames); the first mask in a new context walks the whole
 * vocabulary trie (tens of milliseconds at 150k tokens), later ones take
 * microseconds. Classes live in a table shared by a matcher and all its
 * clones: keep one matcher per (grammar, vocabulary) as a prototype and
 * clone it for each new sequence, so sequences reuse each other's classes.
 *
 * Thread safety: a grammar and a vocabulary are immutable after creation and
 * may be shared by any number of threads and matchers. A matcher is used by
 * one thread at a time; clones of a matcher share the class table (guarded
 * by a lock), so clones may run in different threads.
 */
#ifndef LLAMA_GRAMMAR_H
#define LLAMA_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". Never NULL. */
const char *llm_grammar_version(void);

/* The calling thread's message of the last failed llm_grammar_* or
 * llm_json_schema_* call ("" when none). Valid until the thread's next
 * failing call of this library. */
const char *llm_grammar_last_error(void);

/* ---------------------------------------------------------------- vocabulary */

typedef struct llm_grammar_vocab llm_grammar_vocab;

/* Per-token flags for llm_grammar_vocab_create (bitwise or). */
enum {
    LLM_GRAMMAR_TOKEN_EOG = 1u,     /* ends generation: allowed only where the grammar can end */
    LLM_GRAMMAR_TOKEN_SPECIAL = 2u  /* control token: matched by token references only */
};

/* Number of uint32_t words of a token mask over n tokens. */
#define LLM_GRAMMAR_MASK_WORDS(n) (((size_t)(n) + 31u) / 32u)

/* Builds a vocabulary from n_tokens byte strings: token t has bytes
 * bytes[t][0..lens[t]) (not NUL-terminated; may be empty or hold any byte)
 * and flags flags[t] (flags may be NULL: no token is EOG or special). The
 * bytes are copied; nothing is borrowed after the call. Tokens with empty
 * bytes never match text. On LLM_OK *out owns a new vocabulary (free with
 * llm_grammar_vocab_free). Returns LLM_ERR_INVALID_ARG (NULL pointers,
 * n_tokens <= 0, a NULL bytes[t] with lens[t] > 0) or LLM_ERR_NO_MEMORY;
 * on failure *out is NULL. */
llm_status llm_grammar_vocab_create(const char *const *bytes, const size_t *lens, int32_t n_tokens,
                                    const uint8_t *flags, llm_grammar_vocab **out);

/* Frees a vocabulary. NULL is harmless. Matchers and grammars that use it
 * must be freed first. */
void llm_grammar_vocab_free(llm_grammar_vocab *vocab);

/* Number of tokens of the vocabulary (0 for NULL). */
int32_t llm_grammar_vocab_n_tokens(const llm_grammar_vocab *vocab);

/* The LLM_GRAMMAR_TOKEN_* flags of token t (0 for NULL or t out of range). */
unsigned llm_grammar_vocab_token_flags(const llm_grammar_vocab *vocab, int32_t t);

/* The bytes of token t (not NUL-terminated), *len their count; NULL (and
 * *len 0) for NULL or t out of range. Owned by the vocabulary. */
const char *llm_grammar_vocab_token_bytes(const llm_grammar_vocab *vocab, int32_t t, size_t *len);

/* ------------------------------------------------------------------- grammar */

typedef struct llm_grammar llm_grammar;

/* Parses GBNF text[0..len) (UTF-8; need not be NUL-terminated; an embedded
 * NUL is an error) and checks it as llama.cpp does: `root` defined, every
 * referenced rule defined, no left recursion. vocab may be NULL; it is
 * needed only to resolve <text> token references and to check <[id]>
 * against the vocabulary size, and is not kept. On LLM_OK *out owns the
 * grammar (free with llm_grammar_free). Errors (the message names line and
 * column, 1-based, where one applies):
 *   LLM_ERR_INVALID_ARG  NULL text (with len > 0) or out;
 *   LLM_ERR_BAD_UTF8     the text is not valid UTF-8;
 *   LLM_ERR_BAD_FORMAT   a syntax error, an undefined rule, no root, left
 *                        recursion, a token reference that names no token;
 *   LLM_ERR_UNSUPPORTED  a repetition count above 2000, parentheses nested
 *                        deeper than 512, or more than 1<<20 grammar elements;
 *   LLM_ERR_NO_MEMORY.
 * On failure *out is NULL. */
llm_status llm_grammar_parse(const char *text, size_t len, const llm_grammar_vocab *vocab,
                             llm_grammar **out);

/* Frees a grammar. NULL is harmless. Its matchers must be freed first. */
void llm_grammar_free(llm_grammar *grammar);

/* Number of rules after parsing, generated rules included (a group or a
 * repetition becomes rules named like `root_3`, as in llama.cpp). */
int32_t llm_grammar_n_rules(const llm_grammar *grammar);

/* Writes the grammar as GBNF text, one rule per line in rule-id order,
 * generated rules included (named with '-' for llama.cpp's '_', which GBNF
 * names cannot hold: root_3 prints as root-3), into out[0..cap) with a NUL.
 * The text parses back to an equivalent grammar (the same rules, possibly
 * numbered differently). *n_needed (may be NULL) receives the length
 * without the NUL. Returns LLM_OK, LLM_ERR_BUFFER_TOO_SMALL (cap < length
 * + 1; nothing useful is written, *n_needed says what to allocate) or
 * LLM_ERR_INVALID_ARG (NULL grammar, or NULL out with cap > 0). */
llm_status llm_grammar_print(const llm_grammar *grammar, char *out, size_t cap, size_t *n_needed);

/* ------------------------------------------------------------------- matcher */

typedef struct llm_grammar_matcher llm_grammar_matcher;

typedef struct llm_grammar_matcher_params {
    /* Bound on the stack set (an ambiguous grammar can multiply stacks with
     * every code point). A step that would exceed it fails with
     * LLM_ERR_EXHAUSTED and changes nothing. Default 2048. */
    int32_t max_stacks;
    /* Lazy grammar: text is unconstrained (every token allowed) until a
     * trigger appears, then the grammar applies from the trigger on. */
    int lazy;
    /* Trigger words: when the text accepted so far contains one of them,
     * the grammar is fed the text from the earliest such occurrence on
     * (tokens that straddle its start contribute only their bytes from
     * there). NUL-terminated UTF-8; copied at create. */
    const char *const *trigger_words;
    int32_t n_trigger_words;
    /* Trigger tokens: accepting one of them starts the grammar with that
     * token itself. Copied at create. */
    const int32_t *trigger_tokens;
    int32_t n_trigger_tokens;
} llm_grammar_matcher_params;

/* Defaults: max_stacks 2048, not lazy, no triggers. */
llm_grammar_matcher_params llm_grammar_matcher_default_params(void);

/* Creates a matcher at the start of grammar's `root`. grammar (and vocab,
 * which may be NULL when only accept_bytes is used) are borrowed and must
 * outlive the matcher. params may be NULL (defaults). On LLM_OK *out owns
 * the matcher. Returns LLM_ERR_INVALID_ARG (NULL grammar/out, bad params:
 * max_stacks < 1, NULL arrays with counts > 0, an empty trigger word, lazy
 * without triggers), LLM_ERR_EXHAUSTED (the start already exceeds
 * max_stacks) or LLM_ERR_NO_MEMORY; *out is NULL on failure. */
llm_status llm_grammar_matcher_create(const llm_grammar *grammar, const llm_grammar_vocab *vocab,
                                      const llm_grammar_matcher_params *params,
                                      llm_grammar_matcher **out);

/* Frees a matcher. NULL is harmless. */
void llm_grammar_matcher_free(llm_grammar_matcher *m);

/* Copies m, history included: the copy accepts, rolls back and masks
 * independently of m (a fork for speculative branches, or a new sequence
 * from a prototype at the start), sharing m's table of token classes. The
 * copy costs O(distinct stacks m has seen + steps taken). Returns LLM_OK,
 * LLM_ERR_INVALID_ARG or LLM_ERR_NO_MEMORY (*out NULL). */
llm_status llm_grammar_matcher_clone(const llm_grammar_matcher *m, llm_grammar_matcher **out);

/* Feeds bytes[0..len) as text (no token references match). len 0 is a
 * valid step. Counts as one step for rollback. Returns LLM_OK;
 * LLM_ERR_BAD_FORMAT when the grammar refuses the text (or it is not
 * UTF-8); LLM_ERR_EXHAUSTED when the stack set would exceed max_stacks;
 * LLM_ERR_NO_MEMORY; LLM_ERR_INVALID_ARG (NULL m, NULL bytes with
 * len > 0). On any error the matcher is unchanged. */
llm_status llm_grammar_matcher_accept_bytes(llm_grammar_matcher *m, const void *bytes, size_t len);

/* Feeds one token of the matcher's vocabulary: an EOG token is accepted
 * when the grammar can end (after it only another EOG is accepted); a
 * token reference at a stack top matches by id; otherwise the token's bytes
 * are fed as text (never for special tokens). One step for rollback.
 * Returns as accept_bytes, and LLM_ERR_INVALID_ARG for an id out of range
 * or a matcher without a vocabulary. The matcher is unchanged on error. */
llm_status llm_grammar_matcher_accept_token(llm_grammar_matcher *m, int32_t token);

/* 1 when the grammar is complete here (some stack is empty and no partial
 * UTF-8 sequence is pending) -- an EOG token would be allowed; 0 otherwise
 * and for NULL. A lazy matcher still waiting for its trigger can end. */
int llm_grammar_matcher_can_end(const llm_grammar_matcher *m);

/* Undoes the last n accepted steps (tokens or accept_bytes calls), in
 * O(1): every step's stack set stays in the matcher's history (a few dozen
 * bytes a step, more when the set changes), which lives as long as the
 * matcher. Returns LLM_OK, or LLM_ERR_INVALID_ARG when n < 0 or n exceeds the
 * number of steps taken (nothing is undone then). */
llm_status llm_grammar_matcher_rollback(llm_grammar_matcher *m, int32_t n);

/* Number of steps that rollback can undo (all steps since create). */
int32_t llm_grammar_matcher_n_steps(const llm_grammar_matcher *m);

/* Fills mask[0..n_words) with the tokens allowed next: bit (t % 32) of
 * mask[t / 32] is set when token t would be accepted by accept_token (bits
 * past the vocabulary are cleared). A lazy matcher awaiting its trigger
 * allows every token. Returns LLM_OK; LLM_ERR_BUFFER_TOO_SMALL when
 * n_words < LLM_GRAMMAR_MASK_WORDS(n_tokens); LLM_ERR_INVALID_ARG (NULL
 * arguments, no vocabulary); LLM_ERR_NO_MEMORY; LLM_ERR_EXHAUSTED. The
 * matcher's accepted state does not change; its caches may. */
llm_status llm_grammar_matcher_fill_mask(llm_grammar_matcher *m, uint32_t *mask, size_t n_words);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_GRAMMAR_H */
