/* The model's embedding pipeline (llm_embed_info): pooling, normalization
 * and maximum sequence length, from a sentence-transformers folder
 * (modules.json, the Pooling module's config.json,
 * sentence_bert_config.json) or from GGUF metadata (<arch>.pooling_type);
 * and the special tokens an encoding adds around a text (for truncation).
 * Every file is optional; a present one that is malformed is an error. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "engine_internal.h"

static int is_file(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Loads dir/name when it exists: 1 loaded (*out owned by the caller), 0
 * absent, -1 malformed (message in err). */
static int load_json(const char *dir, const char *name, json_t **out, char *err) {
    char p[4096];
    *out = NULL;
    if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p || !is_file(p)) return 0;
    json_error_t je;
    *out = json_load_file(p, 0, &je);
    if (!*out) {
        llm__fail(err, LLM_ERR_BAD_FORMAT, "%s: invalid JSON: %.100s", p, je.text);
        return -1;
    }
    return 1;
}

static llm_status bad(const llm_model *m, const char *dir, const char *what) {
    (void)m;
    return llm__fail(NULL, LLM_ERR_BAD_FORMAT, "%s: %s", dir, what);
}

/* The Pooling module's config.json: which mode is on. */
static llm_status st_pooling(llm_model *m, const char *dir, const char *sub) {
    llm__embed_cfg *c = &m->embed;
    char name[512];
    if (strstr(sub, "..") || sub[0] == '/' || snprintf(name, sizeof name, "%s%sconfig.json", sub, *sub ? "/" : "") >= (int)sizeof name)
        return bad(m, dir, "modules.json: a module path is not a plain relative path");
    json_t *p = NULL;
    int r = load_json(dir, name, &p, m->err);
    if (r < 0) return llm__fail(NULL, LLM_ERR_BAD_FORMAT, "%s", m->err);
    if (r == 0) return LLM_OK; /* sentence-transformers' default: mean */
    if (!json_is_object(p)) {
        json_decref(p);
        return bad(m, dir, "the Pooling config is not a JSON object");
    }
    static const struct { const char *key; int pooling; } modes[] = {
        {"pooling_mode_mean_tokens", LLM_POOLING_MEAN},
        {"pooling_mode_cls_token", LLM_POOLING_CLS},
        {"pooling_mode_lasttoken", LLM_POOLING_LAST},
        {"pooling_mode_max_tokens", LLM_POOLING_MAX},
        {"pooling_mode_mean_sqrt_len_tokens", LLM_POOLING_MEAN_SQRT_LEN},
        {"pooling_mode_weightedmean_tokens", -1},
    };
    int on = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (!json_is_true(json_object_get(p, modes[i].key))) continue;
        on++;
        if (modes[i].pooling < 0) snprintf(c->unsupported, sizeof c->unsupported, "%s", modes[i].key);
        else c->info.pooling = (llm_pooling)modes[i].pooling;
    }
    json_decref(p);
    if (on > 1) snprintf(c->unsupported, sizeof c->unsupported, "several pooling modes at once");
    c->info.pooling_stated = on > 0;
    return LLM_OK;
}

static llm_status st_folder(llm_model *m, const char *dir) {
    llm__embed_cfg *c = &m->embed;
    json_t *mods = NULL;
    int r = load_json(dir, "modules.json", &mods, m->err);
    if (r < 0) return llm__fail(NULL, LLM_ERR_BAD_FORMAT, "%s", m->err);
    llm_status st = LLM_OK;
    if (r > 0) {
        if (!json_is_array(mods)) st = bad(m, dir, "modules.json is not a list");
        size_t i;
        json_t *mod;
        json_array_foreach(mods, i, mod) {
            if (st) break;
            const char *ty = json_string_value(json_object_get(mod, "type"));
            const char *path = json_string_value(json_object_get(mod, "path"));
            if (!ty) continue;
            if (strstr(ty, "models.Pooling")) st = st_pooling(m, dir, path ? path : "");
            else if (strstr(ty, "models.Normalize")) c->info.normalize = true;
        }
        json_decref(mods);
        if (st) return st;
    }
    json_t *sb = NULL;
    r = load_json(dir, "sentence_bert_config.json", &sb, m->err);
    if (r < 0) return llm__fail(NULL, LLM_ERR_BAD_FORMAT, "%s", m->err);
    if (r > 0) {
        json_t *ms = json_object_get(sb, "max_seq_length");
        if (json_is_integer(ms) && json_integer_value(ms) > 0 && json_integer_value(ms) < c->info.max_tokens)
            c->info.max_tokens = (int32_t)json_integer_value(ms);
        else if (ms && !json_is_null(ms) && !json_is_integer(ms))
            st = bad(m, dir, "sentence_bert_config.json: max_seq_length is not an integer");
        json_decref(sb);
    }
    return st;
}

