/*
 * llama/tokenizer.h -- text <-> token ids, usable on its own.
 *
 * Four tokenizer families, all bit-exact with their references:
 *   - byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM, StarCoder, DeepSeek,
 *     Falcon, MPT, Refact...): PCRE2 pre-tokenizer chosen by name, merges by
 *     rank over the 256 byte symbols;
 *   - SentencePiece-style BPE (Llama 2, Phi-3, Mistral, Gemma, Baichuan):
 *     score-ordered merges, U+2581 for spaces, byte fallback <0xXX>;
 *   - WordPiece (BERT): clean, lowercase, strip accents, split punctuation
 *     and CJK, greedy longest match with "##" continuations;
 *   - SentencePiece Unigram (T5, XLM-RoBERTa, nomic-bert-moe): the
 *     precompiled-charsmap normalizer, then the best-scoring segmentation
 *     (Viterbi), UNK for uncovered characters.
 *
 * A tokenizer is built from a plain vocabulary spec, from a GGUF file's
 * tokenizer.ggml.* metadata (read with llama-gguf, which this library links)
 * or from a Hugging Face tokenizer.json (read by a JSON reader of our own:
 * no JSON library is linked). llm_tokenizer_load() takes any of the files.
 * Usage:
 *
 *     llm_tokenizer *tok = NULL;
 *     if (llm_tokenizer_load("model.gguf", &tok) != LLM_OK) {  // or tokenizer.json
 *         fprintf(stderr, "%s\n", llm_tokenizer_last_error());
 *         return 1;
 *     }
 *     llm_token ids[256];
 *     int32_t n = 0;
 *     llm_status st = llm_tokenizer_encode(tok, "Hello world", 11,
 *                                          LLM_TOKENIZE_ADD_SPECIAL, ids, 256, &n);
 *     char text[1024];
 *     size_t len = 0;
 *     if (st == LLM_OK)
 *         st = llm_tokenizer_decode(tok, ids, n, 0, text, sizeof text, &len);
 *     llm_tokenizer_free(tok);
 *
 * Threads: a tokenizer is immutable after creation; any number of threads
 * may encode and decode with the same handle at once. A detokenizer stream
 * belongs to one thread at a time. Error messages are thread-local.
 *
 * This header includes only standard C headers, llama/status.h and
 * llama/types.h (the GGUF handle is only declared), and compiles as C11 and
 * inside C++17.
 */
#ifndef LLAMA_TOKENIZER_H
#define LLAMA_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"
#include "llama/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* llm_token and LLM_TOKEN_NULL ("none") come from llama/types.h. */

/* The library's version string, e.g. "0.1.0". */
const char *llm_tokenizer_version(void);

/* The text of the last error raised by this library on the calling thread.
 * Never NULL; "" when no error happened yet. The text stays valid until the
 * next failing call on the same thread. */
const char *llm_tokenizer_last_error(void);

/* Tokenizer families. Values match nothing on disk; the GGUF names are
 * "gpt2" (BPE), "llama" (SPM), "bert" (WPM), "gemma4" (HF_BPE) and "t5" (UGM). */
typedef enum llm_tokenizer_type {
    LLM_TOKENIZER_NONE = 0,
    LLM_TOKENIZER_BPE = 1, /* byte-level BPE, merges ranked by list order */
    LLM_TOKENIZER_SPM = 2, /* SentencePiece BPE: merges ordered by token score */
    LLM_TOKENIZER_WPM = 3, /* WordPiece */
    LLM_TOKENIZER_HF_BPE = 4, /* character BPE with ranked merges and byte fallback
                                 (a tokenizer.json "BPE" model without ByteLevel) */
    LLM_TOKENIZER_UGM = 5     /* SentencePiece Unigram (T5, XLM-RoBERTa): Viterbi over token
                                 scores after the precompiled-charsmap normalizer */
} llm_tokenizer_type;

