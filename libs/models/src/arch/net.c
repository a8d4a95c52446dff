/*
 * arch/net.c -- creating a runnable network from a model descriptor: weight
 * wrapping, the activation arena and its plan, K/V storage (and block copies)
 * and batch validation. Weights are loaded through the architecture's tensor
 * table (tensor_table.c); the forward lives in one file per architecture.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch_internal.h"
#include "llama/error.h"

const char *llm_net_last_error(void) { return llm__err_get(LLM__ERR_NET); }

llm_status llm__net_err(llm_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llm__err_vset(LLM__ERR_NET, st, fmt, ap);
    va_end(ap);
    return st;
}

llm_status llm__net_op(llm_status st) {
    if (st < 0) {
        llm__err_set(LLM__ERR_NET, st, "%s", llm_runtime_last_error());
    }
    return st;
}

llm_net_params llm_net_default_params(void) {
    llm_net_params p;
    memset(&p, 0, sizeof(p));
    p.max_batch = 512;
    p.type_k = LLM_DTYPE_F16;
    p.type_v = LLM_DTYPE_F16;
    return p;
}

llm_net_batch llm_net_batch_default(void) {
    llm_net_batch b;
    memset(&b, 0, sizeof(b));
    b.logits_mode = LLM_LOGITS_LAST;
    return b;
}

/* One wrapped buffer per source file, spanning from the file start (data -
 * file_offset) to the end of its last tensor. */
static llm_status wrap_files(llm_net *net) {
    uint32_t nf = llm_model_desc_file_count(net->desc);
    if (nf == 0) {
        return llm__net_err(LLM_ERR_BAD_FORMAT, "model has no files");
    }
    net->wbufs = calloc(nf, sizeof(*net->wbufs));
    if (!net->wbufs) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    net->n_wbufs = nf;
    int64_t nt = llm_model_desc_tensor_count(net->desc);
    for (uint32_t f = 0; f < nf; f++) {
        const char *base = NULL;
        uint64_t end = 0;
        for (int64_t i = 0; i < nt; i++) {
            const llm_model_tensor *t = llm_model_desc_tensor_at(net->desc, i);
            if (t->file_index != f) {
                continue;
            }
            base = (const char *)t->data - t->file_offset;
            if (t->file_offset + t->size > end) {
                end = t->file_offset + t->size;
            }
        }
        if (!base) {
            continue;
        }
        llm_status st = llm_buffer_wrap_host(net->be, base, (size_t)end, &net->wbufs[f]);
        if (st != LLM_OK) {
            return llm__net_op(st);
        }
    }
    return LLM_OK;
}

llm_status llm__net_wrap_tensor(llm_net *net, const llm_model_tensor *t, llm_tensor *out) {
    if (t->file_index >= net->n_wbufs || !net->wbufs[t->file_index]) {
        return llm__net_err(LLM_ERR_INTERNAL, "tensor '%s' has no source buffer", t->name);
    }
    *out = llm_tensor_4d(net->wbufs[t->file_index], (size_t)t->file_offset, t->type, t->ne[0],
                         t->ne[1], t->ne[2], t->ne[3]);
    if (!out->buffer || llm_tensor_nbytes(out) != t->size) {
        return llm__net_err(LLM_ERR_BAD_FORMAT, "tensor '%s' has an inconsistent size", t->name);
    }
    return LLM_OK;
}

