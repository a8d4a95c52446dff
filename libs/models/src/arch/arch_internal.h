/*
 * arch/arch_internal.h -- PRIVATE: what an architecture is. One file per
 * family (arch/<tag>.c) defines one llm__arch; arch/archs.def lists them,
 * one line each, and arch/registry.c builds the registry from that list.
 * A family's file holds its hyper-parameter parsing (GGUF keys and Hugging
 * Face config.json), its tensor table and its forward pass; the blocks
 * decoders share live in arch/decoder.c (decoder.h), the net they run on in
 * the net*.c files (net_internal.h).
 *
 * The tensor table is the single statement of which tensors exist: the
 * descriptor builders validate a file against it (every required tensor
 * present with its shape, and no tensor that no entry claims), the HF reader
 * maps names through it, and llm_net_create loads weights through it (each
 * entry names the field it fills). An entry the forward does not read is
 * therefore a bug one can see in one file. A table may extend another (the
 * shared decoder's, or another family's): the entries of the table it
 * extends come first, then its own.
 */
#ifndef LLM_ARCH_ARCH_INTERNAL_H
#define LLM_ARCH_ARCH_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "arch/net_internal.h"

/* A dimension of a tensor, resolved from the hyper-parameters. Later
 * architectures add what they need here and in tensor_table.c's dim_value. */
typedef enum llm__dim {
    LLM__D_1 = 0,     /* 1 (a vector's second dimension) */
    LLM__D_EMBD,      /* n_embd */
    LLM__D_VOCAB,     /* n_vocab */
    LLM__D_FF,        /* n_ff */
    LLM__D_Q,         /* n_head * head_dim */
    LLM__D_KV,        /* n_head_kv * head_dim */
    LLM__D_HEAD,      /* head_dim (per-head norms) */
    LLM__D_ROT_HALF,  /* n_rot / 2 (rope frequency factors) */
    LLM__D_QKV,       /* (n_head + 2 * n_head_kv) * head_dim (fused Q/K/V: phi3, bert-family) */
    LLM__D_FF2,       /* 2 * n_ff (fused gate and up, phi3) */
    LLM__D_CTX,       /* n_ctx_train (absolute position embeddings) */
    LLM__D_TYPES,     /* n_token_types (token-type embeddings) */
    LLM__D_Q2,        /* 2 * n_head * head_dim (query and output gate, qwen35) */
    LLM__D_CONV_K,    /* ssm_d_conv */
    LLM__D_CONV_CH,   /* 2 * ssm_n_k_heads * ssm_d_state + ssm_d_inner (conv channels) */
    LLM__D_SSM_V,     /* ssm_d_inner */
    LLM__D_SSM_VH,    /* ssm_n_v_heads */
    LLM__D_SSM_STATE, /* ssm_d_state */
    LLM__D_EXPERT,    /* n_expert (mixture of experts: the router's rows) */
    /* The experts' stacked matrices: as ne1, these give a third dimension
     * ne2 = n_expert (tensor_table.c's dim_ne2); every other dim gives ne2 = 1. */
    LLM__D_FF_EXP_X,  /* n_ff_exp, per expert (gate and up experts' rows) */
    LLM__D_EMBD_X,    /* n_embd, per expert (down experts' rows) */
    LLM__D_FF_EXP     /* n_ff_exp (the down experts' columns) */
} llm__dim;

/* How the forward uses a tensor, which fixes what the loader checks. */
typedef enum llm__wkind {
    LLM__W_MATMUL = 0, /* a projection: any type the backend can multiply */
    LLM__W_ROWS,       /* an embedding read by get_rows: any known type */
    LLM__W_F32,        /* a norm weight or a bias: must be F32 */
    LLM__W_HOST        /* F32, read from the mapping by the arch's load hook (no field) */
} llm__wkind;

#define LLM__NO_FIELD (-1)

typedef struct llm__tensor_spec {
    const char *name;   /* GGUF name; per layer the part after "blk.<l>." */
    const char *hf;     /* HF name; per layer the part after hf_layer_prefix "<l>.";
                           NULL: not in HF checkpoints */
    unsigned char per_layer, optional, kind; /* kind: llm__wkind */
    llm__dim ne0, ne1;  /* GGUF order (ne0 innermost); ne1 = LLM__D_1 for a vector */
    int field;          /* offsetof in llm__layer_w (per layer) or llm_net; LLM__NO_FIELD */
} llm__tensor_spec;

/* A tensor table: the entries of base (the table this one extends; NULL:
 * none), then spec[0..n). */
typedef struct llm__tensor_table {
    const llm__tensor_spec *spec;
    size_t n;
    const struct llm__tensor_table *base;
} llm__tensor_table;

/* The table of a static spec array, extending base (NULL: none). */
#define LLM__TABLE(spec, base) {(spec), sizeof(spec) / sizeof((spec)[0]), (base)}

