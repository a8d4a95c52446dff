/*
 * llama/models.h -- model files and model descriptors.
 *
 * Three layers, each usable on its own:
 *
 *   1. File readers. llm_gguf_* reads a GGUF file (versions 2 and 3):
 *      header, every metadata value type (nested arrays, string arrays),
 *      tensor infos, alignment and data section. llm_safetensors_* reads one
 *      SafeTensors file. Both memory-map the file read-only and validate
 *      every count, length, shape, offset and size against the file size
 *      (overflow-safe) before use: a malformed file is an error with a
 *      message naming the problem and the byte offset, never a crash.
 *
 *   2. The model descriptor (llm_model_desc): the format-independent view the
 *      engine works from: architecture tag, hyper-parameters, and a tensor
 *      map of GGUF-style names (blk.N.attn_q.weight) to type, shape and a
 *      pointer into the mapped file. Built from a GGUF file or a Hugging Face
 *      folder (config.json + model.safetensors or a sharded index).
 *
 *   3. An architecture registry (internal) that knows, per tag ("llama"),
 *      which hyper-parameter keys to read and which tensors must exist with
 *      which shapes; unsupported architectures and weight types are reported
 *      by name.
 *
 * Usage:
 *
 *     llm_gguf *g;
 *     if (llm_gguf_open("model.gguf", &g) != LLM_OK) {
 *         fprintf(stderr, "%s\n", llm_models_last_error());
 *         return 1;
 *     }
 *     uint32_t n_layer;
 *     llm_gguf_get_u32(g, "llama.block_count", &n_layer);
 *     llm_gguf_value toks;                                  // string array
 *     if (llm_gguf_get_array(g, "tokenizer.ggml.tokens", &toks) == LLM_OK) {
 *         const char *s; size_t len;
 *         llm_gguf_array_string(&toks, 42, &s, &len);       // O(1)
 *     }
 *     const llm_gguf_tensor *t = llm_gguf_find_tensor(g, "token_embd.weight");
 *     llm_gguf_close(g);
 *
 *     llm_model_desc *d;
 *     if (llm_model_desc_load("model.gguf", &d) == LLM_OK) {  // or a HF folder
 *         const llm_model_hparams *hp = llm_model_desc_hparams(d);
 *         const llm_model_tensor *wq = llm_model_desc_find_tensorf(d, "blk.%d.attn_q.weight", 0);
 *         llm_model_desc_free(d);
 *     }
 *
 * Errors: every function returning llm_status also leaves a message for the
 * calling thread, read with llm_models_last_error(). Pointers returned by a
 * reader or descriptor (names, strings, tensor data) stay valid until that
 * object is closed/freed. Objects are immutable after open, so concurrent
 * reads from several threads are safe.
 *
 * Byte order: GGUF and SafeTensors are little-endian; llm supports
 * little-endian hosts only. Pointers into the mapping (array data, string
 * bytes, tensor data) can be UNALIGNED for their element type: read them
 * with memcpy or the copy helpers below.
 */
#ifndef LLAMA_MODELS_H
#define LLAMA_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "llama/dtype.h"
#include "llama/rope.h"
#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". */
const char *llm_models_version(void);

/* The message of the last error raised by a llm_gguf_*, llm_safetensors_*
 * or llm_model_* function on the calling thread ("" if none yet). The text
 * names the file, the problem and, for format errors, the byte offset, e.g.
 * "gguf: m.gguf: tensor 'blk.0.attn_q.weight': data [64, 4160) extends past
 * end of file (4096 bytes) at byte offset 1234". Valid until the next call
 * into this library on the same thread. */
const char *llm_models_last_error(void);

/* ------------------------------------------------------------------------ */
/* GGUF reader                                                              */
/* ------------------------------------------------------------------------ */

typedef struct llm_gguf llm_gguf; /* an open, validated, read-only GGUF file */

/* GGUF metadata value types (GGUF's numbering). */
typedef enum llm_gguf_type {
    LLM_GGUF_UINT8 = 0,
    LLM_GGUF_INT8 = 1,
    LLM_GGUF_UINT16 = 2,
    LLM_GGUF_INT16 = 3,
    LLM_GGUF_UINT32 = 4,
    LLM_GGUF_INT32 = 5,
    LLM_GGUF_FLOAT32 = 6,
    LLM_GGUF_BOOL = 7,
    LLM_GGUF_STRING = 8,
    LLM_GGUF_ARRAY = 9,
    LLM_GGUF_UINT64 = 10,
    LLM_GGUF_INT64 = 11,
    LLM_GGUF_FLOAT64 = 12
} llm_gguf_type;