llm_status llm__net_f32_vector(llm_net *net, const llm_model_tensor *t, float shift, llm_tensor *out) {
    if (t->type != LLM_DTYPE_F32 && t->type != LLM_DTYPE_F16 && t->type != LLM_DTYPE_BF16) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "tensor '%s' must be f32, f16 or bf16 (is %s)", t->name,
                            llm_dtype_name(t->type));
    }
    const size_t n = (size_t)(t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
    float *h = malloc((n ? n : 1) * sizeof(float));
    llm_buffer **grown = realloc(net->vecs, (net->n_vecs + 1) * sizeof(*net->vecs));
    if (!h || !grown) {
        free(h);
        if (grown) net->vecs = grown;
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    net->vecs = grown;
    llm_status st = llm_dtype_dequantize_row(t->type, t->data, h, n);
    for (size_t i = 0; st == LLM_OK && shift != 0.0f && i < n; i++) {
        const float v = h[i] + shift;
        h[i] = t->type == LLM_DTYPE_F16    ? llm_fp16_to_fp32(llm_fp32_to_fp16(v))
               : t->type == LLM_DTYPE_BF16 ? llm_bf16_to_fp32(llm_fp32_to_bf16(v))
                                           : v;
    }
    llm_buffer *buf = NULL;
    if (st == LLM_OK) st = llm_buffer_alloc(net->be, n * sizeof(float), &buf);
    if (st == LLM_OK) net->vecs[net->n_vecs++] = buf;
    if (st == LLM_OK) st = llm_buffer_write(buf, 0, h, n * sizeof(float));
    free(h);
    if (st != LLM_OK) return llm__net_op(st);
    *out = llm_tensor_4d(buf, 0, LLM_DTYPE_F32, t->ne[0], t->ne[1], t->ne[2], t->ne[3]);
    return LLM_OK;
}

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* The arena's slots for max_batch tokens. llm_net_plan reports exactly what
 * make_arena allocates, since both call this. */
static void arena_layout(const llm__arch *arch, const llm_model_hparams *hp, const llm_net_params *p,
                         llm__arena_layout *a) {
    const int encoder = arch->encoder;
    const size_t B = (size_t)p->max_batch, f = sizeof(float);
    /* Rows of the FFN intermediates: a chunked FFN's longest run. */
    const size_t FR = arch->ffn_chunked && (size_t)llm__ffn_rows(p) + 7 < B ? (size_t)llm__ffn_rows(p) + 7 : B;
    const size_t E = hp->n_embd, QD = (size_t)hp->n_head * hp->head_dim;
    /* An encoder has no LM head (no logits slot). */
    const size_t KD = (size_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff, V = encoder ? 0 : hp->n_vocab;
    /* LM-head rows at once: a chunk plus a tail too short to stand alone. */
    const size_t LR = B < LLM__LOGITS_CHUNK + LLM__LOGITS_TAIL - 1 ? B : LLM__LOGITS_CHUNK + LLM__LOGITS_TAIL - 1;
    size_t off = 0;
#define SLOT(field, bytes)                                                                         \
    a->field = off;                                                                                \
    off = align64(off + (bytes))
    SLOT(off_x, B * E * f);        /* [B][E] residual stream */
    SLOT(off_xn, B * E * f);       /* [B][E] normed */
    SLOT(off_tmp, B * E * f);      /* [B][E] block output */
    SLOT(off_q, B * QD * f);       /* [B][n_head][hd] */
    SLOT(off_att, B * QD * f);     /* [B][n_head][hd] attention output */
    SLOT(off_k, B * KD * f);       /* [B][n_head_kv][hd] */
    SLOT(off_v, B * KD * f);       /* [B][n_head_kv][hd] */
    SLOT(off_gate, FR * F * f);    /* [FR][F] */
    SLOT(off_up, FR * F * f);      /* [FR][F] */
    SLOT(off_logits, LR * V * f);  /* [LR][V] */
    /* Hybrid recurrent nets (qwen35): CH conv channels, VI value width, VH value heads. */
    const size_t rec = hp->ssm_d_conv > 0;
    const size_t VI = rec * hp->ssm_d_inner, VH = rec * hp->ssm_n_v_heads;
    const size_t KI = rec * (size_t)hp->ssm_n_k_heads * hp->ssm_d_state, CH = 2 * KI + VI;
    SLOT(off_qg, rec * B * 2 * QD * f); /* [B][n_head][2][hd]: query and gate per head */
    SLOT(off_agate, rec * B * QD * f);  /* [B][n_head][hd]: the attention output gate */
    SLOT(off_mix, B * CH * f);          /* [B][CH]: conv input (q, k, v of all heads) */
    SLOT(off_conv, B * CH * f);         /* [B][CH]: conv output */
    SLOT(off_z, B * VI * f);            /* [B][VI]: output gate */
    SLOT(off_sq, B * KI * f);           /* [B][n_k_heads][hd] */
    SLOT(off_sk, B * KI * f);           /* [B][n_k_heads][hd] */
    SLOT(off_sv, B * VI * f);           /* [B][VH][hd] */
    SLOT(off_sg, B * VH * f);           /* [B][VH]: log-decay */
    SLOT(off_sbeta, B * VH * f);        /* [B][VH]: mixing weight */
    SLOT(off_so, B * VI * f);           /* [B][VH][hd]: delta-rule output */
    const size_t X = hp->n_expert, U = X ? hp->n_expert_used : 0, FE = X ? hp->n_ff_exp : 0;
    SLOT(off_moe_probs, B * X * f);    /* [B][X] */
    SLOT(off_moe_w, B * U * f);        /* [B][U] */
    SLOT(off_moe_gate, B * U * FE * f); /* [B][U][Fe] */
    SLOT(off_moe_up, B * U * FE * f);  /* [B][U][Fe] */
    SLOT(off_moe_out, B * U * E * f);  /* [B][U][E] */
#undef SLOT
    a->bytes = off;
}

static int kv_type_ok(llm_dtype t) {
    switch (t) {
    case LLM_DTYPE_F16: case LLM_DTYPE_F32: case LLM_DTYPE_BF16: case LLM_DTYPE_Q8_0:
    case LLM_DTYPE_Q4_0: case LLM_DTYPE_Q4_1: case LLM_DTYPE_Q5_0: case LLM_DTYPE_Q5_1:
        return 1;
    default:
        return 0;
    }
}

/* Bytes of one K or V row (one head of one token) of head_dim elements. */
static size_t kv_row_bytes(const llm_model_hparams *hp, llm_dtype t) {
    return (size_t)hp->head_dim / llm_dtype_block_size(t) * llm_dtype_block_bytes(t);
}

static size_t kv_bytes_per_token_layer(const llm_model_hparams *hp, const llm_net_params *p, int encoder) {
    if (encoder) return 0; /* no KV cache */
    return (size_t)hp->n_head_kv * (kv_row_bytes(hp, p->type_k) + kv_row_bytes(hp, p->type_v));
}

int llm__layer_is_swa(const llm_model_hparams *hp, uint32_t l) {
    return hp->n_swa > 0 && hp->swa_pattern > 0 && l < hp->n_layer && l % hp->swa_pattern < hp->swa_pattern - 1;
}

static uint32_t n_layer_swa(const llm_model_hparams *hp) {
    uint32_t n = 0;
    for (uint32_t l = 0; l < hp->n_layer; l++) n += (uint32_t)llm__layer_is_swa(hp, l);
    return n;
}

static llm_status check_params(const llm_net_params *p, const char *fn) {
    if (p->max_batch < 1 || p->max_batch > (1 << 20) || !kv_type_ok(p->type_k) || !kv_type_ok(p->type_v) ||
        p->n_ctx_seq < 0 || p->ffn_rows < 0 || p->ffn_rows > (1 << 20)) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "%s: bad max_batch, type_k, type_v, n_ctx_seq or ffn_rows", fn);
    }
    return LLM_OK;
}