/* Token types; the values are the ones GGUF stores in tokenizer.ggml.token_type. */
typedef enum llm_token_type {
    LLM_TOKEN_TYPE_UNDEFINED = 0,
    LLM_TOKEN_TYPE_NORMAL = 1,
    LLM_TOKEN_TYPE_UNKNOWN = 2,
    LLM_TOKEN_TYPE_CONTROL = 3,      /* special: BOS, EOS, <|im_start|>... */
    LLM_TOKEN_TYPE_USER_DEFINED = 4, /* added token, always matched as a whole */
    LLM_TOKEN_TYPE_UNUSED = 5,
    LLM_TOKEN_TYPE_BYTE = 6          /* SPM byte fallback piece <0xXX> */
} llm_token_type;

/* A plain vocabulary description. Nothing here is retained: creation copies
 * every string and array. Start from llm_vocab_spec_init(), then fill in. */
typedef struct llm_vocab_spec {
    llm_tokenizer_type type;
    int32_t n_tokens;
    const char *const *tokens;  /* [n_tokens] NUL-terminated UTF-8 pieces, as stored
                                   (byte-level BPE: byte-to-unicode mapped; SPM: U+2581
                                   for space; WPM: "##" prefix for continuations) */
    const float *scores;        /* [n_tokens] or NULL (all 0). SPM merge priority. */
    const int32_t *token_types; /* [n_tokens] llm_token_type values, or NULL (all normal) */
    int32_t n_merges;
    const char *const *merges;  /* [n_merges] "left right", best first (BPE, HF_BPE) */
    const char *const *merges_right; /* optional [n_merges]: when set, merges[i] is only the
                                        left piece and this the right one (pieces that
                                        contain spaces) */
    const char *pre;            /* pre-tokenizer name (GGUF tokenizer.ggml.pre), NULL = "default" */
    llm_token bos, eos, eot, eom, unk, pad, sep, cls, mask; /* LLM_TOKEN_NULL when absent */
    int add_bos;          /* 1/0, or -1: the family's default (SPM, WPM: yes; BPE: per pre;
                             UGM: no) */
    int add_eos;          /* 1/0, or -1: the family's default (WPM adds [SEP], UGM EOS; else no) */
    int add_space_prefix; /* 1/0, or -1: default (SPM, UGM: yes, others: no) */
    int ignore_merges;    /* 1/0, or -1: default per pre (llama3: yes). A pre-token that
                             is itself a token is emitted without merging. */
    int byte_fallback;    /* HF_BPE: characters not in the vocabulary become <0xXX> tokens */
    int wpm_phantom_space;/* WPM vocab in llama.cpp's GGUF form: word-initial pieces start
                             with U+2581 and continuations have no "##". */
    int lowercase;        /* WPM: lowercase + strip accents (1, default) or not (0) */
    const unsigned char *strip; /* optional [n_tokens]: LLM_TOKEN_LSTRIP | LLM_TOKEN_RSTRIP per
                                   token, or NULL (none): a special token matched in the
                                   text swallows the whitespace on its left / right
                                   (tokenizer.json's lstrip / rstrip; llama.cpp's token
                                   attributes, e.g. RSTRIP on Phi-3's special tokens) */
    /* UGM only (GGUF tokenizer.ggml.precompiled_charsmap and
     * tokenizer.ggml.remove_extra_whitespaces): */
    const void *precompiled_charsmap; /* SentencePiece's normalizer: u32 LE trie size, the
                                         double-array trie, NUL-terminated replacements;
                                         NULL = no normalization */
    size_t precompiled_charsmap_len;
    int remove_extra_whitespaces; /* 1/0, or -1: default (no). Drop leading/trailing spaces and
                                     squeeze runs of spaces. */
} llm_vocab_spec;

#define LLM_TOKEN_LSTRIP 1u
#define LLM_TOKEN_RSTRIP 2u

/* Fill *spec with an empty vocabulary: no tokens, every special id
 * LLM_TOKEN_NULL, every tri-state flag -1 (the family's default). */
void llm_vocab_spec_init(llm_vocab_spec *spec);

