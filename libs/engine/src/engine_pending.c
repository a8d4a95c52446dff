/* TEMPORARY: entry points whose lower libraries have not landed yet. Each
 * returns LLM_ERR_UNSUPPORTED with a message saying what is missing; they are
 * replaced one by one as libs/models, runtime, tokenizer, sampling, kv land. */
#include <stddef.h>

#include "engine_internal.h"

#define PENDING(what) llm__fail(NULL, LLM_ERR_UNSUPPORTED, "%s: not wired yet (lower library pending)", what)

llm_status llm_model_plan(const char *path, const llm_model_params *params, llm_memory_plan *plan) {
    (void)path; (void)params; (void)plan;
    return PENDING("llm_model_plan");
}
llm_status llm_load_model(const char *path, const llm_model_params *params, llm_model **out) {
    (void)path; (void)params;
    if (out) *out = NULL;
    return PENDING("llm_load_model");
}
void llm_model_free(llm_model *model) { (void)model; }
const char *llm_model_last_error(const llm_model *model) { (void)model; return llm_last_error(); }
llm_status llm_model_get_info(const llm_model *model, llm_model_info *info) {
    (void)model; (void)info;
    return PENDING("llm_model_get_info");
}
bool llm_token_is_eog(const llm_model *model, llm_token tok) { (void)model; (void)tok; return false; }
llm_status llm_tokenize(const llm_model *model, const char *text, size_t len, unsigned flags,
                        llm_token *out, int32_t cap, int32_t *n_out) {
    (void)model; (void)text; (void)len; (void)flags; (void)out; (void)cap; (void)n_out;
    return PENDING("llm_tokenize");
}
llm_status llm_detokenize(const llm_model *model, const llm_token *tokens, int32_t n,
                          bool render_special, char *buf, size_t cap, int32_t *n_out) {
    (void)model; (void)tokens; (void)n; (void)render_special; (void)buf; (void)cap; (void)n_out;
    return PENDING("llm_detokenize");
}
llm_status llm_token_stream_new(const llm_model *model, bool render_special, llm_token_stream **out) {
    (void)model; (void)render_special;
    if (out) *out = NULL;
    return PENDING("llm_token_stream_new");
}
llm_status llm_token_stream_push(llm_token_stream *d, llm_token tok, const char **text, size_t *len) {
    (void)d; (void)tok; (void)text; (void)len;
    return PENDING("llm_token_stream_push");
}
llm_status llm_token_stream_flush(llm_token_stream *d, const char **text, size_t *len) {
    (void)d; (void)text; (void)len;
    return PENDING("llm_token_stream_flush");
}
void llm_token_stream_free(llm_token_stream *d) { (void)d; }
llm_status llm_chat_apply(const llm_model *model, const llm_chat_message *msgs, size_t n,
                          bool add_assistant, char *buf, size_t cap, int32_t *n_out) {
    (void)model; (void)msgs; (void)n; (void)add_assistant; (void)buf; (void)cap; (void)n_out;
    return PENDING("llm_chat_apply");
}
llm_status llm_session_new(llm_model *model, const llm_session_params *params, llm_session **out) {
    (void)model; (void)params;
    if (out) *out = NULL;
    return PENDING("llm_session_new");
}
void llm_session_free(llm_session *s) { (void)s; }
llm_status llm_session_reset(llm_session *s) { (void)s; return PENDING("llm_session_reset"); }
llm_status llm_session_set_sampler(llm_session *s, const llm_sampling_params *params) {
    (void)s; (void)params;
    return PENDING("llm_session_set_sampler");
}
llm_status llm_session_set_stop(llm_session *s, const char *const *stops, size_t n) {
    (void)s; (void)stops; (void)n;
    return PENDING("llm_session_set_stop");
}
llm_status llm_prefill(llm_session *s, const llm_token *tokens, int32_t n) {
    (void)s; (void)tokens; (void)n;
    return PENDING("llm_prefill");
}
llm_status llm_prefill_context(llm_session *s, const llm_token *tokens, int32_t n) {
    (void)s; (void)tokens; (void)n;
    return PENDING("llm_prefill_context");
}
llm_status llm_decode(llm_session *s, int32_t max_tokens, llm_token_callback cb, void *user) {
    (void)s; (void)max_tokens; (void)cb; (void)user;
    return PENDING("llm_decode");
}
llm_status llm_session_next_token(llm_session *s, llm_token *tok, const char **text, size_t *len) {
    (void)s; (void)tok; (void)text; (void)len;
    return PENDING("llm_session_next_token");
}
void llm_session_cancel(llm_session *s) { (void)s; }
void llm_session_clear_cancel(llm_session *s) { (void)s; }
int32_t llm_session_n_past(const llm_session *s) { (void)s; return 0; }
int32_t llm_session_n_ctx(const llm_session *s) { (void)s; return 0; }
int32_t llm_session_tokens(const llm_session *s, llm_token *out, int32_t cap) {
    (void)s; (void)out; (void)cap;
    return 0;
}
llm_status llm_session_truncate(llm_session *s, int32_t n_keep) {
    (void)s; (void)n_keep;
    return PENDING("llm_session_truncate");
}
const char *llm_session_last_error(const llm_session *s) { (void)s; return llm_last_error(); }
llm_status llm_session_telemetry(const llm_session *s, llm_telemetry *t) {
    (void)s; (void)t;
    return PENDING("llm_session_telemetry");
}
llm_status llm_embed(llm_model *model, const char *const *texts, size_t n, llm_pooling pooling,
                     bool normalize, float *out, size_t dim) {
    (void)model; (void)texts; (void)n; (void)pooling; (void)normalize; (void)out; (void)dim;
    return PENDING("llm_embed");
}