/* The name of a metadata value type ("uint32", "string", "array"), or
 * "invalid". */
const char *llm_gguf_type_name(llm_gguf_type t);

/* A view of one metadata value, inside the mapping. Filled by the getters
 * below; a plain struct the caller keeps on the stack. */
typedef struct llm_gguf_value {
    llm_gguf_type type;      /* the value's type */
    llm_gguf_type elem_type; /* ARRAY only: the type of its elements */
    uint64_t count;          /* ARRAY: number of elements; STRING: length in bytes; else 1 */
    const void *data;        /* scalar: its little-endian bytes; STRING: its bytes (NOT
                                NUL-terminated); ARRAY of fixed-size elements: the first
                                element, elements packed (maybe unaligned); other ARRAYs:
                                the first element's encoding */
    const void *priv_;       /* private: element index of string/array arrays */
} llm_gguf_value;

/* Opens, maps (read-only) and validates the GGUF file at path. On success
 * *out receives a handle to free with llm_gguf_close. Validation covers: magic,
 * version (2 or 3; 1 and big-endian files are rejected with a clear message),
 * every count and length against the bytes left in the file, metadata keys
 * (valid UTF-8, non-empty, unique), value types, array nesting (at most 8
 * deep), general.alignment (uint32, power of two), tensor infos (unique
 * valid-UTF-8 names, 1..4 dims, non-negative dims whose product fits, a known
 * ggml type (any of GGUF's 0..41, including ones llm cannot compute with),
 * first dim a multiple of the block size, data offset aligned and data inside
 * the file). String values are not UTF-8-checked (some vocabularies hold raw
 * bytes). Open is O(file metadata): it builds an index so that key lookup,
 * tensor lookup and string-array element access are O(1) (a string array's
 * index keeps every 16th element's position, so an access skips at most 15
 * string headers; 0.4 MiB for a 128k-token vocabulary with 280k merges).
 * Returns LLM_OK; LLM_ERR_INVALID_ARG (NULL args); LLM_ERR_IO (cannot open,
 * stat or map); LLM_ERR_BAD_FORMAT (malformed: see the message);
 * LLM_ERR_UNSUPPORTED (version 1, big-endian); LLM_ERR_NO_MEMORY.
 * On failure *out is set to NULL. */
llm_status llm_gguf_open(const char *path, llm_gguf **out);

/* As llm_gguf_open, over a caller-owned buffer of len bytes (no copy: the
 * buffer must outlive the handle). name is used in messages (may be NULL).
 * Used by tests and fuzzers. */
llm_status llm_gguf_open_memory(const void *buf, size_t len, const char *name, llm_gguf **out);

/* Unmaps and frees. NULL is harmless. */
void llm_gguf_close(llm_gguf *g);

/* The format version (2 or 3). */
uint32_t llm_gguf_version(const llm_gguf *g);

/* general.alignment, or 32 if the key is absent. */
uint32_t llm_gguf_alignment(const llm_gguf *g);

/* Byte offset of the tensor data section (aligned end of the tensor infos). */
uint64_t llm_gguf_data_offset(const llm_gguf *g);

/* Size of the file in bytes and the start of its mapping. */
uint64_t llm_gguf_file_size(const llm_gguf *g);
const void *llm_gguf_file_data(const llm_gguf *g);

/* --- metadata --- */

/* Number of metadata key/value pairs. */
int64_t llm_gguf_kv_count(const llm_gguf *g);

/* Key of pair i (0 <= i < count), NUL-terminated, owned by g; NULL if i is
 * out of range. */
const char *llm_gguf_kv_key(const llm_gguf *g, int64_t i);

/* Value of pair i into *out. LLM_OK or LLM_ERR_INVALID_ARG (i out of range). */
llm_status llm_gguf_kv_value(const llm_gguf *g, int64_t i, llm_gguf_value *out);