/* A quantized cache row is whole blocks: head_dim must divide by the block. */
static llm_status check_kv_blocks(const llm_model_hparams *hp, const llm_net_params *p, int encoder,
                                  const char *fn) {
    const llm_dtype t[2] = {p->type_k, p->type_v};
    for (int w = 0; w < 2 && !encoder; w++) {
        const size_t bs = llm_dtype_block_size(t[w]);
        if (hp->head_dim % bs != 0) {
            return llm__net_err(LLM_ERR_UNSUPPORTED,
                                "%s: a %s %s cache needs head_dim to be a multiple of %zu (the model's is %u)", fn,
                                llm_dtype_name(t[w]), w ? "V" : "K", bs, hp->head_dim);
        }
    }
    return LLM_OK;
}

llm_status llm_net_plan(const llm_model_desc *desc, const llm_net_params *params, llm_net_memory *out) {
    if (!desc || !out) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_plan: NULL descriptor or out");
    }
    memset(out, 0, sizeof(*out));
    llm_net_params p = params ? *params : llm_net_default_params();
    llm_status st = check_params(&p, "llm_net_plan");
    if (st != LLM_OK) {
        return st;
    }
    const llm__arch *arch = llm__arch_find(llm_model_desc_arch(desc));
    if (!arch) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "architecture '%s' has no forward",
                            llm_model_desc_arch(desc) ? llm_model_desc_arch(desc) : "?");
    }
    const llm_model_hparams *hp = llm_model_desc_hparams(desc);
    st = check_kv_blocks(hp, &p, arch->encoder, "llm_net_plan");
    if (st != LLM_OK) {
        return st;
    }
    llm__arena_layout a;
    arena_layout(arch, hp, &p, &a);
    out->arena_bytes = a.bytes;
    out->host_bytes = (size_t)p.max_batch * sizeof(int32_t) * (1 + (hp->n_expert ? hp->n_expert_used : 0));
    out->kv_bytes_per_token_layer = kv_bytes_per_token_layer(hp, &p, arch->encoder);
    /* Recurrent layers (qwen35's Gated DeltaNet) keep a state, not K/V. */
    const uint32_t n_kv_layers = hp->n_layer - (arch->encoder || hp->ssm_d_conv == 0 ? 0 : hp->ssm_n_layer);
    out->kv_bytes_per_token = out->kv_bytes_per_token_layer * n_kv_layers;
    if (!arch->encoder && hp->ssm_d_conv > 0) {
        out->state_bytes = (llm__ssm_conv_bytes(hp) + llm__ssm_delta_bytes(hp)) * hp->ssm_n_layer;
    }
    if (!arch->encoder && n_layer_swa(hp) > 0) {
        out->n_layer_swa = (int32_t)n_layer_swa(hp);
        out->n_swa = (int32_t)hp->n_swa;
        out->kv_bytes_per_token_swa = out->kv_bytes_per_token_layer * (size_t)out->n_layer_swa;
    }
    return LLM_OK;
}