/* Special tokens the encoding adds around any text: from the encoding of
 * the empty text (e.g. [CLS] [SEP] = one before, one after). */
static llm_status special_frame(llm_model *m) {
    llm_token t[8];
    int32_t n = 0;
    llm_status st = llm_tokenize(m, "", 0, LLM_ENCODE_ADD_SPECIAL, t, 8, &n);
    if (st != LLM_OK) return st;
    llm__embed_cfg *c = &m->embed;
    c->n_prefix = c->n_suffix = 0;
    if (n >= 2) {
        c->n_prefix = 1;
        c->n_suffix = n - 1;
    } else if (n == 1) {
        if (t[0] == m->info.bos) c->n_prefix = 1;
        else c->n_suffix = 1;
    }
    return LLM_OK;
}

llm_status llm__embed_config_load(llm_model *m, const char *path) {
    llm__embed_cfg *c = &m->embed;
    memset(c, 0, sizeof *c);
    c->info.pooling = LLM_POOLING_MEAN;
    c->info.normalize = true;
    c->info.is_encoder = m->info.is_encoder;
    if (!m->info.is_encoder) return LLM_OK; /* decoders: mean, normalized, no truncation */
    /* Encoders: at most the position embeddings, and one forward's batch. */
    const llm_model_hparams *hp = llm_model_desc_hparams(m->desc);
    c->info.max_tokens = (int32_t)hp->n_ctx_train;
    if (c->info.max_tokens > m->n_batch) c->info.max_tokens = m->n_batch;
    llm_status st = LLM_OK;
    if (llm_model_desc_source(m->desc) == LLM_MODEL_SOURCE_SAFETENSORS) {
        c->info.normalize = false; /* only a Normalize module says so */
        st = st_folder(m, path);
    } else {
        switch (hp->pooling_type) {
        case -1: break;
        case 1: c->info.pooling = LLM_POOLING_MEAN, c->info.pooling_stated = true; break;
        case 2: c->info.pooling = LLM_POOLING_CLS, c->info.pooling_stated = true; break;
        case 3: c->info.pooling = LLM_POOLING_LAST, c->info.pooling_stated = true; break;
        default:
            snprintf(c->unsupported, sizeof c->unsupported, "pooling_type %d (%s)", hp->pooling_type,
                     hp->pooling_type == 0 ? "none: token vectors" : "rank: a reranker");
        }
    }
    if (st == LLM_OK) st = special_frame(m);
    return st;
}

llm_status llm_model_embed_info(const llm_model *m, llm_embed_info *out) {
    if (!m || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_model_embed_info: NULL argument");
    if (m->vocab_only) return llm__fail(NULL, LLM_ERR_STATE, "llm_model_embed_info: the model was loaded vocab_only");
    *out = m->embed.info;
    if (m->embed.unsupported[0])
        return llm__fail(NULL, LLM_ERR_UNSUPPORTED, "the model's pooling is not implemented: %s",
                         m->embed.unsupported);
    return LLM_OK;
}

llm_status llm_embed_telemetry(const llm_model *m, llm_embed_stats *out) {
    if (!m || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_embed_telemetry: NULL argument");
    pthread_mutex_lock((pthread_mutex_t *)&m->lock);
    *out = m->embed.stats;
    pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
    return LLM_OK;
}