typedef struct llm__arch {
    const char *tag;                   /* general.architecture and GGUF key prefix */
    const char *const *hf_model_types; /* config.json "model_type" values, NULL-terminated */
    const char *hf_layer_prefix;       /* e.g. "model.layers." (then "<l>.") */
    const char *const *hf_ignore;      /* name suffixes of HF tensors that are known and
                                          not needed (e.g. "rotary_emb.inv_freq"), NULL-ended */
    float hf_norm_shift;               /* added to every norm weight (an F32-kind entry whose
                                          GGUF name ends in "norm.weight") of a HF checkpoint,
                                          as llama.cpp's converter does (Gemma: 1) */
    const struct llm__tensor_table *tensors; /* the tensor table (maybe extending another) */
    /* Hyper-parameters into *hp (preset by the builder: ids -1, rope base
     * 10000, scaling factor 1). d holds every tensor already (n_vocab comes
     * from token_embd). Errors through llm__models_error. */
    llm_status (*hparams_gguf)(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g);
    llm_status (*hparams_hf)(llm_model_hparams *hp, const llm_model_desc *d, json_t *cfg);
    /* After the table filled net's tensors: what the table cannot say (tied
     * output, rope). Errors through llm__net_err. */
    llm_status (*load)(llm_net *net);
    llm_status (*forward)(llm_net *net, llm_net_kv *kv, const llm_net_batch *b);
    /* 1: an encoder (BERT): bidirectional attention within each sequence of
     * a batch, no KV cache (forward gets kv NULL and ignores block tables),
     * hidden states only. */
    int encoder;
    /* 1: the forward runs the FFN in runs of llm__ffn_run rows, and the
     * arena's gate / up slots hold llm__ffn_rows(p) + 7 rows, not max_batch. */
    int ffn_chunked;
} llm__arch;

/* The FFN's run length of a net's params (llm_net_params.ffn_rows): a
 * multiple of 4, at least 8. */
static inline int64_t llm__ffn_rows(const llm_net_params *p) {
    return p->ffn_rows <= 0 ? 128 : p->ffn_rows < 8 ? 8 : p->ffn_rows & ~(int32_t)3;
}

/* Rows of the FFN run that starts at row r0 of n: rows, or all that are
 * left when that is at most rows + 7. The matmul picks its kernels by the
 * number of rows, as llama.cpp does (from 8 rows the batch kernels), and
 * some of those give each group of 4 rows one call and the last n % 4 rows
 * another that need not sum alike (kernels.h, llm__dot_pair). So no run is
 * shorter than 8 rows unless the batch is, and every run but the last is a
 * multiple of 4 rows: each row meets the kernel it meets in one pass. */
static inline int64_t llm__ffn_run(const llm_net_params *p, int64_t n, int64_t r0) {
    const int64_t rows = llm__ffn_rows(p);
    return n - r0 <= rows + 7 ? n - r0 : rows;
}

/* Table entries: GGUF name, HF name, required/optional, use, shape (ne0
 * innermost), field. */
#define GLOBAL(name, hf, opt, kind, ne0, ne1, field)                                                \
    {name, hf, 0, opt, LLM__W_##kind, LLM__D_##ne0, LLM__D_##ne1, (int)offsetof(llm_net, field)}
#define LAYER(name, hf, opt, kind, ne0, ne1, field)                                                 \
    {name, hf, 1, opt, LLM__W_##kind, LLM__D_##ne0, LLM__D_##ne1, (int)offsetof(llm__layer_w, field)}
enum { REQ = 0, OPT = 1 };


/* ---- families that another family reuses (one way: never back) ---- */

/* llama.c: the llama forward, which qwen2 and qwen3 run with their own
 * tables (their q/k norms and biases are optional steps of it). */
llm_status llm__llama_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b);

/* bert.c: the BERT-family encoder forward, which nomic-bert reuses: optional
 * position embeddings, fused or separate Q/K/V, RoPE when net->rope.n_dims
 * > 0, GELU or (with ffn_gate) SwiGLU feed-forward. */
llm_status llm__bert_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b);
/* The encoder ops the backend must have. */
llm_status llm__bert_load(llm_net *net);

/* ---- helpers of the forward functions (they expect `b` and `be`) ---- */

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

/* One op of the forward: the cancel callback is polled before every op, so a
 * cancelled forward stops within one op's time. */
#define OP(expr)                                                                                   \
    do {                                                                                           \
        if (b->cancel && b->cancel(b->cancel_user)) return LLM_CANCELLED;                         \
        TRY(llm__net_op(expr));                                                                    \
    } while (0)

/* The debug tap (llama/arch.h): one branch per stage when unset. */
#define TAP(name, layer, t)                                                                        \
    do {                                                                                           \
        if (b->tap) b->tap(b->tap_user, (name), (int32_t)(layer), &(t));                           \
    } while (0)

