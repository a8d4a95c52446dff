/*
 * llama/models.h -- model files and model descriptors.
 *
 * Three layers, each usable on its own:
 *
 *   1. File readers. GGUF files are read by llama-gguf (llama/gguf.h,
 *      included here; its errors go to llm_gguf_last_error()).
 *      llm_safetensors_* reads one SafeTensors file: memory-mapped read-only,
 *      every count, length, shape, offset and size validated against the
 *      file size (overflow-safe) before use: a malformed file is an error
 *      with a message naming the problem and the byte offset, never a crash.
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
#include "llama/gguf.h" /* the GGUF reader (llama-gguf), which the descriptor keeps open */
#include "llama/rope.h"
#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". */
const char *llm_models_version(void);

/* The message of the last error raised by an llm_safetensors_* or
 * llm_model_* function (a GGUF that fails to open or parse while a
 * descriptor is built included) on the calling thread ("" if none yet). The text
 * names the file, the problem and, for format errors, the byte offset, e.g.
 * "gguf: m.gguf: tensor 'blk.0.attn_q.weight': data [64, 4160) extends past
 * end of file (4096 bytes) at byte offset 1234". Valid until the next call
 * into this library on the same thread. */
const char *llm_models_last_error(void);

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
