/*
 * arch/net_plan.c -- memory planning and a net's params: the defaults and
 * checks of llm_net_params, the activation arena's slots for max_batch
 * tokens, and the bytes of K/V per token and of recurrent state.
 * llm_net_plan reports what llm_net_create and llm_net_kv_create will
 * allocate, from the same functions.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "arch/arch_internal.h"

llm_net_params llm_net_default_params(void) {
    llm_net_params p;
    memset(&p, 0, sizeof(p));
    p.max_batch = 512;
    p.type_k = LLM_DTYPE_F16;
    p.type_v = LLM_DTYPE_F16;
    return p;
}

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* The arena's slots for max_batch tokens. llm_net_plan reports exactly what
 * llm_net_create allocates, since both call this. */
void llm__net_arena_layout(const llm__arch *arch, const llm_model_hparams *hp, const llm_net_params *p,
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

static size_t kv_bytes_per_token_layer(const llm_model_hparams *hp, const llm_net_params *p, int encoder) {
    if (encoder) return 0; /* no KV cache */
    return (size_t)hp->n_head_kv * (llm__kv_row_bytes(hp, p->type_k) + llm__kv_row_bytes(hp, p->type_v));
}

llm_status llm__net_check_params(const llm_net_params *p, const char *fn) {
    if (p->max_batch < 1 || p->max_batch > (1 << 20) || !kv_type_ok(p->type_k) || !kv_type_ok(p->type_v) ||
        p->n_ctx_seq < 0 || p->ffn_rows < 0 || p->ffn_rows > (1 << 20)) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "%s: bad max_batch, type_k, type_v, n_ctx_seq or ffn_rows", fn);
    }
    return LLM_OK;
}

/* A quantized cache row is whole blocks: head_dim must divide by the block. */
llm_status llm__net_check_kv_blocks(const llm_model_hparams *hp, const llm_net_params *p, int encoder,
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
    llm_status st = llm__net_check_params(&p, "llm_net_plan");
    if (st != LLM_OK) {
        return st;
    }
    const llm__arch *arch = llm__arch_find(llm_model_desc_arch(desc));
    if (!arch) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "architecture '%s' has no forward",
                            llm_model_desc_arch(desc) ? llm_model_desc_arch(desc) : "?");
    }
    const llm_model_hparams *hp = llm_model_desc_hparams(desc);
    st = llm__net_check_kv_blocks(hp, &p, arch->encoder, "llm_net_plan");
    if (st != LLM_OK) {
        return st;
    }
    llm__arena_layout a;
    llm__net_arena_layout(arch, hp, &p, &a);
    out->arena_bytes = a.bytes;
    out->host_bytes = (size_t)p.max_batch * sizeof(int32_t) * (1 + (hp->n_expert ? hp->n_expert_used : 0));
    out->kv_bytes_per_token_layer = kv_bytes_per_token_layer(hp, &p, arch->encoder);
    /* Recurrent layers (qwen35's Gated DeltaNet) keep a state, not K/V. */
    const uint32_t n_kv_layers = hp->n_layer - (arch->encoder || hp->ssm_d_conv == 0 ? 0 : hp->ssm_n_layer);
    out->kv_bytes_per_token = out->kv_bytes_per_token_layer * n_kv_layers;
    if (!arch->encoder && hp->ssm_d_conv > 0) {
        out->state_bytes = (llm__ssm_conv_bytes(hp) + llm__ssm_delta_bytes(hp)) * hp->ssm_n_layer;
    }
    if (!arch->encoder && llm__n_layer_swa(hp) > 0) {
        out->n_layer_swa = (int32_t)llm__n_layer_swa(hp);
        out->n_swa = (int32_t)hp->n_swa;
        out->kv_bytes_per_token_swa = out->kv_bytes_per_token_layer * (size_t)out->n_layer_swa;
    }
    return LLM_OK;
}

size_t llm_net_kv_bytes_per_token_layer(const llm_net *net) {
    return kv_bytes_per_token_layer(&net->hp, &net->p, net->arch->encoder);
}