typedef struct llm_tokenizer llm_tokenizer;

/* Build a tokenizer from *spec. On success *out owns a new handle that the
 * caller frees with llm_tokenizer_free(). Returns LLM_OK,
 * LLM_ERR_INVALID_ARG (NULL pointers, no tokens, out-of-range special ids),
 * LLM_ERR_BAD_FORMAT (a merge that is not "left right"), LLM_ERR_UNSUPPORTED
 * (unknown pre-tokenizer name or type), LLM_ERR_NO_MEMORY. On failure *out is
 * NULL and llm_tokenizer_last_error() says why.
 * Special-token text is found as llama.cpp finds it (a spec is a GGUF
 * vocabulary): special tokens longest first over the whole text, and the
 * lstrip/rstrip attributes take ASCII whitespace only; a tokenizer.json
 * tokenizer (below) follows HF instead: the leftmost match first, Unicode
 * whitespace. The two differ only where special-token texts overlap or a
 * stripping token meets non-ASCII whitespace. */
llm_status llm_tokenizer_create(const llm_vocab_spec *spec, llm_tokenizer **out);

/* Build a tokenizer from a Hugging Face tokenizer.json held in memory
 * (json[0..len), need not be NUL-terminated) or read from a file.
 * Supported: models BPE (byte-level, or by characters with byte fallback),
 * WordPiece and Unigram (without byte_fallback; normalizers Precompiled,
 * Strip and Replace(" {2,}", U+2581) after it, pre-tokenizer Metaspace with
 * prepend_scheme "always" or "never"; encoded as HF tokenizers does: the
 * charsmap applied per grapheme cluster, every vocab piece matchable);
 * normalizers NFC (byte-level BPE), Prepend and Replace of U+2581 (character BPE), BertNormalizer, Lowercase, NFD, StripAccents
 * (WordPiece), Sequence of those; pre-tokenizers ByteLevel, Split (regex or
 * string, behaviour Isolated), Digits, BertPreTokenizer, Metaspace, Sequence
 * of those; post-processors TemplateProcessing (one token before and/or after
 * the text), BertProcessing, RobertaProcessing, ByteLevel; added_tokens with
 * their special, lstrip and rstrip attributes (single_word and normalized are
 * ignored). Decoders are not read: decoding follows the model family.
 * Anything else (WordLevel, NFKC, Whitespace, Split
 * with another behaviour...) is LLM_ERR_UNSUPPORTED with the kind named in
 * the message. Returns as llm_tokenizer_create(), plus LLM_ERR_IO (file) and
 * LLM_ERR_BAD_FORMAT (invalid JSON or schema). */
llm_status llm_tokenizer_from_hf_json(const char *json, size_t len, llm_tokenizer **out);
llm_status llm_tokenizer_from_hf_json_file(const char *path, llm_tokenizer **out);

/* Build a tokenizer from a GGUF file's tokenizer.ggml.* metadata (llama/gguf.h;
 * a model or a vocab-only file): tokenizer.ggml.model "gpt2" (byte-level
 * BPE), "llama" (SentencePiece BPE), "bert" (WordPiece), "gemma4"
 * (SentencePiece-style BPE, pre-tokenizer "gemma4"), "t5" (Unigram); tokens,
 * scores, token_type, merges, pre, the special ids and add_* flags, and the
 * per-model token attributes llama.cpp sets by name. g is only read during
 * the call (nothing is borrowed; close it afterwards). Returns LLM_OK;
 * LLM_ERR_INVALID_ARG (NULL g or out); LLM_ERR_NOT_FOUND (no
 * tokenizer.ggml.model or tokens); LLM_ERR_UNSUPPORTED (another tokenizer
 * model, named in the message); LLM_ERR_BAD_FORMAT (a key of the wrong type
 * or size); LLM_ERR_NO_MEMORY; or what llm_tokenizer_create() returns. On
 * failure *out is NULL and llm_tokenizer_last_error() says why. Thread-safe. */