/* Index of key, or -1 if absent. O(1). */
int64_t llm_gguf_find_key(const llm_gguf *g, const char *key);

/* Value of key into *out. LLM_OK or LLM_ERR_NOT_FOUND. */
llm_status llm_gguf_get(const llm_gguf *g, const char *key, llm_gguf_value *out);

/* Typed getters by key. The integer getters accept a value of ANY integer
 * type (uint8..int64) and BOOL that fits the requested type (converters
 * disagree on e.g. uint32 vs int32 for token ids); the float getters accept
 * FLOAT32 and FLOAT64; get_bool accepts BOOL only; get_str accepts STRING
 * only and returns a pointer into the mapping (NOT NUL-terminated) and its
 * length. Returns LLM_OK; LLM_ERR_NOT_FOUND (no such key);
 * LLM_ERR_BAD_FORMAT (wrong type, or out of range: message says which).
 * *out is untouched on error. */
llm_status llm_gguf_get_u8(const llm_gguf *g, const char *key, uint8_t *out);
llm_status llm_gguf_get_i8(const llm_gguf *g, const char *key, int8_t *out);
llm_status llm_gguf_get_u16(const llm_gguf *g, const char *key, uint16_t *out);
llm_status llm_gguf_get_i16(const llm_gguf *g, const char *key, int16_t *out);
llm_status llm_gguf_get_u32(const llm_gguf *g, const char *key, uint32_t *out);
llm_status llm_gguf_get_i32(const llm_gguf *g, const char *key, int32_t *out);
llm_status llm_gguf_get_u64(const llm_gguf *g, const char *key, uint64_t *out);
llm_status llm_gguf_get_i64(const llm_gguf *g, const char *key, int64_t *out);
llm_status llm_gguf_get_f32(const llm_gguf *g, const char *key, float *out);
llm_status llm_gguf_get_f64(const llm_gguf *g, const char *key, double *out);
llm_status llm_gguf_get_bool(const llm_gguf *g, const char *key, int *out);
llm_status llm_gguf_get_str(const llm_gguf *g, const char *key, const char **s, size_t *len);
/* ARRAY only. */
llm_status llm_gguf_get_array(const llm_gguf *g, const char *key, llm_gguf_value *out);

/* Typed reads of a value view (from kv_value, get, or array_get), with the
 * same type rules as the by-key getters. LLM_OK or LLM_ERR_BAD_FORMAT. */
llm_status llm_gguf_value_i64(const llm_gguf_value *v, int64_t *out);
llm_status llm_gguf_value_u64(const llm_gguf_value *v, uint64_t *out);
llm_status llm_gguf_value_f64(const llm_gguf_value *v, double *out);
llm_status llm_gguf_value_bool(const llm_gguf_value *v, int *out);
llm_status llm_gguf_value_str(const llm_gguf_value *v, const char **s, size_t *len);

/* Element i of an array value (0 <= i < arr->count) into *out. O(1) for
 * every element type, including strings and nested arrays. Returns LLM_OK;
 * LLM_ERR_INVALID_ARG (not an array, or i out of range). */
llm_status llm_gguf_array_get(const llm_gguf_value *arr, uint64_t i, llm_gguf_value *out);

/* Shortcut: string element i of a string array (pointer into the mapping,
 * not NUL-terminated, and its length). LLM_OK or LLM_ERR_INVALID_ARG (not a
 * string array, or i out of range). */
llm_status llm_gguf_array_string(const llm_gguf_value *arr, uint64_t i, const char **s, size_t *len);

/* Copies elements [first, first + n) of a numeric array, converting each to
 * the destination type: array_f32 accepts FLOAT32/FLOAT64 and integer arrays,
 * array_i32 accepts integer and BOOL arrays whose values fit int32.
 * Returns LLM_OK; LLM_ERR_INVALID_ARG (range outside the array, NULL dst);
 * LLM_ERR_BAD_FORMAT (element type not convertible or a value out of range). */
llm_status llm_gguf_array_f32(const llm_gguf_value *arr, uint64_t first, uint64_t n, float *dst);
llm_status llm_gguf_array_i32(const llm_gguf_value *arr, uint64_t first, uint64_t n, int32_t *dst);

/* --- tensors --- */

/* One tensor info. ne[0] is the innermost (contiguous) dimension, as in
 * GGUF; unused trailing dims are 1. */
