/* Default parameter structs and small parsers. */
#include <string.h>
#include <strings.h>

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
    p.type_k = LLM_KV_F16;
    p.type_v = LLM_KV_F16;
    p.n_batch = 256;
    p.prefix_cache = true;
    p.vocab_only = false;
    return p;
}

static const char *const kv_type_names[] = {"f16", "f32", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1"};

const char *llm_kv_type_name(llm_kv_type t) {
    return (int)t >= 0 && (size_t)t < sizeof kv_type_names / sizeof kv_type_names[0] ? kv_type_names[t] : NULL;
}

llm_status llm_kv_type_from_name(const char *name, llm_kv_type *out) {
    if (!name || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_kv_type_from_name: NULL argument");
    for (size_t i = 0; i < sizeof kv_type_names / sizeof kv_type_names[0]; i++) {
        if (strcasecmp(name, kv_type_names[i]) == 0) {
            *out = (llm_kv_type)i;
            return LLM_OK;
        }
    }
    return llm__fail(NULL, LLM_ERR_INVALID_ARG,
                     "unknown KV cache type '%s' (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1)", name);
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

/* engine.h keeps its own llm_sampling_params (the narrow waist exposes no
 * type of a lower library, and apps have no use for n_vocab_max, logit-bias
 * pointers or min_keep); this is the one place it becomes the sampling
 * library's llm_sampler_params. Every shared field must have the same type
 * on both sides, or the build fails here. */
#define LLM__SAME_FIELD(a, fa, b, fb)                                                        \
    _Static_assert(sizeof(((a *)0)->fa) == sizeof(((b *)0)->fb) &&                          \
                       _Generic(((a *)0)->fa, float: 1, double: 1, default: 0) ==           \
                           _Generic(((b *)0)->fb, float: 1, double: 1, default: 0),         \
                   #a "." #fa " and " #b "." #fb " differ in type")
LLM__SAME_FIELD(llm_sampling_params, seed, llm_sampler_params, seed);
LLM__SAME_FIELD(llm_sampling_params, temperature, llm_sampler_params, temperature);
LLM__SAME_FIELD(llm_sampling_params, top_k, llm_sampler_params, top_k);
LLM__SAME_FIELD(llm_sampling_params, top_p, llm_sampler_params, top_p);
LLM__SAME_FIELD(llm_sampling_params, min_p, llm_sampler_params, min_p);
LLM__SAME_FIELD(llm_sampling_params, repeat_penalty, llm_sampler_params, repeat_penalty);
LLM__SAME_FIELD(llm_sampling_params, repeat_last_n, llm_sampler_params, penalty_window);
LLM__SAME_FIELD(llm_sampling_params, presence_penalty, llm_sampler_params, presence_penalty);
LLM__SAME_FIELD(llm_sampling_params, frequency_penalty, llm_sampler_params, frequency_penalty);
/* llm_sampling_params has 9 fields, all listed above: one 8-byte seed and
 * eight 4-byte fields. The size check catches a field added to engine.h
 * without a line here and in llm__sampler_params_from. */
_Static_assert(sizeof(llm_sampling_params) == sizeof(uint64_t) + 8 * 4,
               "llm_sampling_params gained a field: convert it in llm__sampler_params_from");

llm_sampler_params llm__sampler_params_from(const llm_sampling_params *sp, int32_t n_vocab) {
    llm_sampler_params p = llm_sampler_default_params();
    p.n_vocab_max = n_vocab;
    p.seed = sp->seed;
    p.temperature = sp->temperature;
    p.top_k = sp->top_k;
    p.top_p = sp->top_p;
    p.min_p = sp->min_p;
    p.typical_p = 1.0f; /* not in engine.h: off */
    p.repeat_penalty = sp->repeat_penalty;
    p.presence_penalty = sp->presence_penalty;
    p.frequency_penalty = sp->frequency_penalty;
    p.penalty_window = sp->repeat_last_n;
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
    else if (strcmp(s, "max") == 0) *out = LLM_POOLING_MAX;
    else if (strcmp(s, "mean_sqrt_len") == 0) *out = LLM_POOLING_MEAN_SQRT_LEN;
    else if (strcmp(s, "model") == 0) *out = LLM_POOLING_MODEL;
    else return llm__fail(NULL, LLM_ERR_INVALID_ARG,
                          "unknown pooling '%s' (expected mean, cls, last, max, mean_sqrt_len or model)", s);
    return LLM_OK;
}
