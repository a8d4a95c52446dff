/*
 * llama/engine.h -- the narrow waist: the only API applications see.
 *
 * The engine loads a model (a GGUF file or a Hugging Face SafeTensors
 * folder), owns its compute backend, KV-cache pool and tokenizer, and runs
 * conversations in sessions: prefill a prompt, then decode tokens one by one
 * (by callback or by pulling), sample, detokenize, stop. No type from a
 * lower library appears here: this header includes only standard C headers,
 * llama/status.h and llama/types.h.
 *
 * Two headers beside this one build on it, each with its own usage example:
 * llama/engine_sched.h (a scheduler: continuous batching of many requests
 * on one model, what a server needs) and llama/engine_embed.h (sentence
 * embeddings). Applications include only these engine headers.
 *
 * Usage (error checks shortened):
 *
 *     llm_model_params mp = llm_model_default_params();
 *     llm_model *model;
 *     if (llm_load_model("model.gguf", &mp, &model) < 0) {
 *         fprintf(stderr, "%s\n", llm_last_error());
 *         return 1;
 *     }
 *     llm_session *s;
 *     llm_session_new(model, NULL, &s);
 *
 *     llm_chat_message msgs[] = {{"user", "Hello!"}};
 *     char prompt[4096];
 *     int32_t n;
 *     llm_chat_apply(model, msgs, 1, true, prompt, sizeof prompt, &n);
 *
 *     llm_token toks[4096];
 *     llm_tokenize(model, prompt, (size_t)n, LLM_ENCODE_PARSE_SPECIAL, toks, 4096, &n);
 *     llm_prefill(s, toks, n);          // LLM_CONTEXT_FULL if it does not fit
 *     llm_decode(s, 256, on_text, NULL); // streams text to on_text()
 *
 *     llm_session_free(s);
 *     llm_model_free(model);
 *
 * Errors. Every fallible function returns an llm_status (llama/status.h):
 * 0 ok, negative errors, positive non-fatal outcomes (LLM_CANCELLED,
 * LLM_CONTEXT_FULL, LLM_END_OF_STREAM). When a function returns a value other
 * than LLM_OK it also records an English message, readable on the same
 * thread with llm_last_error() and, for calls on a session or a non-const
 * call on a model, with llm_session_last_error() / llm_model_last_error()
 * (const, thread-safe calls write only the thread's message). Unless a function says
 * otherwise, an error leaves every object as it was before the call.
 *
 * Threads. A model may be shared by any number of sessions on any threads;
 * the engine serializes the model's compute internally (one forward pass at a
 * time per model), so concurrent sessions are safe but not parallel. A single
 * session must be used by one thread at a time, except for
 * llm_session_cancel(), which any thread (or a signal handler) may call at
 * any time.
 *
 * Ownership. Handles are created by *_new / llm_load_model and released by
 * the matching *_free, which accepts NULL. A session must be freed before its
 * model. Strings returned as `const char *` are owned by the object that
 * returned them and stay valid as documented at each function.
 */