typedef struct llm_gguf_tensor {
    const char *name;    /* NUL-terminated, owned by g */
    uint32_t type;       /* GGUF/ggml type id; llm_dtype_is_known(type) tells if llm computes with it */
    uint32_t n_dims;     /* 1..4 */
    int64_t ne[4];       /* [n_dims] dims, innermost first; rest 1 */
    uint64_t offset;     /* absolute byte offset of the data in the file */
    uint64_t size;       /* bytes of data */
    const void *data;    /* offset into the mapping (aligned to general.alignment
                            relative to the file start) */
} llm_gguf_tensor;

/* The name of a ggml tensor type id ("Q4_K", "IQ2_XXS"), or NULL if the id
 * is not a ggml type. */
const char *llm_gguf_tensor_type_name(uint32_t type);

/* Number of tensors. */
int64_t llm_gguf_tensor_count(const llm_gguf *g);

/* Tensor i (0 <= i < count) in file order, or NULL if out of range. */
const llm_gguf_tensor *llm_gguf_tensor_at(const llm_gguf *g, int64_t i);

/* Tensor by name, or NULL. O(1). */
const llm_gguf_tensor *llm_gguf_find_tensor(const llm_gguf *g, const char *name);

/* ------------------------------------------------------------------------ */
/* SafeTensors reader                                                       */
/* ------------------------------------------------------------------------ */

typedef struct llm_safetensors llm_safetensors;

/* One tensor. shape[] is in SafeTensors (row-major, outermost first) order;
 * ne[] is the same shape reversed into GGUF order (ne[0] innermost). */
typedef struct llm_st_tensor {
    const char *name;    /* NUL-terminated, owned by the reader */
    const char *dtype;   /* SafeTensors dtype string ("F32", "BF16", "I64", ...) */
    int type;            /* llm_dtype for F32/F16/BF16, -1 for any other dtype */
    uint32_t n_dims;     /* 0..4 (a 0-dim tensor is a scalar) */
    int64_t shape[4];    /* [n_dims], outermost first */
    int64_t ne[4];       /* reversed shape, rest 1 */
    uint64_t offset;     /* absolute byte offset in the file */
    uint64_t size;       /* bytes */
    const void *data;    /* into the mapping; may be unaligned */
} llm_st_tensor;

/* Opens, maps and validates one .safetensors file: 8-byte header length,
 * JSON header (UTF-8, an object), per tensor dtype/shape/data_offsets with
 * shape product x element size == end - begin, data inside the file, no
 * overlapping tensors, names unique. Tensors with more than 4 dims are
 * rejected. Returns LLM_OK, LLM_ERR_INVALID_ARG, LLM_ERR_IO,
 * LLM_ERR_BAD_FORMAT, LLM_ERR_UNSUPPORTED, LLM_ERR_NO_MEMORY; *out NULL on
 * failure. */
llm_status llm_safetensors_open(const char *path, llm_safetensors **out);

/* As above over a caller-owned buffer (no copy; keep it alive). */
llm_status llm_safetensors_open_memory(const void *buf, size_t len, const char *name,
                                       llm_safetensors **out);

/* NULL is harmless. */
void llm_safetensors_close(llm_safetensors *st);

int64_t llm_safetensors_tensor_count(const llm_safetensors *st);
/* In header order of data offsets; NULL if out of range. */
const llm_st_tensor *llm_safetensors_tensor_at(const llm_safetensors *st, int64_t i);
const llm_st_tensor *llm_safetensors_find_tensor(const llm_safetensors *st, const char *name);

/* The "__metadata__" string map (may be empty). Strings owned by st. */
int64_t llm_safetensors_meta_count(const llm_safetensors *st);
const char *llm_safetensors_meta_key(const llm_safetensors *st, int64_t i);
const char *llm_safetensors_meta_value(const llm_safetensors *st, int64_t i);

/* ------------------------------------------------------------------------ */
/* Model descriptor                                                         */
/* ------------------------------------------------------------------------ */

/* RoPE kinds are the runtime's (llama/rope.h): LLM_ROPE_MODE_NORMAL rotates
 * adjacent pairs (llama.cpp's llama), LLM_ROPE_MODE_NEOX halves (HF's
 * rotate_half); scaling NONE, LINEAR, YARN or LLAMA3. */