struct llm_gguf;
llm_status llm_tokenizer_from_gguf(const struct llm_gguf *g, llm_tokenizer **out);

/* The same from a GGUF file opened at path, or from the bytes of one in
 * memory (data[0..size) is only read during the call). Returns as
 * llm_tokenizer_from_gguf(), plus LLM_ERR_IO (cannot open or map the file)
 * and LLM_ERR_BAD_FORMAT / LLM_ERR_UNSUPPORTED for a file llama-gguf
 * rejects (its message is copied into llm_tokenizer_last_error()).
 * Thread-safe. */
llm_status llm_tokenizer_from_gguf_file(const char *path, llm_tokenizer **out);
llm_status llm_tokenizer_from_gguf_buffer(const void *data, size_t size, llm_tokenizer **out);

/* Build the tokenizer of path, whatever holds it: a Hugging Face model
 * folder (its tokenizer.json), a tokenizer.json file (a file whose first
 * non-blank byte is '{'), or else a GGUF file. No weights are read. Returns
 * as llm_tokenizer_from_hf_json_file() or llm_tokenizer_from_gguf_file();
 * LLM_ERR_INVALID_ARG for a NULL argument. The message names the path. On
 * failure *out is NULL. Thread-safe. */
llm_status llm_tokenizer_load(const char *path, llm_tokenizer **out);

/* Free a tokenizer. NULL is harmless. */
void llm_tokenizer_free(llm_tokenizer *tok);

/* Flags for llm_tokenizer_encode(). */
enum {
    LLM_TOKENIZE_ADD_SPECIAL = 1u << 0,  /* add BOS/EOS (CLS/SEP) as the vocabulary asks */
    LLM_TOKENIZE_PARSE_SPECIAL = 1u << 1 /* special-token text ("<|im_end|>") becomes the
                                            special token; without it, only user-defined
                                            added tokens are matched as a whole */
};

/* Encode text[0..len) (UTF-8, need not be NUL-terminated) into token ids.
 * On LLM_OK, *n_out is the number of ids written to out[0..cap).
 * When cap is too small, returns LLM_ERR_BUFFER_TOO_SMALL, out is
 * unspecified, and *n_out is the number of ids needed (call again with that
 * capacity). Other returns: LLM_ERR_INVALID_ARG (NULL tok/n_out, NULL text
 * with len > 0, NULL out with cap > 0), LLM_ERR_BAD_UTF8 (the message holds
 * the byte offset of the first bad byte), LLM_ERR_NO_MEMORY. out may be NULL
 * with cap 0 to measure. */
llm_status llm_tokenizer_encode(const llm_tokenizer *tok, const char *text, size_t len,
                                unsigned flags, llm_token *out, int32_t cap, int32_t *n_out);

/* Flags for llm_tokenizer_decode() and the detokenizer stream. */
enum {
    LLM_DETOKENIZE_SKIP_SPECIAL = 1u << 0, /* control tokens (BOS, EOS...) produce no text */
    LLM_DETOKENIZE_KEEP_LEADING_SPACE = 1u << 1 /* SPM: keep the space that the dummy
                                                   prefix puts before the first word */
};

/* Decode ids[0..n) to UTF-8 text in out[0..cap). On LLM_OK, *n_out is the
 * byte length written, and a NUL follows it. When cap < length + 1, returns
 * LLM_ERR_BUFFER_TOO_SMALL and *n_out is the length needed (without the NUL).
 * Control tokens decode to their text unless LLM_DETOKENIZE_SKIP_SPECIAL.
 * Byte sequences that are not valid UTF-8 (possible with byte tokens) are
 * written as they are. The space the SPM dummy prefix (or a tokenizer.json
 * Prepend/Metaspace) put before the first word is removed, unless
 * LLM_DETOKENIZE_KEEP_LEADING_SPACE. WordPiece joins words with one space and
 * "##" pieces with none (HF's extra clean-up around punctuation is not done).
 * LLM_ERR_INVALID_ARG: an id out of range or NULL args. */