static llm_status make_arena(llm_net *net) {
    arena_layout(net->arch, &net->hp, &net->p, &net->a);
    net->gather_ids = calloc((size_t)net->p.max_batch, sizeof(int32_t));
    if (net->hp.n_expert) net->moe_ids = calloc((size_t)net->p.max_batch * net->hp.n_expert_used, sizeof(int32_t));
    if (!net->gather_ids || (net->hp.n_expert && !net->moe_ids)) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    return llm__net_op(llm_buffer_alloc(net->be, net->a.bytes, &net->arena));
}

/* Weights offered to the backend once loaded (llm__net_prepare), the LM
 * head first: the architecture's load may have tied it to the token
 * embedding (no MATMUL entry then), and it is the largest, so its file pages
 * and its copy are resident together only while nothing else is copied yet
 * (peak RSS the file's, not the file's plus the head's). */
static llm_status prepare_weights(llm_net *net) {
    llm_status st = net->output.buffer ? llm__net_prepare(net, &net->output) : LLM_OK;
    return st == LLM_OK ? llm__table_prepare(net) : st;
}

llm_status llm_net_create(const llm_model_desc *desc, llm_backend *be,
                          const llm_net_params *params, llm_net **out) {
    if (!out) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_create: out is NULL");
    }
    *out = NULL;
    if (!desc || !be) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_create: NULL descriptor or backend");
    }
    llm_net_params p = params ? *params : llm_net_default_params();
    llm_status pst = check_params(&p, "llm_net_create");
    if (pst != LLM_OK) {
        return pst;
    }
    const llm__arch *a = llm__arch_find(llm_model_desc_arch(desc));
    if (!a) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "architecture '%s' has no forward",
                            llm_model_desc_arch(desc) ? llm_model_desc_arch(desc) : "?");
    }
    llm_net *net = calloc(1, sizeof(*net));
    if (!net) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    net->desc = desc;
    net->arch = a;
    net->be = be;
    net->hp = *llm_model_desc_hparams(desc);
    net->p = p;
    llm_status st = check_kv_blocks(&net->hp, &p, a->encoder, "llm_net_create");
    if (st == LLM_OK) {
        st = wrap_files(net);
    }
    if (st == LLM_OK) {
        st = llm__table_load(net);
    }
    if (st == LLM_OK) {
        st = a->load(net);
    }
    if (st == LLM_OK) {
        st = prepare_weights(net);
    }
    if (st == LLM_OK) {
        st = make_arena(net);
    }
    if (st != LLM_OK) {
        llm_net_free(net);
        return st;
    }
    *out = net;
    return LLM_OK;
}

void llm_net_free(llm_net *net) {
    if (!net) {
        return;
    }
    llm_buffer_free(net->arena);
    for (uint32_t i = 0; i < net->n_wbufs; i++) {
        llm_buffer_free(net->wbufs[i]);
    }
    free(net->wbufs);
    for (uint32_t i = 0; i < net->n_vecs; i++) {
        llm_buffer_free(net->vecs[i]);
    }
    free(net->vecs);
    free(net->layers);
    free(net->gather_ids);
    free(net->row_ids);
    free(net->moe_ids);
    free(net);
}

const llm_model_hparams *llm_net_hparams(const llm_net *net) { return &net->hp; }
int32_t llm_net_max_batch(const llm_net *net) { return net->p.max_batch; }
llm_backend *llm_net_backend(const llm_net *net) { return net->be; }

size_t llm_net_kv_bytes_per_token_layer(const llm_net *net) {
    return kv_bytes_per_token_layer(&net->hp, &net->p, net->arch->encoder);
}

int llm_net_is_encoder(const llm_net *net) { return net && net->arch->encoder; }

/* ------------------------------------------------------------------- kv -- */