/* Contiguous F32 [n][ne1][ne0] view at an arena slot. */
static inline llm_tensor act(const llm_net *net, size_t off, int64_t ne0, int64_t ne1, int64_t n) {
    return llm_tensor_4d(net->arena, off, LLM_DTYPE_F32, ne0, ne1, n, 1);
}

/* Rows r0 .. r0 + c - 1 of the [.][ne0] slot at off, as a [c][ne0] view. */
static inline llm_tensor act_rows(const llm_net *net, size_t off, int64_t ne0, int64_t r0, int64_t c) {
    return act(net, off + (size_t)(r0 * ne0) * sizeof(float), ne0, c, 1);
}

/* The activations of a forward for n tokens (the decoders' and bert's), as
 * views of the arena's slots (net->a). */
typedef struct llm__acts {
    llm_tensor x, xn, tmp;       /* [n][E]: residual stream, normed copy, block output */
    llm_tensor q, k, v;          /* [n][n_head][hd], [n][n_head_kv][hd] x2 */
    llm_tensor q2, k2, v2, att2; /* 2-D views [n][heads * hd] for the projections */
    llm_tensor gate, up;         /* [n][F]; bert's: not for an ffn_chunked arch (its slots are shorter) */
} llm__acts;

static inline llm__acts llm__decoder_acts(const llm_net *net, int64_t n) {
    const llm_model_hparams *hp = &net->hp;
    const int64_t E = hp->n_embd, F = hp->n_ff, hd = hp->head_dim, nh = hp->n_head, nkv = hp->n_head_kv;
    llm__acts a;
    a.x = act(net, net->a.off_x, E, n, 1);
    a.xn = act(net, net->a.off_xn, E, n, 1);
    a.tmp = act(net, net->a.off_tmp, E, n, 1);
    a.q = act(net, net->a.off_q, hd, nh, n);
    a.k = act(net, net->a.off_k, hd, nkv, n);
    a.v = act(net, net->a.off_v, hd, nkv, n);
    a.q2 = act(net, net->a.off_q, hd * nh, n, 1);
    a.k2 = act(net, net->a.off_k, hd * nkv, n, 1);
    a.v2 = act(net, net->a.off_v, hd * nkv, n, 1);
    a.att2 = act(net, net->a.off_att, hd * nh, n, 1);
    a.gate = act(net, net->a.off_gate, F, n, 1);
    a.up = act(net, net->a.off_up, F, n, 1);
    return a;
}

/* registry.c: the architectures of archs.def, by GGUF tag or HF model_type
 * (NULL: not registered). */
const llm__arch *llm__arch_find(const char *tag);
const llm__arch *llm__arch_find_hf(const char *model_type);
/* "llama, qwen2, ..." (the registered tags) into buf[cap], for messages. */
void llm__arch_names_join(char *buf, size_t cap);

/* tensor_table.c: the machinery behind every table (walking a table visits
 * the entries of the tables it extends first).
 * Descriptor check: every required entry present with its shape, and every
 * tensor of d claimed by an entry. LLM_ERR_NOT_FOUND / LLM_ERR_BAD_FORMAT with
 * a message naming the tensor (llm_models_last_error). */
llm_status llm__table_validate(const llm_model_desc *d, const llm__arch *a);
/* HF name -> GGUF name in out[cap]: 1 mapped, 0 known and not needed
 * (hf_ignore), -1 not a tensor of this architecture. */
int llm__table_map_hf(const llm__arch *a, const char *hf, char *out, size_t cap);
/* Fills net's fields from the table: wraps each present tensor and checks
 * the backend can use it. Errors through llm__net_err. */
llm_status llm__table_load(llm_net *net);
/* llm__net_prepare for every projection (MATMUL entry with a field) loaded. */
llm_status llm__table_prepare(llm_net *net);

/* hparams.c: readers shared by the architectures' hyper-parameter hooks.
 * Missing optional keys keep *v; a wrong type is an error. */
llm_status llm__gguf_req_u32(const llm_model_desc *d, const llm_gguf *g, const char *key, uint32_t *v);
llm_status llm__gguf_opt_u32(const llm_gguf *g, const char *key, uint32_t *v);
llm_status llm__gguf_opt_f32(const llm_gguf *g, const char *key, float *v);
llm_status llm__gguf_opt_i32(const llm_gguf *g, const char *key, int32_t *v);
llm_status llm__cfg_u32(const llm_model_desc *d, json_t *cfg, const char *key, int required, uint32_t *v);
llm_status llm__cfg_f32(const llm_model_desc *d, json_t *cfg, const char *key, float *v);
/* Token ids may be an integer, null, or a list (the first element is used). */
void llm__cfg_id(json_t *cfg, const char *key, int32_t *v);
/* Derived fields and sanity limits of a decoder: n_vocab from token_embd,
 * n_head_kv / head_dim / n_rot defaults, tied embeddings (no output.weight),
 * special ids outside the vocabulary dropped. */
llm_status llm__hparams_finish(llm_model_hparams *hp, const llm_model_desc *d);

#endif
