/* llm_chat_apply: renders a conversation with the model's chat template
 * through libs/tokenizer's chat module. llm_chat_message is the one type of
 * llama/types.h, so the engine passes the caller's messages straight on. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "llama/chat.h"
#include "llama/engine.h"

#include "engine_chat_bridge.h"
#include "engine_error.h"

llm_status llm_chat_apply(const llm_model *m, const llm_chat_message *msgs, size_t n,
                          bool add_assistant, char *buf, size_t cap, int32_t *n_out) {
    if (!m || !n_out || (!msgs && n) || (!buf && cap))
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_chat_apply: invalid argument");
    /* Const and thread-safe: the message goes to this thread's llm_last_error()
     * only, never into the shared model (see engine_error.h). */
    char *err = NULL;
    const char *tmpl_str = llm__model_chat_template(m);
    llm_chat_params p = llm_chat_default_params();
    p.bos_token = llm__model_bos_text(m);
    p.eos_token = llm__model_eos_text(m);
    p.add_generation_prompt = add_assistant;
    size_t len = 0;
    char dummy[1];
    llm_status st;
    if (!tmpl_str || !*tmpl_str) {
        /* documented fallback for models without a template */
        st = llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, msgs, n, &p, buf ? buf : dummy, buf ? cap : 0, &len);
    } else {
        /* the model's own Jinja template; the recognised family renderer if
         * the template uses something the interpreter does not implement */
        st = llm_chat_render_template(tmpl_str, msgs, n, &p, buf ? buf : dummy, buf ? cap : 0, &len);
    }
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        *n_out = -(int32_t)(len + 1); /* room for the NUL the renderer always writes */
        return llm__fail(err, st, "chat buffer too small: %zu bytes needed", len + 1);
    }
    if (st == LLM_ERR_UNSUPPORTED || st == LLM_ERR_BAD_FORMAT)
        return llm__fail(err, LLM_ERR_UNSUPPORTED, "the model's chat template cannot be rendered: %s",
                         llm_chat_last_error());
    if (st != LLM_OK) return llm__fail(err, st, "chat template: %s", llm_chat_last_error());
    if (len > INT32_MAX) return llm__fail(err, LLM_ERR_INVALID_ARG, "rendered chat too long");
    *n_out = (int32_t)len;
    return LLM_OK;
}

static llm_status json_fail(char *err, size_t err_cap, llm_status st, const char *msg) {
    if (err && err_cap) {
        size_t n = strlen(msg);
        if (n >= err_cap) n = err_cap - 1;
        memcpy(err, msg, n);
        err[n] = '\0';
    }
    return st;
}

llm_status llm_chat_apply_json(const llm_model *m, const char *template_str, const char *request_json,
                               char **out, size_t *out_len, char *err, size_t err_cap) {
    if (err && err_cap) err[0] = '\0';
    if (!out || !out_len || !request_json || (!m && !template_str))
        return json_fail(err, err_cap, LLM_ERR_INVALID_ARG, "llm_chat_apply_json: invalid argument");
    *out = NULL;
    *out_len = 0;
    const char *tmpl_str = template_str ? template_str : llm__model_chat_template(m);
    if (!tmpl_str || !*tmpl_str)
        return json_fail(err, err_cap, LLM_ERR_UNSUPPORTED, "the model has no chat template");
    llm_chat_params p = llm_chat_default_params();
    p.bos_token = m ? llm__model_bos_text(m) : "";
    p.eos_token = m ? llm__model_eos_text(m) : "";
    p.add_generation_prompt = true; /* the request's own value overrides it */
    llm_status st = llm_chat_render_json(tmpl_str, request_json, &p, out, out_len);
    if (st != LLM_OK) return json_fail(err, err_cap, st, llm_chat_last_error());
    return LLM_OK;
}