int llm_net_layer_is_swa(const llm_net *net, int32_t layer) {
    return net && layer >= 0 && !net->arch->encoder && llm__layer_is_swa(&net->hp, (uint32_t)layer);
}

llm_status llm_net_kv_create(llm_net *net, int32_t n_blocks, int32_t block_size, llm_net_kv **out) {
    return llm_net_kv_create_swa(net, n_blocks, 0, block_size, out);
}

llm_status llm_net_kv_create_swa(llm_net *net, int32_t n_blocks, int32_t n_blocks_swa, int32_t block_size,
                                 llm_net_kv **out) {
    if (!out) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: out is NULL");
    }
    *out = NULL;
    if (!net || n_blocks < 1 || block_size < 1 || n_blocks_swa < 0) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: need n_blocks, block_size >= 1");
    }
    if (n_blocks_swa > 0 && (net->arch->encoder || n_layer_swa(&net->hp) == 0)) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: %s has no sliding-window layers",
                            net->arch->tag);
    }
    if (net->arch->encoder) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: %s is an encoder: it has no KV cache",
                            net->arch->tag);
    }
    const uint32_t L = net->hp.n_layer;
    llm_net_kv *kv = calloc(1, sizeof(*kv));
    if (!kv) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    kv->net = net;
    kv->n_blocks = n_blocks;
    kv->block_size = block_size;
    kv->n_blocks_swa = n_blocks_swa;
    kv->k = calloc(L, sizeof(*kv->k));
    kv->v = calloc(L, sizeof(*kv->v));
    kv->kt = calloc(L, sizeof(*kv->kt));
    kv->vt = calloc(L, sizeof(*kv->vt));
    llm_status st = (kv->k && kv->v && kv->kt && kv->vt) ? LLM_OK
                                                         : llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    /* A backend that cannot write or read a cache type says so now. */
    const llm_dtype types[2] = {net->p.type_k, net->p.type_v};
    for (int w = 0; st == LLM_OK && w < 2; w++) {
        if (!llm_backend_supports(net->be, LLM_OP_KV_WRITE, types[w]) ||
            !llm_backend_supports(net->be, LLM_OP_ATTENTION, types[w])) {
            st = llm__net_err(LLM_ERR_UNSUPPORTED, "llm_net_kv_create: a %s %s cache is not supported on %s",
                              llm_dtype_name(types[w]), w ? "V" : "K", llm_backend_name(net->be));
        }
    }
    const size_t slot_k = (size_t)net->hp.n_head_kv * kv_row_bytes(&net->hp, net->p.type_k);
    const size_t slot_v = (size_t)net->hp.n_head_kv * kv_row_bytes(&net->hp, net->p.type_v);
    for (uint32_t l = 0; st == LLM_OK && l < L; l++) {
        if (llm__layer_is_recurrent(&net->hp, l)) {
            continue; /* no K/V: its state lives in the state slots (kt/vt stay empty) */
        }
        const int32_t nb = llm__kv_in_swa_group(kv, l) ? n_blocks_swa : n_blocks;
        st = llm__net_op(llm_buffer_alloc(net->be, slot_k * (size_t)block_size * (size_t)nb, &kv->k[l]));
        if (st == LLM_OK) {
            st = llm__net_op(llm_buffer_alloc(net->be, slot_v * (size_t)block_size * (size_t)nb, &kv->v[l]));
        }
        if (st == LLM_OK) {
            /* [n_blocks][n_head_kv][block_size][head_dim] (runtime.h) */
            kv->kt[l] = llm_tensor_4d(kv->k[l], 0, net->p.type_k, net->hp.head_dim, block_size,
                                      net->hp.n_head_kv, nb);
            kv->vt[l] = llm_tensor_4d(kv->v[l], 0, net->p.type_v, net->hp.head_dim, block_size,
                                      net->hp.n_head_kv, nb);
        }
    }
    if (st != LLM_OK) {
        llm_net_kv_free(kv);
        return st;
    }
    *out = kv;
    return LLM_OK;
}

void llm_net_kv_free(llm_net_kv *kv) {
    if (!kv) {
        return;
    }
    const uint32_t L = kv->net->hp.n_layer;
    for (uint32_t l = 0; l < L; l++) {
        llm_buffer_free(kv->k ? kv->k[l] : NULL);
        llm_buffer_free(kv->v ? kv->v[l] : NULL);
    }
    free(kv->k);
    free(kv->v);
    free(kv->kt);
    free(kv->vt);
    llm_buffer_free(kv->state);
    free(kv->state_pos);
    free(kv);
}

