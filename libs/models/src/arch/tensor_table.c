/*
 * arch/tensor_table.c -- the machinery behind every architecture's tensor
 * table (arch_internal.h): shapes from hyper-parameters, descriptor
 * validation (required, shapes, nothing unclaimed), Hugging Face name
 * mapping, and weight loading into the net's fields.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch_internal.h"
#include "formats/formats_internal.h"

/* The length of dimension d. */
static int64_t dim_value(const llm_model_hparams *hp, llm__dim d) {
    switch (d) {
    case LLM__D_EMBD: return hp->n_embd;
    case LLM__D_VOCAB: return hp->n_vocab;
    case LLM__D_FF: return hp->n_ff;
    case LLM__D_Q: return (int64_t)hp->n_head * hp->head_dim;
    case LLM__D_KV: return (int64_t)hp->n_head_kv * hp->head_dim;
    case LLM__D_HEAD: return hp->head_dim;
    case LLM__D_ROT_HALF: return hp->n_rot / 2;
    case LLM__D_QKV: return ((int64_t)hp->n_head + 2 * (int64_t)hp->n_head_kv) * hp->head_dim;
    case LLM__D_FF2: return 2 * (int64_t)hp->n_ff;
    case LLM__D_CTX: return hp->n_ctx_train;
    case LLM__D_TYPES: return hp->n_token_types;
    case LLM__D_Q2: return 2 * (int64_t)hp->n_head * hp->head_dim;
    case LLM__D_CONV_K: return hp->ssm_d_conv;
    case LLM__D_CONV_CH: return 2 * (int64_t)hp->ssm_n_k_heads * hp->ssm_d_state + hp->ssm_d_inner;
    case LLM__D_SSM_V: return hp->ssm_d_inner;
    case LLM__D_SSM_VH: return hp->ssm_n_v_heads;
    case LLM__D_SSM_STATE: return hp->ssm_d_state;
    case LLM__D_EXPERT: return hp->n_expert;
    case LLM__D_FF_EXP_X: return hp->n_ff_exp;
    case LLM__D_EMBD_X: return hp->n_embd;
    case LLM__D_FF_EXP: return hp->n_ff_exp;
    default: return 1;
    }
}

/* The third dimension of a tensor whose ne1 is d: n_expert for the experts'
 * dims (LLM__D_FF_EXP_X, LLM__D_EMBD_X), else 1. */
static int64_t dim_ne2(const llm_model_hparams *hp, llm__dim ne1) {
    return ne1 == LLM__D_FF_EXP_X || ne1 == LLM__D_EMBD_X ? hp->n_expert : 1;
}

/* The GGUF name of entry s for layer l (ignored for global entries). */
static int spec_name(const llm__tensor_spec *s, uint32_t l, char *out, size_t cap) {
    int n = s->per_layer ? snprintf(out, cap, "blk.%u.%s", l, s->name) : snprintf(out, cap, "%s", s->name);
    return n > 0 && (size_t)n < cap;
}

/* Entries of table t, with those of the tables it extends. */
static size_t table_count(const llm__tensor_table *t) { return t ? t->n + table_count(t->base) : 0; }

/* Entry i of table t: the extended table's entries first, then t's own. */
static const llm__tensor_spec *table_at(const llm__tensor_table *t, size_t i) {
    const size_t nb = table_count(t->base);
    return i < nb ? table_at(t->base, i) : &t->spec[i - nb];
}

/* Runs the statements (the variadic part) for each (entry s, layer l) with
 * the tensor's GGUF name in name[]. */
