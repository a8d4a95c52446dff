/*
 * arch/hparams.c -- readers the architectures' hyper-parameter hooks share:
 * typed GGUF keys, config.json fields, and the derived fields and sanity
 * limits every decoder needs. The keys themselves belong to each arch file.
 */
#include <inttypes.h>
#include <stdint.h>

#include "arch/arch_internal.h"
#include "formats/formats_internal.h"

llm_status llm__gguf_opt_u32(const llm_gguf *g, const char *key, uint32_t *v) {
    llm_status st = llm_gguf_get_u32(g, key, v);
    return st == LLM_ERR_NOT_FOUND ? LLM_OK : st ? llm__models_gguf_error(st) : st;
}

llm_status llm__gguf_req_u32(const llm_model_desc *d, const llm_gguf *g, const char *key, uint32_t *v) {
    llm_status st = llm_gguf_get_u32(g, key, v);
    if (st == LLM_ERR_NOT_FOUND)
        return llm__models_error(st, "model: %s: required metadata '%s' is missing", llm_model_desc_path(d), key);
    return st ? llm__models_gguf_error(st) : st;
}

llm_status llm__gguf_opt_f32(const llm_gguf *g, const char *key, float *v) {
    llm_status st = llm_gguf_get_f32(g, key, v);
    return st == LLM_ERR_NOT_FOUND ? LLM_OK : st ? llm__models_gguf_error(st) : st;
}

llm_status llm__gguf_opt_i32(const llm_gguf *g, const char *key, int32_t *v) {
    llm_status st = llm_gguf_get_i32(g, key, v);
    return st == LLM_ERR_NOT_FOUND ? LLM_OK : st ? llm__models_gguf_error(st) : st;
}

llm_status llm__cfg_u32(const llm_model_desc *d, json_t *cfg, const char *key, int required, uint32_t *v) {
    json_t *x = json_object_get(cfg, key);
    if (!x || json_is_null(x)) {
        if (!required) return LLM_OK;
        return llm__models_error(LLM_ERR_NOT_FOUND, "model: %s: config.json lacks '%s'", llm_model_desc_path(d), key);
    }
    if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > UINT32_MAX)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: config.json '%s' is not a non-negative integer",
                                 llm_model_desc_path(d), key);
    *v = (uint32_t)json_integer_value(x);
    return LLM_OK;
}

llm_status llm__cfg_f32(const llm_model_desc *d, json_t *cfg, const char *key, float *v) {
    json_t *x = json_object_get(cfg, key);
    if (!x || json_is_null(x)) return LLM_OK;
    if (!json_is_number(x))
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: config.json '%s' is not a number",
                                 llm_model_desc_path(d), key);
    *v = (float)json_number_value(x);
    return LLM_OK;
}

void llm__cfg_id(json_t *cfg, const char *key, int32_t *v) {
    json_t *x = json_object_get(cfg, key);
    if (json_is_array(x)) x = json_array_get(x, 0);
    if (json_is_integer(x) && json_integer_value(x) >= 0 && json_integer_value(x) <= INT32_MAX)
        *v = (int32_t)json_integer_value(x);
}

llm_status llm__hparams_finish(llm_model_hparams *hp, const llm_model_desc *d) {
    const char *path = llm_model_desc_path(d), *arch = llm_model_desc_arch(d);
    const llm_model_tensor *emb = llm_model_desc_find_tensor(d, "token_embd.weight");
    if (!emb)
        return llm__models_error(LLM_ERR_NOT_FOUND, "model: %s: %s: required tensor 'token_embd.weight' is missing",
                                 path, arch);
    if (emb->ne[1] <= 0 || emb->ne[1] > INT32_MAX)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: token_embd.weight has %" PRId64 " rows", path,
                                 emb->ne[1]);
    hp->n_vocab = (uint32_t)emb->ne[1];
    if (!hp->n_head_kv) hp->n_head_kv = hp->n_head;
    if (hp->n_embd == 0 || hp->n_layer == 0 || hp->n_head == 0 || hp->n_ff == 0 || hp->n_layer > 100000 ||
        hp->n_head_kv == 0 || hp->n_head % hp->n_head_kv != 0)
        return llm__models_error(LLM_ERR_BAD_FORMAT,
                                 "model: %s: %s: implausible hyper-parameters (n_embd %u, n_layer %u, n_head %u, "
                                 "n_head_kv %u, n_ff %u)",
                                 path, arch, hp->n_embd, hp->n_layer, hp->n_head, hp->n_head_kv, hp->n_ff);
    if (!hp->head_dim) {
        if (hp->n_embd % hp->n_head)
            return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: n_embd %u is not a multiple of n_head %u", path,
                                     hp->n_embd, hp->n_head);
        hp->head_dim = hp->n_embd / hp->n_head;
    }
    if (!hp->n_rot) hp->n_rot = hp->head_dim;
    if (hp->n_rot > hp->head_dim || hp->n_rot % 2)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: rope dimension %u invalid for head_dim %u", path,
                                 hp->n_rot, hp->head_dim);
    if ((uint64_t)hp->n_head * hp->head_dim > INT32_MAX)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: n_head x head_dim too large", path);
    hp->tied_embeddings = llm_model_desc_find_tensor(d, "output.weight") == NULL;
    int32_t *ids[4] = {&hp->bos_id, &hp->eos_id, &hp->pad_id, &hp->unk_id};
    for (int i = 0; i < 4; i++)
        if (*ids[i] < -1 || *ids[i] >= (int32_t)hp->n_vocab) *ids[i] = -1; /* out of vocab: absent */
    return LLM_OK;
}