/* ---------------------------------------------------------- recurrent state -- */

int llm_net_is_recurrent(const llm_net *net) { return net && !net->arch->encoder && net->hp.ssm_n_layer > 0; }

size_t llm_net_state_bytes(const llm_net *net) {
    if (!llm_net_is_recurrent(net)) return 0;
    return (llm__ssm_conv_bytes(&net->hp) + llm__ssm_delta_bytes(&net->hp)) * net->hp.ssm_n_layer;
}

llm_status llm_net_kv_state_alloc(llm_net_kv *kv, int32_t n_slots) {
    if (!kv || !llm_net_is_recurrent(kv->net) || n_slots < 1 || kv->state) {
        return llm__net_err(LLM_ERR_INVALID_ARG,
                            "llm_net_kv_state_alloc: needs a recurrent net, n_slots >= 1, and no slots yet");
    }
    const size_t bytes = llm_net_state_bytes(kv->net);
    if ((size_t)n_slots + 1 > SIZE_MAX / bytes) return llm__net_err(LLM_ERR_NO_MEMORY, "recurrent state too large");
    kv->state_pos = malloc(((size_t)n_slots + 1) * sizeof(int32_t));
    if (!kv->state_pos) return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; i <= n_slots; i++) kv->state_pos[i] = -1;
    /* Region 0 stays zero: a sequence starting at position 0 copies it over its slot. */
    llm_status st = llm__net_op(llm_buffer_alloc(kv->net->be, bytes * ((size_t)n_slots + 1), &kv->state));
    if (st != LLM_OK) {
        free(kv->state_pos);
        kv->state_pos = NULL;
        kv->state = NULL;
        return st;
    }
    kv->n_state_slots = n_slots;
    kv->state_slot_bytes = bytes;
    return LLM_OK;
}

int32_t llm_net_kv_state_slots(const llm_net_kv *kv) { return kv ? kv->n_state_slots : 0; }

llm_status llm_net_kv_state_copy(llm_net_kv *kv, int32_t src, int32_t dst) {
    if (!kv || src < 1 || src > kv->n_state_slots || dst < 1 || dst > kv->n_state_slots) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_state_copy: slot out of range");
    }
    if (src == dst) return LLM_OK;
    kv->state_pos[dst] = -1;
    if (kv->state_pos[src] < 0) return LLM_OK; /* nothing valid to copy */
    llm_status st = llm_buffer_copy(kv->state, (size_t)dst * kv->state_slot_bytes, kv->state,
                                    (size_t)src * kv->state_slot_bytes, kv->state_slot_bytes);
    if (st != LLM_OK) return llm__net_op(st);
    kv->state_pos[dst] = kv->state_pos[src];
    return LLM_OK;
}

void llm_net_kv_state_reset(llm_net_kv *kv, int32_t slot) {
    if (kv && slot >= 1 && slot <= kv->n_state_slots) kv->state_pos[slot] = -1;
}

int32_t llm_net_kv_state_pos(const llm_net_kv *kv, int32_t slot) {
    return kv && slot >= 1 && slot <= kv->n_state_slots ? kv->state_pos[slot] : -1;
}

int32_t llm_net_kv_block_size(const llm_net_kv *kv) { return kv->block_size; }
int32_t llm_net_kv_n_blocks(const llm_net_kv *kv) { return kv->n_blocks; }

int32_t llm_net_kv_n_blocks_swa(const llm_net_kv *kv) { return kv->n_blocks_swa; }

/* Copies slots [0, n_tokens) of block src to dst in the layers of one group
 * (swa: the window group of a split storage, else the main one). */
static llm_status copy_block_group(llm_net_kv *kv, int swa, int32_t src, int32_t dst, int32_t n_tokens) {
    const int32_t nb = swa ? kv->n_blocks_swa : kv->n_blocks;
    if (src < 0 || src >= nb || dst < 0 || dst >= nb || n_tokens < 0 || n_tokens > kv->block_size) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_copy_block: bad block or token count");
    }
    if (src == dst || n_tokens == 0) {
        return LLM_OK;
    }
    for (uint32_t l = 0; l < kv->net->hp.n_layer; l++) {
        if (llm__kv_in_swa_group(kv, l) != swa || !kv->k[l]) {
            continue; /* the other group, or a recurrent layer (no K/V) */
        }
        const llm_tensor *t[2] = {&kv->kt[l], &kv->vt[l]};
        for (int w = 0; w < 2; w++) {
            /* ne = {head_dim, block_size, n_head_kv, n_blocks}: a block is
             * nb[3] bytes, a head's rows in it nb[2], its first n_tokens
             * rows n_tokens * nb[1]. A whole block is one copy. */
            const int whole = n_tokens == kv->block_size;
            const int64_t runs = whole ? 1 : t[w]->ne[2];
            const size_t bytes = whole ? t[w]->nb[3] : (size_t)n_tokens * t[w]->nb[1];
            for (int64_t h = 0; h < runs; h++) {
                const size_t at = t[w]->offset + (size_t)h * t[w]->nb[2];
                llm_status st = llm_buffer_copy(t[w]->buffer, at + (size_t)dst * t[w]->nb[3], t[w]->buffer,
                                                at + (size_t)src * t[w]->nb[3], bytes);
                if (st != LLM_OK) {
                    return llm__net_op(st);
                }
            }
        }
    }
    return LLM_OK;
}