#define FOR_EACH_ENTRY(a, hp, s, l, name, ...)                                                    \
    for (size_t i_ = 0, n_ = table_count((a)->tensors); i_ < n_; i_++) {                          \
        const llm__tensor_spec *s = table_at((a)->tensors, i_);                                    \
        for (uint32_t l = 0; l < (s->per_layer ? (hp)->n_layer : 1u); l++) {                       \
            char name[128];                                                                        \
            if (!spec_name(s, l, name, sizeof name)) continue;                                \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

llm_status llm__table_validate(const llm_model_desc *d, const llm__arch *a) {
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    const int64_t n = llm_model_desc_tensor_count(d);
    const llm_model_tensor *first = llm_model_desc_tensor_at(d, 0);
    unsigned char *claimed = calloc(n > 0 ? (size_t)n : 1, 1);
    if (!claimed) return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    llm_status st = LLM_OK;
    FOR_EACH_ENTRY(a, hp, s, l, name, {
        if (st) break;
        const llm_model_tensor *t = llm_model_desc_find_tensor(d, name);
        if (!t) {
            if (!s->optional)
                st = llm__models_error(LLM_ERR_NOT_FOUND, "model: %s: %s: required tensor '%s' is missing",
                                       llm_model_desc_path(d), a->tag, name);
            continue;
        }
        claimed[t - first] = 1;
        const int64_t want[4] = {dim_value(hp, s->ne0), dim_value(hp, s->ne1),
                                 dim_ne2(hp, s->ne1), 1};
        if (t->ne[0] != want[0] || t->ne[1] != want[1] || t->ne[2] != want[2] || t->ne[3] != 1)
            st = llm__models_error(LLM_ERR_BAD_FORMAT,
                                   "model: %s: tensor '%s' has shape [%" PRId64 ", %" PRId64 ", %" PRId64
                                   ", %" PRId64 "], expected [%" PRId64 ", %" PRId64 ", %" PRId64 "]",
                                   llm_model_desc_path(d), name, t->ne[0], t->ne[1], t->ne[2], t->ne[3], want[0],
                                   want[1], want[2]);
    })
    /* A tensor nobody claims means the file is not what we think it is (a
     * variant with extra weights we would silently skip): refuse it. */
    for (int64_t i = 0; i < n && !st; i++)
        if (!claimed[i])
            st = llm__models_error(LLM_ERR_UNSUPPORTED,
                                   "model: %s: tensor '%.96s' is not used by architecture %s (unknown variant?)",
                                   llm_model_desc_path(d), first[i].name, a->tag);
    free(claimed);
    return st;
}

static int ends_with(const char *s, const char *suffix) {
    const size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int llm__table_map_hf(const llm__arch *a, const char *hf, char *out, size_t cap) {
    const size_t pl = a->hf_layer_prefix ? strlen(a->hf_layer_prefix) : 0;
    unsigned il = 0;
    const char *rest = NULL;
    if (pl && strncmp(hf, a->hf_layer_prefix, pl) == 0) {
        char *end;
        const unsigned long v = strtoul(hf + pl, &end, 10);
        if (end != hf + pl && *end == '.' && v < 1000000) {
            il = (unsigned)v;
            rest = end + 1;
        }
    }
    for (size_t i = 0, n = table_count(a->tensors); i < n; i++) {
        const llm__tensor_spec *s = table_at(a->tensors, i);
        if (!s->hf) continue;
        if (s->per_layer ? (rest && strcmp(rest, s->hf) == 0) : strcmp(hf, s->hf) == 0)
            return spec_name(s, il, out, cap) ? 1 : -1;
    }
    for (const char *const *ig = a->hf_ignore; ig && *ig; ig++)
        if (ends_with(hf, *ig)) return 0;
    return -1;
}

static llm_status load_one(llm_net *net, const llm__tensor_spec *s, const char *name, llm_tensor *dst) {
    const llm_model_tensor *t = llm_model_desc_find_tensor(net->desc, name);
    const char *tag = net->arch->tag;
    if (!t) {
        return s->optional ? LLM_OK : llm__net_err(LLM_ERR_BAD_FORMAT, "%s: tensor '%s' is missing", tag, name);
    }
    const llm_model_hparams *hp = &net->hp;
    const int64_t ne0 = dim_value(hp, s->ne0), ne1 = dim_value(hp, s->ne1),
                  ne2 = dim_ne2(hp, s->ne1);
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != ne2 || t->ne[3] != 1) {
        return llm__net_err(LLM_ERR_BAD_FORMAT,
                            "%s: tensor '%s' is [%lld][%lld][%lld], expected [%lld][%lld][%lld]", tag, name,
                            (long long)t->ne[2], (long long)t->ne[1], (long long)t->ne[0], (long long)ne2,
                            (long long)ne1, (long long)ne0);
    }
    /* A HF checkpoint's norm and bias vectors: F16/BF16 are widened to F32
     * (exact), norms shifted where the architecture says so, as llama.cpp's
     * converter writes them into a GGUF. */
    const size_t nl = strlen(name);
    const float shift = nl >= 11 && !strcmp(name + nl - 11, "norm.weight") ? net->arch->hf_norm_shift : 0.0f;
    if (s->kind == LLM__W_F32 && llm_model_desc_source(net->desc) == LLM_MODEL_SOURCE_SAFETENSORS &&
        (t->type != LLM_DTYPE_F32 || shift != 0.0f)) {
        return dst ? llm__net_f32_vector(net, t, shift, dst) : LLM_OK;
    }
    if ((s->kind == LLM__W_F32 || s->kind == LLM__W_HOST) && t->type != LLM_DTYPE_F32) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "%s: tensor '%s' must be f32 (is %s)", tag, name,
                            llm_dtype_name(t->type));
    }
    if (s->kind == LLM__W_MATMUL && !llm_backend_supports(net->be, LLM_OP_MATMUL, t->type)) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "%s: backend %s cannot multiply %s weights (%s)", tag,
                            llm_backend_name(net->be), llm_dtype_name(t->type), name);
    }
    return dst ? llm__net_wrap_tensor(net, t, dst) : LLM_OK;
}

llm_status llm__table_load(llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    net->layers = calloc(hp->n_layer, sizeof(*net->layers));
    if (!net->layers) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "%s: out of memory", net->arch->tag);
    }
    llm_status st = LLM_OK;
    FOR_EACH_ENTRY(net->arch, hp, s, l, name, {
        if (st) break;
        char *base = s->per_layer ? (char *)&net->layers[l] : (char *)net;
        st = load_one(net, s, name, s->field == LLM__NO_FIELD ? NULL : (llm_tensor *)(base + s->field));
    })
    return st;
}

llm_status llm__table_prepare(llm_net *net) {
    llm_status st = LLM_OK;
    FOR_EACH_ENTRY(net->arch, &net->hp, s, l, name, {
        (void)name;
        if (st) break;
        if (s->kind != LLM__W_MATMUL || s->field == LLM__NO_FIELD) continue;
        const llm_tensor *w = (const llm_tensor *)((s->per_layer ? (char *)&net->layers[l] : (char *)net) + s->field);
        if (w->buffer) st = llm__net_prepare(net, w);
    })
    return st;
}