llm_status llm_tokenizer_decode(const llm_tokenizer *tok, const llm_token *ids, int32_t n,
                                unsigned flags, char *out, size_t cap, size_t *n_out);

/* The decoded bytes of one token (byte-level mapping undone, U+2581 made a
 * space, <0xXX> made a byte; no leading-space stripping). *len receives the
 * length. Returns NULL for an id out of range. The pointer lives as long as tok. */
const char *llm_tokenizer_token_bytes(const llm_tokenizer *tok, llm_token id, size_t *len);

/* Streaming detokenizer: feed ids one at a time, get back only complete
 * UTF-8 text. Bytes of a character split across tokens (byte-level BPE, SPM
 * byte fallback) are held until the character is complete; bytes that can
 * never form a valid character are emitted as U+FFFD. */
typedef struct llm_detokenizer llm_detokenizer;

/* Create a stream over tok (which must outlive it), with LLM_DETOKENIZE_*
 * flags. Returns LLM_OK, LLM_ERR_INVALID_ARG or LLM_ERR_NO_MEMORY. */
llm_status llm_detokenizer_create(const llm_tokenizer *tok, unsigned flags, llm_detokenizer **out);

/* Free a stream. NULL is harmless. */
void llm_detokenizer_free(llm_detokenizer *d);

/* Forget held bytes and start a new text (the SPM leading space is stripped
 * again from the next word). */
void llm_detokenizer_reset(llm_detokenizer *d);

/* Push one id. On LLM_OK, *text and *len give the newly completed UTF-8 text
 * (possibly empty, *len == 0), NUL-terminated, owned by the stream and valid
 * until the next call on it. Returns LLM_ERR_INVALID_ARG (bad id or NULLs),
 * LLM_ERR_NO_MEMORY. */
llm_status llm_detokenizer_push(llm_detokenizer *d, llm_token id, const char **text, size_t *len);

/* End of text: emit what is still held (an incomplete character becomes
 * U+FFFD) and reset. Same contract as llm_detokenizer_push(). */
llm_status llm_detokenizer_flush(llm_detokenizer *d, const char **text, size_t *len);

/* Vocabulary queries. Out-of-range ids give NULL / UNDEFINED / 0. */
llm_tokenizer_type llm_tokenizer_get_type(const llm_tokenizer *tok);
int32_t llm_tokenizer_n_tokens(const llm_tokenizer *tok);
const char *llm_tokenizer_token_text(const llm_tokenizer *tok, llm_token id); /* as stored */
llm_token_type llm_tokenizer_token_type(const llm_tokenizer *tok, llm_token id);
float llm_tokenizer_token_score(const llm_tokenizer *tok, llm_token id);
/* The id whose stored text is text[0..len), or LLM_TOKEN_NULL. */
llm_token llm_tokenizer_find(const llm_tokenizer *tok, const char *text, size_t len);
/* The pre-tokenizer name in use ("default" when none was given). */
const char *llm_tokenizer_pre_name(const llm_tokenizer *tok);

typedef enum llm_special {
    LLM_SPECIAL_BOS, LLM_SPECIAL_EOS, LLM_SPECIAL_EOT, LLM_SPECIAL_EOM, LLM_SPECIAL_UNK,
    LLM_SPECIAL_PAD, LLM_SPECIAL_SEP, LLM_SPECIAL_CLS, LLM_SPECIAL_MASK
} llm_special;
/* A special token id, or LLM_TOKEN_NULL when the vocabulary has none. */
llm_token llm_tokenizer_special(const llm_tokenizer *tok, llm_special which);
/* Whether encode with LLM_TOKENIZE_ADD_SPECIAL adds BOS (or CLS). */
int llm_tokenizer_adds_bos(const llm_tokenizer *tok);
/* Whether id ends generation (EOS, EOT or EOM). */
int llm_tokenizer_is_eog(const llm_tokenizer *tok, llm_token id);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_TOKENIZER_H */
