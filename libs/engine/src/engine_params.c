/* Default parameter structs and small parsers. */
#include <string.h>

#include "engine_internal.h"

const char *llm_engine_version(void) { return "0.1.0"; }

llm_model_params llm_model_default_params(void) {
    llm_model_params p;
    memset(&p, 0, sizeof p);
    p.backend = "auto";
    p.n_threads = 0;
    p.n_ctx = 0;
    p.kv_tokens = 0;
    p.kv_block_size = 16;
    p.kv_type = LLM_KV_F16;
    p.n_batch = 256;
    p.use_mmap = true;
    p.prefix_cache = true;
    return p;
}

llm_sampling_params llm_sampling_default_params(void) {
    llm_sampling_params p;
    memset(&p, 0, sizeof p);
    p.seed = 0xC0FFEEu;
    p.temperature = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 64;
    return p;
}

llm_session_params llm_session_default_params(void) {
    llm_session_params p;
    memset(&p, 0, sizeof p);
    p.n_ctx = 0;
    p.sampling = llm_sampling_default_params();
    return p;
}

llm_status llm_pooling_from_string(const char *s, llm_pooling *out) {
    if (!s || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_pooling_from_string: NULL argument");
    if (strcmp(s, "mean") == 0) *out = LLM_POOLING_MEAN;
    else if (strcmp(s, "cls") == 0) *out = LLM_POOLING_CLS;
    else if (strcmp(s, "last") == 0) *out = LLM_POOLING_LAST;
    else return llm__fail(NULL, LLM_ERR_INVALID_ARG, "unknown pooling '%s' (expected mean, cls or last)", s);
    return LLM_OK;
}