/* Hyper-parameters, format-independent. */
typedef struct llm_model_hparams {
    uint32_t n_vocab;      /* token_embd rows */
    uint32_t n_embd;       /* model width */
    uint32_t n_layer;
    uint32_t n_head;       /* query heads */
    uint32_t n_head_kv;    /* key/value heads (GQA when < n_head) */
    uint32_t head_dim;     /* per head; n_embd / n_head unless the file says otherwise */
    uint32_t n_ff;         /* feed-forward width */
    uint32_t n_ctx_train;  /* context length trained for */
    uint32_t n_rot;        /* rotary dims per head (head_dim unless set) */
    llm_rope_mode rope_type;
    float rope_freq_base;  /* theta */
    llm_rope_scale_kind rope_scaling; /* GGUF has no llama3 key: a GGUF carrying the tensor
                                      rope_freqs.weight ([n_rot/2] per-dimension frequency
                                      divisors, precomputed by the converter) reports LLAMA3
                                      and the forward divides by that tensor; SafeTensors
                                      llama3 reports LLAMA3 with the factor fields below */
    float rope_scaling_factor;   /* 1 if none */
    float rope_low_freq_factor;  /* llama3 */
    float rope_high_freq_factor; /* llama3 */
    uint32_t rope_orig_ctx;      /* original context length (yarn, llama3, phi3 longrope); 0 if unknown */
    float rope_attn_factor;      /* RoPE magnitude factor multiplying cos and sin (GGUF
                                    rope.scaling.attn_factor, phi3 longrope); 1 if none */
    float norm_eps;        /* RMSNorm (llama) or LayerNorm epsilon */
    int tied_embeddings;   /* 1: no output.weight, the LM head is token_embd */
    uint32_t n_swa;        /* sliding-window attention: a window layer's query at p sees
                              keys p - n_swa < k <= p; 0 = no window layers */
    uint32_t swa_pattern;  /* with n_swa: layer l is a window layer when l % swa_pattern <
                              swa_pattern - 1 (Gemma 3: 6, five local layers then a global) */
    float rope_freq_base_swa; /* theta of the window layers (Gemma 3: 10000) */
    uint32_t n_token_types; /* encoders (BERT): rows of the token-type embedding (0: none) */
    int32_t pooling_type;  /* an embedding model's own pooling, GGUF <arch>.pooling_type
                              numbering: 0 none, 1 mean, 2 CLS, 3 last, 4 rank; -1 not stated
                              (HF folders state it in sentence-transformers files, which the
                              engine reads) */
    int32_t bos_id, eos_id, pad_id, unk_id; /* -1 when absent */
    /* Hybrid recurrent decoders (qwen35: Gated DeltaNet layers between
     * full-attention ones); all 0 for other architectures. */
    uint32_t ssm_d_conv;     /* causal convolution kernel (GGUF ssm.conv_kernel) */
    uint32_t ssm_d_inner;    /* value width n_v_heads * head size (ssm.inner_size) */
    uint32_t ssm_d_state;    /* key and value head size (ssm.state_size) */
    uint32_t ssm_n_v_heads;  /* value heads (ssm.time_step_rank) */
    uint32_t ssm_n_k_heads;  /* key heads (ssm.group_count); n_v_heads is a multiple */
    uint32_t ssm_n_layer;    /* how many layers are recurrent */
    uint64_t ssm_layers[2];  /* bit l % 64 of word l / 64: layer l is recurrent (n_layer <= 128) */
    /* Mixture of experts (qwen3moe); 0 for a dense model. */
    uint32_t n_expert;      /* experts per layer (GGUF <arch>.expert_count) */
    uint32_t n_expert_used; /* experts each token is routed to (<arch>.expert_used_count) */
    uint32_t n_ff_exp;      /* an expert's feed-forward width (<arch>.expert_feed_forward_length) */
} llm_model_hparams;

/* One tensor of the model, under its GGUF-style name. */
typedef struct llm_model_tensor {
    const char *name;      /* e.g. "blk.3.ffn_up.weight"; owned by the descriptor */
    llm_dtype type;        /* always a type llm knows (llm_dtype_is_known) */
    uint32_t n_dims;       /* 1..4 */
    int64_t ne[4];         /* innermost first; rest 1 */
    const void *data;      /* into the mapping of file file_index; read-only */
    uint64_t size;         /* bytes */
    uint32_t file_index;   /* 0 for GGUF; the shard for SafeTensors */
    uint64_t file_offset;  /* byte offset of data in that file */
} llm_model_tensor;