llm_status llm_net_kv_copy_block(llm_net_kv *kv, int32_t src, int32_t dst, int32_t n_tokens) {
    if (!kv) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_copy_block: NULL storage");
    }
    return copy_block_group(kv, 0, src, dst, n_tokens);
}

llm_status llm_net_kv_copy_block_swa(llm_net_kv *kv, int32_t src, int32_t dst, int32_t n_tokens) {
    if (!kv || kv->n_blocks_swa == 0) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_copy_block_swa: no separate window group");
    }
    return copy_block_group(kv, 1, src, dst, n_tokens);
}

llm_status llm_net_kv_layer(const llm_net_kv *kv, int32_t layer, llm_tensor *k, llm_tensor *v) {
    if (!kv || layer < 0 || (uint32_t)layer >= kv->net->hp.n_layer || !k || !v) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_layer: bad layer");
    }
    if (!kv->k[layer]) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_layer: layer %d is recurrent: it has no K/V", layer);
    }
    *k = kv->kt[layer];
    *v = kv->vt[layer];
    return LLM_OK;
}

/* -------------------------------------------------------------- forward -- */

/* An encoder's batch: no cache, so no block tables; every sequence holds
 * positions 0..n_tokens-1 of one text (each attends only to itself). */
static llm_status encoder_forward(llm_net *net, const llm_net_batch *b) {
    if (!b->tokens || !b->positions || b->n_tokens < 1 || b->n_tokens > net->p.max_batch || !b->seqs ||
        b->n_seqs < 1) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: need 1..%d tokens and >= 1 sequence",
                            net->p.max_batch);
    }
    if (b->logits_mode != LLM_LOGITS_NONE || !b->hidden) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: %s is an encoder: hidden states only",
                            net->arch->tag);
    }
    int64_t total = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const int32_t ns = b->seqs[s].n_tokens;
        if (ns < 1 || ns > b->n_tokens - total) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d is empty or too long", s);
        }
        for (int32_t i = 0; i < ns; i++) {
            if (b->positions[total + i] != i) {
                return llm__net_err(LLM_ERR_INVALID_ARG,
                                    "llm_net_forward: an encoder's sequence %d must hold positions 0..%d", s, ns - 1);
            }
        }
        total += ns;
    }
    if (total != b->n_tokens) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequences cover %lld of %d tokens",
                            (long long)total, b->n_tokens);
    }
    for (int32_t i = 0; i < b->n_tokens; i++) {
        if (b->tokens[i] < 0 || (uint32_t)b->tokens[i] >= net->hp.n_vocab) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: token %d out of range", b->tokens[i]);
        }
    }
    return net->arch->forward(net, NULL, b);
}

/* A recurrent net's sequences: each has its own state slot, consecutive
 * positions, and starts at 0 (the slot is zeroed) or where its slot stopped.
 * Every slot of the batch is then marked invalid until the pass completes. */
