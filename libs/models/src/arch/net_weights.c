/*
 * arch/net_weights.c -- a net's weights as runtime tensors: one wrapped
 * buffer per source file of the descriptor, tensors as views into them, F32
 * copies of a checkpoint's F16/BF16 vectors, and the hand-over of a weight
 * to the backend's own layout (which lets the file's pages go).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "arch/net_internal.h"
#include "formats/desc_internal.h"

/* One wrapped buffer per source file, spanning from the file start (data -
 * file_offset) to the end of its last tensor. */
llm_status llm__net_wrap_files(llm_net *net) {
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

llm_status llm__net_prepare(llm_net *net, const llm_tensor *w) {
    int kept = 0;
    llm_status st = llm__net_op(llm_backend_prepare_weight(net->be, w, &kept));
    for (int64_t i = 0; st == LLM_OK && kept && i < llm_model_desc_tensor_count(net->desc); i++) {
        const llm_model_tensor *t = llm_model_desc_tensor_at(net->desc, i);
        if (t->file_index < net->n_wbufs && net->wbufs[t->file_index] == w->buffer && t->file_offset == w->offset) {
            llm__desc_release_tensor(net->desc, t);
            break;
        }
    }
    return st;
}