#ifndef LLAMA_ENGINE_H
#define LLAMA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"
#include "llama/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". Static storage, never NULL. */
const char *llm_engine_version(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* The message of the most recent failing engine call made by this thread
 * (any function of this header), or "" if none failed yet. The pointer is
 * valid until the next engine call on this thread. Never NULL. */
const char *llm_last_error(void);

/* ------------------------------------------------------------------------ */
/* Models                                                                   */
/* ------------------------------------------------------------------------ */

/* llm_token (a token id, 0 <= id < n_vocab) and LLM_TOKEN_NULL ("this model
 * has no such token") come from llama/types.h. */

typedef struct llm_model llm_model;     /* opaque: weights, backend, KV pool, tokenizer */
typedef struct llm_session llm_session; /* opaque: one conversation */

/* Element type of the K or the V cache, llama.cpp's cache types. A row of
 * head_dim values takes 4 (F32) or 2 (F16, BF16) bytes per value, or per 32
 * values one block of 34 (Q8_0), 18 (Q4_0), 20 (Q4_1), 22 (Q5_0) or 24
 * (Q5_1) bytes: the quantized types need head_dim to be a multiple of 32.
 * Rows are rounded (and, quantized with head_dim a multiple of 64,
 * Hadamard-rotated) as llama.cpp's CPU backend stores them, and attention
 * over a quantized, BF16 or mixed cache runs in the order of llama.cpp's
 * flash attention (which llama.cpp needs for a quantized V cache), so
 * logits equal llama.cpp's run with the same types and flash attention on
 * (tested bit for bit on the default model with Q8_0, Q4_0, Q4_1, Q5_0,
 * Q5_1 and mixed caches). The CUDA backend runs F16 and F32 caches only:
 * with another type, backend "cuda" fails with LLM_ERR_UNSUPPORTED and
 * "auto" runs on the CPU. */
typedef enum llm_kv_type {
    LLM_KV_F16 = 0, /* half the memory of F32; the default */
    LLM_KV_F32 = 1,
    LLM_KV_BF16 = 2,
    LLM_KV_Q8_0 = 3,
    LLM_KV_Q4_0 = 4,
    LLM_KV_Q4_1 = 5,
    LLM_KV_Q5_0 = 6,
    LLM_KV_Q5_1 = 7
} llm_kv_type;

/* The lower-case name of a cache type as llama.cpp spells it for
 * --cache-type-k ("f16", "q8_0", ...), or NULL for a value not listed above.
 * Static storage. */
const char *llm_kv_type_name(llm_kv_type t);

/* Parses a cache type name ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1",
 * "q5_0", "q5_1"; case-insensitive) into *out. Returns LLM_OK, or
 * LLM_ERR_INVALID_ARG (NULL or unknown name; *out untouched). */
llm_status llm_kv_type_from_name(const char *name, llm_kv_type *out);

/* Options for llm_load_model() and llm_model_plan(). Obtain defaults with
 * llm_model_default_params() and change the fields you care about, so fields
 * added later keep sensible values. */
typedef struct llm_model_params {
    const char *backend; /* "cpu", "cuda" or "auto" (CUDA if usable, else CPU). Default "auto". */
    int32_t n_threads;   /* CPU worker threads; 0 = number of online cores. */
    int32_t n_ctx;       /* most tokens one session may hold; 0 = min(n_ctx_train, 4096). */
    int32_t kv_tokens;   /* KV budget in tokens shared by all sessions of the model;
                            0 = n_ctx (enough for one full session). Must be >= n_ctx. */
    int32_t kv_block_size; /* tokens per KV block (paging and prefix-reuse granularity); default 16. */
    int32_t kv_swa_seqs; /* models with sliding-window layers (Gemma 3): those layers keep their
                            K/V in a pool of their own that holds only each session's last window
                            plus one prefill pass, (window + n_batch - 2) / kv_block_size + 4
                            blocks per session; this many sessions fit in it at once (at most the
                            main pool's blocks). 0 = kv_tokens / n_ctx + 1 (default). */
    llm_kv_type type_k;  /* K cache element type (llama.cpp's type_k); default LLM_KV_F16. */
    llm_kv_type type_v;  /* V cache element type (type_v); default LLM_KV_F16. */
    int32_t n_batch;     /* most prompt tokens per forward pass during prefill; default 256. */
    bool prefix_cache;   /* share KV blocks of identical prompt prefixes across sessions
                            and turns; default true. */
    bool vocab_only;     /* load only the tokenizer and the metadata: no weights, no
                            backend, no KV cache; default false. The path may also be a
                            vocab-only GGUF or a tokenizer.json. Tokenizing,
                            detokenizing, llm_chat_apply and llm_model_get_info work;
                            llm_session_new and llm_embed return LLM_ERR_STATE. Every
                            field above is ignored. */
    int32_t state_seqs;  /* hybrid recurrent models (Qwen3.5): how many sequences (sessions,
                            scheduler requests, forks) can hold a recurrent state at once; each
                            takes llm_net_state_bytes (counted in kv_bytes). A session that finds
                            none free gets LLM_ERR_EXHAUSTED. 0 = max(4, kv_tokens / n_ctx + 1). */
} llm_model_params;

/* The default model parameters (see each field). Never fails. */
llm_model_params llm_model_default_params(void);

/* Memory an llm_load_model() call with the same arguments would need. */
typedef struct llm_memory_plan {
    uint64_t weights_bytes; /* the model files as mapped: each from its start to the end of
                               its last tensor (every page of it is read) */
    uint64_t kv_bytes;      /* KV cache pools: kv_blocks * block bytes, plus the window
                               layers' own pool (kv_swa_blocks) when the model has one */
    uint64_t scratch_bytes; /* the forward's activation arena for a prefill batch, slot for
                               slot, plus one session's host logits */
    uint64_t total_bytes;   /* sum of the above */
    int32_t n_ctx;          /* the context size the parameters resolve to */
    int32_t kv_blocks;      /* number of KV blocks in the pool */
    int32_t kv_swa_blocks;  /* blocks of the sliding-window layers' own pool (Gemma 3), which
                               holds each session's last window only (see kv_swa_seqs); 0 when
                               the model has no such layers or the window covers n_ctx */
} llm_memory_plan;

/* Computes the memory plan for loading `path` with `params` (NULL =
 * defaults) without loading the weights: only the file's header and
 * metadata are read. An application may show the plan or refuse to load.
 * Returns LLM_OK and fills *plan; LLM_ERR_IO (cannot open),
 * LLM_ERR_BAD_FORMAT (not a valid model), LLM_ERR_UNSUPPORTED (unknown
 * architecture or tensor type), LLM_ERR_INVALID_ARG. Thread-safe. */
llm_status llm_model_plan(const char *path, const llm_model_params *params,
                          llm_memory_plan *plan);

/* Loads a model from `path`: a .gguf file, or a folder holding a Hugging
 * Face model (config.json, *.safetensors, tokenizer.json). `params` may be
 * NULL for defaults. On success *out receives a new model that the caller
 * owns and must release with llm_model_free(). On failure *out is set to
 * NULL and nothing is leaked. Returns LLM_OK, LLM_ERR_IO, LLM_ERR_BAD_FORMAT
 * (a corrupt or truncated file is always this, never a crash),
 * LLM_ERR_UNSUPPORTED, LLM_ERR_NO_MEMORY, LLM_ERR_BACKEND ("cuda" asked for
 * but unusable), LLM_ERR_INVALID_ARG, LLM_ERR_NOT_FOUND (vocab_only: the file
 * has no tokenizer). Thread-safe. */
llm_status llm_load_model(const char *path, const llm_model_params *params,
                          llm_model **out);

/* Releases a model and everything it owns. NULL is harmless. Every session
 * of the model must have been freed before. */
void llm_model_free(llm_model *model);

/* The message of the most recent failure of a non-const call on `model`
 * (llm_embed, llm_session_new...), or "". Valid until the next failing such
 * call on the model. Never NULL. Calls that take a const model and are
 * thread-safe (llm_tokenize, llm_detokenize, llm_chat_apply, ...) do not
 * write it, since several threads may run them on one model at once: their
 * message is in the calling thread's llm_last_error(). */
const char *llm_model_last_error(const llm_model *model);

/* Facts about a loaded model. Strings are owned by the model and valid
 * until llm_model_free(); a missing string is "" (never NULL). */
typedef struct llm_model_info {
    const char *architecture;  /* "llama", "qwen2", "bert", ... */
    const char *name;          /* general.name, or the file name */
    const char *weight_type;   /* dominant tensor type, e.g. "Q4_1" */
    const char *chat_template; /* the model's Jinja chat template, or "" */
    const char *backend;       /* backend actually in use: "cpu" or "cuda" */
    int32_t n_threads;         /* CPU threads in use */
    int32_t n_vocab;
    int32_t n_ctx_train;       /* context length the model was trained with */
    int32_t n_ctx;             /* the per-session context size in force */
    int32_t n_embd;            /* hidden size = embedding dimension of llm_embed()
                                  (llama/engine_embed.h) */
    int32_t n_layer;
    int32_t n_head;
    int32_t n_head_kv;
    uint64_t n_params;         /* number of weights */
    uint64_t weights_bytes;    /* bytes of weights */
    llm_token bos, eos, eot, pad, unk; /* special tokens, LLM_TOKEN_NULL if absent */
    bool is_encoder;           /* true for encoder-only models (BERT): embeddings only; a
                                  session's prefill fails (no logits, no KV cache) */
    bool vocab_only;           /* loaded with llm_model_params.vocab_only: the sizes
                                  above other than n_vocab are 0, backend is "" */
    const char *kernels;       /* the backend's kernels: for "cpu" the instruction sets
                                  in use, e.g. "avx2+fma+f16c+avx512vnni" or "scalar"
                                  (capped by the environment variable LLM_CPU_KERNELS:
                                  auto, avx2, avx-vnni or scalar); "" without a backend */
} llm_model_info;

/* Fills *info. Returns LLM_OK or LLM_ERR_INVALID_ARG. Thread-safe. */
llm_status llm_model_get_info(const llm_model *model, llm_model_info *info);

/* True if `tok` ends a generation turn for this model (EOS, EOT, <|im_end|>...). */
bool llm_token_is_eog(const llm_model *model, llm_token tok);

/* ------------------------------------------------------------------------ */
/* Tokens and text                                                          */
/* ------------------------------------------------------------------------ */

/* Flags of llm_tokenize(). */
#define LLM_ENCODE_ADD_SPECIAL 1u   /* add BOS/EOS etc. as the model's tokenizer config says */
#define LLM_ENCODE_PARSE_SPECIAL 2u /* "<|im_start|>" in the text becomes the special token;
                                         without this flag it is tokenized as plain text */

/* Converts `len` bytes of UTF-8 `text` (need not be NUL-terminated) into
 * token ids written to `out` (capacity `cap`). On LLM_OK, *n_out is the
 * number of tokens written. If `cap` is too small, returns
 * LLM_ERR_BUFFER_TOO_SMALL and *n_out is the NEGATED number of tokens needed
 * (call again with a larger buffer). Also returns LLM_ERR_BAD_UTF8 for
 * invalid UTF-8 (the message gives the byte offset) and LLM_ERR_INVALID_ARG.
 * Thread-safe. */
llm_status llm_tokenize(const llm_model *model, const char *text, size_t len,
                        unsigned flags, llm_token *out, int32_t cap, int32_t *n_out);

/* Converts `n` token ids into UTF-8 text written to `buf` (capacity `cap`,
 * a NUL is appended when room remains after the text). With
 * `render_special` false, control tokens (BOS, <|im_end|>...) are left out;
 * with true they appear as their text. On LLM_OK, *n_out is the byte length
 * written (without the NUL). If `cap` is too small, returns
 * LLM_ERR_BUFFER_TOO_SMALL and *n_out is the NEGATED byte length needed.
 * Returns LLM_ERR_INVALID_ARG for an id outside [0, n_vocab). Thread-safe. */
llm_status llm_detokenize(const llm_model *model, const llm_token *tokens, int32_t n,
                          bool render_special, char *buf, size_t cap, int32_t *n_out);

/* Streaming detokenizer: feed tokens one by one, get text that never ends
 * in the middle of a UTF-8 sequence (bytes of an incomplete character are
 * held back until the character completes). One per stream; not shared
 * between threads. */
typedef struct llm_token_stream llm_token_stream;

/* Creates a streaming detokenizer for `model` (which must outlive it).
 * Returns LLM_OK, LLM_ERR_NO_MEMORY or LLM_ERR_INVALID_ARG. */
llm_status llm_token_stream_new(const llm_model *model, bool render_special,
                               llm_token_stream **out);

/* Adds one token. On LLM_OK, *text / *len receive the bytes that became
 * complete (possibly none: *len == 0). The text is owned by the detokenizer
 * and valid until its next call. LLM_ERR_INVALID_ARG for a bad id. */
llm_status llm_token_stream_push(llm_token_stream *d, llm_token tok,
                                const char **text, size_t *len);

/* Ends the stream: returns any bytes still held back (an incomplete
 * sequence becomes U+FFFD) and resets the detokenizer for a new stream. */
llm_status llm_token_stream_flush(llm_token_stream *d, const char **text, size_t *len);

/* Releases a detokenizer. NULL is harmless. */
void llm_token_stream_free(llm_token_stream *d);

/* ------------------------------------------------------------------------ */
/* Chat templates                                                           */
/* ------------------------------------------------------------------------ */

/* A message is an llm_chat_message (llama/types.h): role ("system", "user"
 * or "assistant") and content, both NUL-terminated UTF-8. */

/* Renders `n` messages with the model's chat template (its own Jinja
 * template string, run by a sandboxed interpreter with the recognised
 * template family as fallback; a model without a template gets ChatML),
 * byte for byte as Hugging Face transformers would, into `buf` (capacity `cap`, NUL appended when
 * room remains). With `add_assistant` true the text ends with the opening of
 * an assistant turn, ready for generation. Tokenize the result with
 * LLM_ENCODE_PARSE_SPECIAL. On LLM_OK, *n_out is the byte length. If `cap`
 * is too small: LLM_ERR_BUFFER_TOO_SMALL with *n_out = -(bytes needed).
 * Also LLM_ERR_UNSUPPORTED (template the engine cannot render),
 * LLM_ERR_BAD_UTF8, LLM_ERR_INVALID_ARG. Thread-safe. */
llm_status llm_chat_apply(const llm_model *model, const llm_chat_message *msgs, size_t n,
                          bool add_assistant, char *buf, size_t cap, int32_t *n_out);

/* Renders an OpenAI-style chat request with a Jinja chat template, as
 * transformers' apply_chat_template does with jinja2. `request_json` is a
 * JSON object: "messages" (each message may carry any keys: tool_calls,
 * tool_call_id, name, ...), "tools", "add_generation_prompt" (default true),
 * "bos_token"/"eos_token" (default: the model's token texts, or "" without
 * a model), and any other key, passed to the template as a variable. The
 * template is `template_str` when not NULL, else the model's own (`model`
 * may then not be NULL; with a template_str it may be NULL). No family
 * fallback: the interpreter renders it or the call fails.
 *
 * On LLM_OK, *out is the malloc()ed NUL-terminated text (the caller frees
 * it) and *out_len its byte length. On failure *out is NULL and, when
 * err_cap > 0, `err` holds the message (NUL-terminated, truncated to
 * err_cap), with the template line where known. Returns LLM_OK;
 * LLM_ERR_INVALID_ARG (bad arguments, a request that is not a JSON object,
 * or the template raised an error); LLM_ERR_BAD_FORMAT (template syntax
 * error); LLM_ERR_UNSUPPORTED (a template feature the interpreter lacks, or
 * the model has no template); LLM_ERR_NO_MEMORY. Thread-safe. */
llm_status llm_chat_apply_json(const llm_model *model, const char *template_str, const char *request_json,
                               char **out, size_t *out_len, char *err, size_t err_cap);

/* ------------------------------------------------------------------------ */
/* Sessions                                                                 */
/* ------------------------------------------------------------------------ */

/* How the next token is chosen from the logits. temperature <= 0 means
 * greedy (argmax), which ignores every other field. Names follow llama.cpp. */
typedef struct llm_sampling_params {
    uint64_t seed;          /* RNG seed; same seed + same inputs = same tokens */
    float temperature;      /* default 0.8 */
    int32_t top_k;          /* 0 = off; default 40 */
    float top_p;            /* 1.0 = off; default 0.95 */
    float min_p;            /* 0.0 = off; default 0.05 */
    float repeat_penalty;   /* 1.0 = off; default 1.0 */
    int32_t repeat_last_n;  /* window of past tokens the penalty sees; default 64 */
    float presence_penalty; /* 0 = off */
    float frequency_penalty;/* 0 = off */
} llm_sampling_params;

/* Default sampling (see each field; seed 0xC0FFEE). Never fails. */
llm_sampling_params llm_sampling_default_params(void);

typedef struct llm_session_params {
    int32_t n_ctx;               /* most tokens this session may hold; 0 = the model's n_ctx */
    llm_sampling_params sampling;
} llm_session_params;

/* Default session parameters. Never fails. */
llm_session_params llm_session_default_params(void);

/* Creates an empty session (one conversation) on `model`; `params` may be
 * NULL. The session reserves no KV blocks until tokens are prefilled; blocks
 * come from the model's shared pool. On success *out is owned by the caller
 * (llm_session_free()). Returns LLM_OK, LLM_ERR_NO_MEMORY,
 * LLM_ERR_STATE (the model was loaded vocab_only), LLM_ERR_UNSUPPORTED
 * (an encoder-only model has no sessions; use
 * llm_embed), LLM_ERR_INVALID_ARG (n_ctx larger than the model's). */
llm_status llm_session_new(llm_model *model, const llm_session_params *params,
                           llm_session **out);

/* Creates a new session continuing `src`'s conversation: it holds the same
 * tokens (same n_past), the same logits (if any are ready) and pending
 * sampled token, the same n_ctx, sampler params and stop strings. The KV
 * cache is not copied: the new session shares src's blocks copy-on-write
 * (a shared, partially filled block is copied only when one of the two
 * sessions writes into it), so forking is cheap and both sessions produce
 * exactly the logits an unforked session would. The sessions are
 * independent afterwards. A constraint (llm_session_set_constraint) is
 * copied with its state: the fork continues the structure where src is. The fork's sampler RNG and penalty history restart
 * from the sampling seed, and its streaming detokenizer and stop matcher
 * start empty. On success *out is owned by the caller (llm_session_free(),
 * before the model). On failure *out is NULL, src is unchanged and the
 * message is in llm_last_error(). Returns LLM_OK, LLM_ERR_NO_MEMORY,
 * LLM_ERR_INVALID_ARG (NULL argument). `src` must not be in use by another
 * thread during the call. */
llm_status llm_session_fork(const llm_session *src, llm_session **out);

/* Releases a session and returns its KV blocks to the pool (blocks other
 * sessions or the prefix cache still reference stay alive). NULL is
 * harmless. No other thread may be using the session, except that a
 * concurrent llm_session_cancel() must have returned before this. */
void llm_session_free(llm_session *s);

/* Forgets the conversation: the context becomes empty, the sampler state
 * (RNG, penalty history) restarts from the session's seed, stop strings and
 * sampler params are kept, and a pending cancel request is cleared. Full KV
 * blocks stay in the prefix cache, so prefilling the same prompt again is
 * cheap. Returns LLM_OK or LLM_ERR_INVALID_ARG. */
llm_status llm_session_reset(llm_session *s);

/* Replaces the sampler parameters (effective from the next token) and
 * restarts the sampler's RNG from params->seed. LLM_OK, LLM_ERR_INVALID_ARG. */
llm_status llm_session_set_sampler(llm_session *s, const llm_sampling_params *params);

/* Sets the stop strings (copied; n == 0 clears them). Generation ends with
 * LLM_END_OF_STREAM as soon as the generated text contains one of them; the
 * stop string itself and anything after it are not emitted, and text that
 * could be the beginning of a stop string is held back until it is known
 * not to be. LLM_OK, LLM_ERR_NO_MEMORY, LLM_ERR_INVALID_ARG (NULL or empty
 * string). */
llm_status llm_session_set_stop(llm_session *s, const char *const *stops, size_t n);

/* A constraint on generated text (structured output): a GBNF grammar
 * (llama.cpp's language; the grammar library's header llama/grammar.h
 * describes it) or a JSON Schema, converted to GBNF as llama.cpp converts
 * it (llama/json_schema.h lists the keywords it supports). Zero-initialize
 * and set one of grammar / json_schema. */
typedef struct llm_constraint {
    const char *grammar;     /* GBNF text with a `root` rule, NUL-terminated; or NULL */
    const char *json_schema; /* JSON Schema text, NUL-terminated; or NULL (not both) */
    bool lazy;               /* unconstrained until a trigger appears in the output, then
                                the grammar applies from the trigger on */
    const char *const *trigger_words; /* [n_trigger_words] non-empty UTF-8 strings */
    size_t n_trigger_words;
    const llm_token *trigger_tokens;  /* [n_trigger_tokens]: sampling one starts the grammar */
    size_t n_trigger_tokens;
} llm_constraint;

/* Sets the constraint every token the session samples must follow, or
 * clears it (c NULL, or neither grammar nor json_schema set). The strings
 * and lists are copied. Every sampled token is masked to those the
 * grammar allows next (the mask comes first in the sampler chain, before
 * penalties, top-k and the draw), and the sampled token advances the
 * grammar. End-of-generation tokens are allowed exactly where the grammar
 * can end, so when the structure is complete and nothing may follow, the
 * answer ends (LLM_END_OF_STREAM); max_tokens inside the structure simply
 * stops there, incomplete. Text the grammar accepts is what the
 * detokenizer prints; control tokens never match text.
 *
 * The constraint applies to each answer: a prefill that adds tokens (and
 * llm_session_reset) restarts it at the grammar's start for the next
 * generated token. llm_session_truncate to a point inside the current
 * answer rolls it back to that point, and llm_prefill(s, NULL, 0) (or
 * llm_prefill_context with exactly the current context) then continues the
 * answer from there; a cut before the answer's first constrained token
 * restarts it. llm_session_fork copies its state.
 * Setting or clearing it restarts the sampler's RNG from the seed (as
 * llm_session_set_sampler does).
 *
 * The model compiles grammars on its vocabulary and keeps the last few
 * compiled, so sessions and requests that reuse a grammar skip the parse
 * and share its token classes (the first mask in each new grammar state
 * walks the vocabulary; later ones take microseconds).
 *
 * Returns LLM_OK; LLM_ERR_INVALID_ARG (NULL session, both grammar and
 * json_schema, a NULL or empty trigger word, a trigger token out of range,
 * lazy without triggers); LLM_ERR_BAD_FORMAT (a GBNF syntax error, an
 * undefined rule, no root, left recursion; a schema that is not JSON or not
 * a schema); LLM_ERR_BAD_UTF8; LLM_ERR_UNSUPPORTED (a JSON Schema keyword
 * the converter does not support, a remote $ref, a grammar beyond the
 * grammar library's limits); LLM_ERR_EXHAUSTED (a schema too large);
 * LLM_ERR_NO_MEMORY. The message of an error in the constraint itself
 * starts with "grammar: ", "json_schema: " or "constraint: " and names the
 * problem, e.g. "grammar: line 1, column 9: ..." or "json_schema: keyword
 * 'uniqueItems' ... at #/properties/tags". On failure the previous
 * constraint stays. */
llm_status llm_session_set_constraint(llm_session *s, const llm_constraint *c);

/* Appends `n` tokens to the session's context and computes them, leaving the
 * logits of the last one ready for sampling. Full KV blocks whose token
 * prefix is already in the model's prefix cache are reused instead of
 * recomputed (see llm_telemetry.reused_tokens). n == 0 is allowed only on a
 * non-empty context. Returns:
 *   LLM_OK;
 *   LLM_CONTEXT_FULL -- n_past + n > n_ctx: nothing was computed and the
 *       session is unchanged (prompts are never silently truncated);
 *   LLM_CANCELLED -- llm_session_cancel() interrupted the work: the context
 *       holds a prefix of the tokens (llm_session_n_past() says how many);
 *       no logits are ready until the next prefill;
 *   LLM_ERR_EXHAUSTED -- the KV pool is full (other sessions hold it);
 *       session unchanged;
 *   LLM_ERR_INVALID_ARG (bad token id), LLM_ERR_BACKEND, LLM_ERR_NO_MEMORY. */
llm_status llm_prefill(llm_session *s, const llm_token *tokens, int32_t n);

/* Like llm_prefill(), but `tokens` is the WHOLE context wanted (typically
 * the full rendered conversation): the session keeps the longest common
 * prefix of its current context and `tokens`, drops the rest, and computes
 * only what remains. Multi-turn chat calls this each turn with the whole
 * conversation so earlier turns are never recomputed. Same returns as
 * llm_prefill(); on LLM_CONTEXT_FULL the session is unchanged. If `tokens`
 * equals the current context exactly, the last token is recomputed to have
 * logits ready. */
llm_status llm_prefill_context(llm_session *s, const llm_token *tokens, int32_t n);

/* Like llm_prefill(), and also returns the logits of EVERY token: row i of
 * `logits` (row-major [n][n_vocab] floats, caller-owned host memory of `cap`
 * floats, cap >= n * n_vocab) is the next-token distribution after
 * tokens[i], i.e. what llm_session_logits() would show after prefilling
 * tokens[0..i]. This is what perplexity and other scoring need; generation
 * only needs llm_prefill(). Example, scoring a text from an empty context:
 *
 *     float *lg = malloc(sizeof(float) * (size_t)n * n_vocab);
 *     llm_session_reset(s);
 *     if (llm_prefill_all_logits(s, toks, n, lg, (size_t)n * n_vocab) == LLM_OK)
 *         for (int32_t i = 0; i + 1 < n; i++)
 *             nll -= log_softmax(lg + (size_t)i * n_vocab)[toks[i + 1]];
 *
 * Any n is accepted: tokens are computed in forward passes of at most the
 * model's n_batch (llm_model_params), the same chunks llm_prefill() uses.
 * All n tokens are computed even when the prefix cache holds some of them
 * (their logits are needed); the full KV blocks written are still offered
 * to the prefix cache, and afterwards the session is exactly as after
 * llm_prefill() of the same tokens: context, KV blocks, the last row ready
 * in llm_session_logits(), decoding can follow. If a sampled token is pending
 * (llm_session_next_token() returned it and nothing computed it yet), it is
 * computed first, in the same forward pass as the first tokens, as
 * llm_prefill() does, and gets no row (this case allocates a scratch of one
 * forward pass's logits for the duration of the call).
 * Returns:
 *   LLM_OK -- all n rows written;
 *   LLM_ERR_INVALID_ARG -- NULL session, tokens or logits, n <= 0, or a
 *       token id outside [0, n_vocab); nothing computed;
 *   LLM_ERR_BUFFER_TOO_SMALL -- cap < n * n_vocab; nothing computed;
 *   LLM_CONTEXT_FULL, LLM_ERR_EXHAUSTED -- as llm_prefill(): session
 *       unchanged, nothing written to `logits`;
 *   LLM_CANCELLED -- as llm_prefill(): the context holds a prefix of the
 *       tokens (llm_session_n_past() says how far it got); rows of the tokens
 *       that entered the context are valid, later rows unspecified;
 *   LLM_ERR_BACKEND, LLM_ERR_NO_MEMORY. */
llm_status llm_prefill_all_logits(llm_session *s, const llm_token *tokens, int32_t n, float *logits,
                                  size_t cap);

/* Called by llm_decode() for each piece of generated text. `text` (not
 * NUL-terminated, may be empty for tokens that complete no character) is
 * valid only during the call. Return true to continue, false to stop
 * (llm_decode then returns LLM_OK). */
typedef bool (*llm_token_callback)(const char *text, size_t len, llm_token tok, void *user);

/* Generates up to `max_tokens` tokens (<= 0: until end of stream or a full
 * context), calling `cb` (may be NULL) for each. Returns LLM_OK (max_tokens
 * reached or the callback stopped), LLM_END_OF_STREAM (end-of-generation
 * token or stop string), LLM_CONTEXT_FULL, LLM_CANCELLED (the session stays
 * usable: call llm_decode again to continue, or prefill), LLM_ERR_STATE (no
 * logits ready: nothing was prefilled, or a prefill was cancelled),
 * LLM_ERR_BACKEND. The end-of-generation token is not emitted as text. */
llm_status llm_decode(llm_session *s, int32_t max_tokens, llm_token_callback cb, void *user);

/* Pull-style decoding: produces one token. On LLM_OK *tok is the token and
 * *text / *len the text that became ready (owned by the session, valid until
 * its next call; may be empty). On LLM_END_OF_STREAM *tok is the
 * end-of-generation token (or the token that completed a stop string) and
 * *text / *len hold the held-back text still to print (may be empty). The
 * other returns are those of llm_decode(). Any output pointer may be NULL. */
llm_status llm_session_next_token(llm_session *s, llm_token *tok,
                                  const char **text, size_t *len);

/* The logits after the last computed token ([n_vocab] floats, owned by the
 * session), or NULL when none are ready (nothing prefilled yet, or the
 * token sampled from them has not been computed). Valid until the next call
 * on the session. For inspection and tests; sampling does not need it. */
const float *llm_session_logits(const llm_session *s);

/* Asks the session's running (or, if none runs, next) prefill or decode to
 * stop. The call returns LLM_CANCELLED within one forward step, the flag is
 * then cleared, and the session stays consistent and usable. Safe to call
 * from any thread and from a signal handler (it only stores to an atomic
 * flag). */
void llm_session_cancel(llm_session *s);

/* Number of tokens in the session's context (computed into the KV cache). */
int32_t llm_session_n_past(const llm_session *s);

/* The session's context size (most tokens it may hold). */
int32_t llm_session_n_ctx(const llm_session *s);

/* Copies the context's token ids into `out` (capacity `cap`). Returns the
 * number copied, or the negated number needed if `cap` is too small. */
int32_t llm_session_tokens(const llm_session *s, llm_token *out, int32_t cap);

/* Shortens the context to its first `n_keep` tokens (n_keep <= n_past),
 * e.g. to regenerate an answer. No logits are ready afterwards. A
 * constraint rolls back with the cut (see llm_session_set_constraint). LLM_OK,
 * LLM_ERR_INVALID_ARG. A model with sliding-window layers (Gemma 3) keeps
 * only the last window of their K/V: a cut more than about a window before
 * the end recomputes the kept tokens here (from the prefix cache where it
 * can), and may then also fail as llm_prefill does (the context is then cut
 * back to what was computed). */
llm_status llm_session_truncate(llm_session *s, int32_t n_keep);

/* The message of the most recent failing call on `s`, or "". Never NULL. */
const char *llm_session_last_error(const llm_session *s);

/* ------------------------------------------------------------------------ */
/* Telemetry                                                                */
/* ------------------------------------------------------------------------ */

/* Figures for one session. "Last" fields describe the most recent prefill
 * and the generation since; "total" fields add up since the session was
 * created. Times are wall-clock milliseconds; rates are tokens per second
 * (0 when nothing was measured). */
typedef struct llm_telemetry {
    double load_ms;               /* time llm_load_model took */
    double ttft_ms;               /* last: prefill start to first generated token */
    int32_t prefill_tokens;       /* last: tokens actually computed by the prefill */
    int32_t reused_tokens;        /* last: tokens kept from the context or the prefix cache */
    double prefill_ms;            /* last */
    double prefill_tok_s;         /* last: prefill_tokens / prefill time */
    int32_t decode_tokens;        /* last: tokens generated since the prefill */
    double decode_ms;             /* last */
    double decode_tok_s;          /* last */
    int64_t total_prefill_tokens;
    int64_t total_reused_tokens;
    int64_t total_decode_tokens;
    int32_t n_past;               /* tokens in the context now */
    int32_t n_ctx;
    int32_t kv_blocks_used;       /* blocks in use in the model's pool (all sessions + cache) */
    int32_t kv_blocks_total;
    int32_t kv_swa_blocks_used;   /* a model with sliding-window layers (Gemma 3): blocks in use in
                                     those layers' own pool, which keeps only each session's last
                                     window (plus one pass); 0 without window layers */
    int32_t kv_swa_blocks_total;  /* blocks of that pool (0: none) */
    uint64_t kv_bytes;            /* bytes of the KV pools */
    uint64_t weights_bytes;
    uint64_t peak_memory_bytes;   /* process peak resident set size */
} llm_telemetry;

/* Fills *t for session `s`. LLM_OK or LLM_ERR_INVALID_ARG. */
llm_status llm_session_telemetry(const llm_session *s, llm_telemetry *t);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ENGINE_H */