static llm_status recurrent_begin(llm_net_kv *kv, const llm_net_batch *b) {
    int64_t t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const llm_net_seq *sq = &b->seqs[s];
        const int32_t slot = b->state_slots ? b->state_slots[s] : 0, p0 = b->positions[t0];
        if (slot < 1 || slot > kv->n_state_slots) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d has no recurrent state slot "
                                "(%d of %d)", s, slot, kv->n_state_slots);
        }
        for (int32_t o = 0; o < s; o++) {
            if (b->state_slots[o] == slot) {
                return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequences %d and %d share state slot %d",
                                    o, s, slot);
            }
        }
        for (int32_t i = 1; i < sq->n_tokens; i++) {
            if (b->positions[t0 + i] != p0 + i) {
                return llm__net_err(LLM_ERR_INVALID_ARG,
                                    "llm_net_forward: a recurrent net needs consecutive positions (sequence %d)", s);
            }
        }
        if (p0 != 0 && kv->state_pos[slot] != p0) {
            return llm__net_err(LLM_ERR_INVALID_ARG,
                                "llm_net_forward: sequence %d starts at %d but its recurrent state is at %d "
                                "(recompute it from position 0)", s, p0, kv->state_pos[slot]);
        }
        t0 += sq->n_tokens;
    }
    t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const int32_t slot = b->state_slots[s];
        kv->state_pos[slot] = -1;
        if (b->positions[t0] == 0) {
            llm_status st = llm_buffer_copy(kv->state, (size_t)slot * kv->state_slot_bytes, kv->state, 0,
                                            kv->state_slot_bytes);
            if (st != LLM_OK) return llm__net_op(st);
        }
        t0 += b->seqs[s].n_tokens;
    }
    return LLM_OK;
}

llm_status llm_net_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    if (net && b && net->arch->encoder) {
        return encoder_forward(net, b);
    }
    if (!net || !kv || !b || kv->net != net) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: NULL or mismatched net/kv/batch");
    }
    if (!b->tokens || !b->positions || b->n_tokens < 1 || b->n_tokens > net->p.max_batch ||
        !b->seqs || b->n_seqs < 1) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: need 1..%d tokens and >= 1 sequence",
                            net->p.max_batch);
    }
    if (b->logits_mode != LLM_LOGITS_NONE && b->logits_mode != LLM_LOGITS_LAST &&
        b->logits_mode != LLM_LOGITS_ALL) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: bad logits_mode");
    }
    if (b->logits_mode != LLM_LOGITS_NONE && !b->logits) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: logits is NULL");
    }
    int64_t total = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const llm_net_seq *sq = &b->seqs[s];
        if (sq->n_tokens < 1 || !sq->block_table || sq->n_table < 1) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d is empty", s);
        }
        for (int32_t i = 0; i < sq->n_table; i++) {
            if (sq->block_table[i] < 0 || sq->block_table[i] >= kv->n_blocks) {
                return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: block %d out of range",
                                    sq->block_table[i]);
            }
        }
        for (int32_t i = 0; i < sq->n_tokens; i++) {
            int32_t p = b->positions[total + i];
            if (p < 0 || p / kv->block_size >= sq->n_table) {
                return llm__net_err(LLM_ERR_INVALID_ARG,
                                    "llm_net_forward: position %d outside sequence %d's blocks", p, s);
            }
        }
        if (kv->n_blocks_swa > 0) {
            /* The window group's table: released entries (-1) are allowed;
             * the attention op checks those its window reads. */
            if (!sq->block_table_swa || sq->n_table_swa < 1) {
                return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d has no window table", s);
            }
            for (int32_t i = 0; i < sq->n_table_swa; i++) {
                if (sq->block_table_swa[i] < -1 || sq->block_table_swa[i] >= kv->n_blocks_swa) {
                    return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: window block %d out of range",
                                        sq->block_table_swa[i]);
                }
            }
            for (int32_t i = 0; i < sq->n_tokens; i++) {
                const int32_t p = b->positions[total + i];
                if (p / kv->block_size >= sq->n_table_swa || sq->block_table_swa[p / kv->block_size] < 0) {
                    return llm__net_err(LLM_ERR_INVALID_ARG,
                                        "llm_net_forward: position %d outside sequence %d's window blocks", p, s);
                }
            }
        }
        total += sq->n_tokens;
    }
    if (total != b->n_tokens) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequences cover %lld of %d tokens",
                            (long long)total, b->n_tokens);
    }
    for (int32_t i = 0; i < b->n_tokens; i++) {
        if (b->tokens[i] < 0 || (uint32_t)b->tokens[i] >= net->hp.n_vocab) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: token %d out of range",
                                b->tokens[i]);
        }
    }
    if (!llm_net_is_recurrent(net)) {
        return net->arch->forward(net, kv, b);
    }
    llm_status st = recurrent_begin(kv, b);
    if (st == LLM_OK) {
        st = net->arch->forward(net, kv, b);
    }
    /* Only a whole pass leaves valid states (recurrent_begin invalidated them). */
    int64_t t0 = 0;
    for (int32_t s = 0; st == LLM_OK && s < b->n_seqs; s++) {
        t0 += b->seqs[s].n_tokens;
        kv->state_pos[b->state_slots[s]] = b->positions[t0 - 1] + 1;
    }
    return st;
}