typedef struct llm_model_desc llm_model_desc;

typedef enum llm_model_source {
    LLM_MODEL_SOURCE_GGUF = 0,
    LLM_MODEL_SOURCE_SAFETENSORS = 1
} llm_model_source;

/* Builds a descriptor from a GGUF file: reads general.architecture, finds the
 * architecture in the registry (unsupported ones: LLM_ERR_UNSUPPORTED naming
 * the tag), reads its hyper-parameters (<arch>.* keys and tokenizer.ggml.*
 * special token ids), maps the tensors and validates that every tensor the
 * architecture needs exists with the right shape and a supported type
 * (unsupported weight types are named). The GGUF stays open inside the
 * descriptor (llm_model_desc_gguf) for the tokenizer metadata.
 * Returns LLM_OK, LLM_ERR_INVALID_ARG, LLM_ERR_IO, LLM_ERR_BAD_FORMAT,
 * LLM_ERR_UNSUPPORTED, LLM_ERR_NOT_FOUND (a required key or tensor is
 * missing), LLM_ERR_NO_MEMORY. *out NULL on failure. */
llm_status llm_model_desc_from_gguf(const char *path, llm_model_desc **out);

/* Builds a descriptor from a Hugging Face folder: config.json
 * (model_type / architectures, hyper-parameters, rope_scaling) and either
 * model.safetensors or model.safetensors.index.json with its shards. Tensor
 * dtypes F32, F16, BF16; HF names are mapped to GGUF-style names
 * (model.layers.N.self_attn.q_proj.weight -> blk.N.attn_q.weight).
 * ROPE: HF llama checkpoints store q/k rows in the order HF's rotate_half
 * expects; llama.cpp's converter permutes them so it can use NORMAL rope. We
 * do NOT permute (weights stay zero-copy in the mapping): a SafeTensors-
 * sourced llama gets rope_type = LLM_ROPE_MODE_NEOX, which is the same function
 * of the unpermuted weights. Forwards must honour hparams.rope_type.
 * Returns as llm_model_desc_from_gguf. */
llm_status llm_model_desc_from_dir(const char *dir, llm_model_desc **out);

/* A directory goes to from_dir, anything else to from_gguf. */
llm_status llm_model_desc_load(const char *path, llm_model_desc **out);

/* Frees the descriptor and unmaps its files. NULL is harmless. */
void llm_model_desc_free(llm_model_desc *d);

llm_model_source llm_model_desc_source(const llm_model_desc *d);
/* Architecture tag ("llama"). */
const char *llm_model_desc_arch(const llm_model_desc *d);
const llm_model_hparams *llm_model_desc_hparams(const llm_model_desc *d);

/* The GGUF file (for tokenizer.ggml.* and other metadata), or NULL for a
 * SafeTensors folder. Owned by the descriptor. */
const llm_gguf *llm_model_desc_gguf(const llm_model_desc *d);

/* The path the descriptor was built from (file or folder). */
const char *llm_model_desc_path(const llm_model_desc *d);

/* Source files: 1 for GGUF, the shard count for SafeTensors. */
uint32_t llm_model_desc_file_count(const llm_model_desc *d);
const char *llm_model_desc_file_path(const llm_model_desc *d, uint32_t i);

int64_t llm_model_desc_tensor_count(const llm_model_desc *d);
/* Tensor i, or NULL if out of range. */
const llm_model_tensor *llm_model_desc_tensor_at(const llm_model_desc *d, int64_t i);
/* Tensor by GGUF-style name, or NULL. O(1). */
const llm_model_tensor *llm_model_desc_find_tensor(const llm_model_desc *d, const char *name);
/* As find_tensor with a printf-style name ("blk.%d.attn_q.weight"). */
const llm_model_tensor *llm_model_desc_find_tensorf(const llm_model_desc *d, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Names of the registered architectures, NULL-terminated static list. */
const char *const *llm_model_arch_list(void);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_MODELS_H */
