/* test_chat.c -- chat templates against goldens rendered by Hugging Face
 * transformers (jinja2) from each model's real template string
 * (tests/chat/golden/chat_golden.json, made by
 * scripts/golden/chat/make_chat_golden.py). The family is detected from the
 * template string itself, then every conversation is rendered and compared
 * byte for byte, errors included. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/chat.h"

static json_t *load_golden(void) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/chat/golden/chat_golden.json", src ? src : ".");
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    cr_assert(doc, "cannot load %s: %s (line %d)", path, err.text, err.line);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "format")), "llm-chat-golden");
    cr_assert_eq(json_integer_value(json_object_get(doc, "version")), 1);
    return doc;
}

/* Messages of one case; strings stay owned by the JSON document. */
static llm_chat_message *case_messages(json_t *c, size_t *n) {
    json_t *arr = json_object_get(c, "messages");
    *n = json_array_size(arr);
    llm_chat_message *m = calloc(*n ? *n : 1, sizeof *m);
    cr_assert(m);
    for (size_t i = 0; i < *n; i++) {
        json_t *o = json_array_get(arr, i);
        m[i].role = json_string_value(json_object_get(o, "role"));
        m[i].content = json_string_value(json_object_get(o, "content"));
        cr_assert(m[i].role && m[i].content);
    }
    return m;
}

/* Byte offset of the first difference, for readable failures. */
static size_t first_diff(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    return i;
}

Test(chat_golden, every_template_and_case) {
    json_t *doc = load_golden();
    const char *date = json_string_value(json_object_get(doc, "date"));
    json_t *templates = json_object_get(doc, "templates");
    cr_assert_geq(json_array_size(templates), 10);
    size_t n_cases = 0, n_errors = 0;
    size_t ti;
    json_t *t;
    json_array_foreach(templates, ti, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        const char *family = json_string_value(json_object_get(t, "family"));
        const char *tmpl_str = json_string_value(json_object_get(t, "template"));
        llm_chat_template tmpl;
        llm_status st = llm_chat_template_detect(tmpl_str, &tmpl);
        if (!family) { /* rendered by the Jinja interpreter only (test_chat_jinja.c) */
            cr_assert_eq(st, LLM_ERR_UNSUPPORTED, "%s: no family should claim it, got %s", name,
                         llm_chat_template_name(tmpl));
            continue;
        }
        cr_assert_eq(st, LLM_OK, "%s: detect failed: %s", name, llm_chat_last_error());
        cr_assert_str_eq(llm_chat_template_name(tmpl), family, "%s: detected %s, want %s", name,
                         llm_chat_template_name(tmpl), family);

        llm_chat_params p = llm_chat_default_params();
        p.bos_token = json_string_value(json_object_get(t, "bos_token"));
        p.eos_token = json_string_value(json_object_get(t, "eos_token"));
        p.date = date;
        size_t ci;
        json_t *c;
        json_array_foreach(json_object_get(t, "cases"), ci, c) {
            const char *cname = json_string_value(json_object_get(c, "name"));
            p.add_generation_prompt = json_is_true(json_object_get(c, "add_generation_prompt"));
            size_t n;
            llm_chat_message *m = case_messages(c, &n);
            const char *expected = json_string_value(json_object_get(c, "expected"));
            char *out = NULL;
            size_t len = 0;
            st = llm_chat_render_alloc(tmpl, m, n, &p, &out, &len);
            if (!expected) {
                cr_assert(json_object_get(c, "error"), "%s/%s: golden has neither text nor error", name,
                          cname);
                cr_assert_eq(st, LLM_ERR_INVALID_ARG, "%s/%s: jinja raised '%s' but we returned %d",
                             name, cname, json_string_value(json_object_get(c, "error")), st);
                cr_assert_null(out);
                cr_assert_neq(llm_chat_last_error()[0], '\0');
                n_errors++;
            } else {
                cr_assert_eq(st, LLM_OK, "%s/%s: render failed: %s", name, cname, llm_chat_last_error());
                size_t d = first_diff(out, expected);
                cr_assert(len == strlen(expected) && memcmp(out, expected, len) == 0,
                          "%s/%s: differs at byte %zu\n got: %s\nwant: %s", name, cname, d, out + d,
                          expected + d);
                /* The caller-buffer path: ask the size, then render exactly. */
                size_t need = 0;
                cr_assert_eq(llm_chat_render(tmpl, m, n, &p, NULL, 0, &need), LLM_ERR_BUFFER_TOO_SMALL);
                cr_assert_eq(need, len);
                char *buf = malloc(need + 1);
                cr_assert(buf);
                size_t got = 0;
                if (need > 0) {
                    cr_assert_eq(llm_chat_render(tmpl, m, n, &p, buf, need, &got),
                                 LLM_ERR_BUFFER_TOO_SMALL, "%s/%s: no room for the NUL", name, cname);
                    cr_assert_eq(buf[0], '\0');
                }
                cr_assert_eq(llm_chat_render(tmpl, m, n, &p, buf, need + 1, &got), LLM_OK);
                cr_assert_eq(got, len);
                cr_assert_eq(buf[got], '\0');
                cr_assert_eq(memcmp(buf, expected, len), 0);
                free(buf);
            }
            free(out);
            free(m);
            n_cases++;
        }
    }
    cr_assert_gt(n_cases, 100);
    cr_assert_gt(n_errors, 10);
    json_decref(doc);
}

/* The template really stored in the default model, read from the GGUF by the
 * golden script, must be SmolLM2's family. (The GGUF itself is read by the
 * model library; here we only check that the golden carries it.) */
Test(chat_golden, smollm2_template_present) {
    json_t *doc = load_golden();
    json_t *t = json_array_get(json_object_get(doc, "templates"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(t, "family")), "smollm2");
    const char *s = json_string_value(json_object_get(t, "template"));
    cr_assert(strstr(s, "named SmolLM"));
    json_decref(doc);
}

Test(chat_names, round_trip_and_aliases) {
    for (int i = 1; i < LLM_CHAT_TEMPLATE_COUNT; i++) {
        llm_chat_template t;
        const char *name = llm_chat_template_name((llm_chat_template)i);
        cr_assert_neq(strcmp(name, "unknown"), 0);
        cr_assert_eq(llm_chat_template_from_name(name, &t), LLM_OK, "%s", name);
        cr_assert_eq((int)t, i);
    }
    llm_chat_template t;
    cr_assert_eq(llm_chat_template_from_name("ChatML", &t), LLM_OK);
    cr_assert_eq(t, LLM_CHAT_TEMPLATE_CHATML);
    cr_assert_eq(llm_chat_template_from_name("llama-3", &t), LLM_OK);
    cr_assert_eq(t, LLM_CHAT_TEMPLATE_LLAMA3);
    cr_assert_eq(llm_chat_template_from_name("mistral", &t), LLM_OK);
    cr_assert_eq(t, LLM_CHAT_TEMPLATE_MISTRAL_V1);
    cr_assert_eq(llm_chat_template_from_name("vicuna", &t), LLM_ERR_NOT_FOUND);
    cr_assert_eq(t, LLM_CHAT_TEMPLATE_UNKNOWN);
    cr_assert_eq(llm_chat_template_from_name(NULL, &t), LLM_ERR_INVALID_ARG);
    cr_assert_str_eq(llm_chat_template_name(LLM_CHAT_TEMPLATE_UNKNOWN), "unknown");
    cr_assert_str_eq(llm_chat_template_name((llm_chat_template)999), "unknown");
    cr_assert_str_eq(llm_chat_template_name((llm_chat_template)-3), "unknown");
    /* resolve: a name first, then a template string */
    cr_assert_eq(llm_chat_template_resolve("gemma3", &t), LLM_OK);
    cr_assert_eq(t, LLM_CHAT_TEMPLATE_GEMMA3);
    cr_assert_eq(llm_chat_template_resolve("{{ '<start_of_turn>' }}{{ first_user_prefix }}", &t), LLM_OK);
    cr_assert_eq(t, LLM_CHAT_TEMPLATE_GEMMA3);
    cr_assert_eq(llm_chat_template_resolve("nonsense", &t), LLM_ERR_UNSUPPORTED);
}

Test(chat_detect, rejects_what_it_cannot_reproduce) {
    static const char *const unknown[] = {
        "",
        "{% for m in messages %}{{ m.content }}{% endfor %}",
        /* Qwen3-style reasoning */
        "{{'<|im_start|>' + message.role}}{% if '</think>' in content %}<think>{% endif %}",
        /* ChatML with a default system prompt we do not know */
        "{% if loop.first %}{{'<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n'}}{% endif %}"
        "{{'<|im_start|>' + message['role']}}",
        /* Llama 3.1 */
        "{{- \"Cutting Knowledge Date: December 2023\\n\" }}<|start_header_id|>",
        /* a Mistral Small template with another default prompt */
        "{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}",
        /* legacy Mixtral without system folding */
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
        "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}{% endfor %}",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        llm_chat_template t = LLM_CHAT_TEMPLATE_CHATML;
        cr_assert_eq(llm_chat_template_detect(unknown[i], &t), LLM_ERR_UNSUPPORTED, "case %zu", i);
        cr_assert_eq(t, LLM_CHAT_TEMPLATE_UNKNOWN);
        cr_assert(strstr(llm_chat_last_error(), "unknown chat template"), "case %zu", i);
    }
    llm_chat_template t;
    cr_assert_eq(llm_chat_template_detect(NULL, &t), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_chat_template_detect("x", NULL), LLM_ERR_INVALID_ARG);
}

Test(chat_render, argument_errors) {
    llm_chat_params p = llm_chat_default_params();
    cr_assert_null(p.bos_token);
    cr_assert_null(p.eos_token);
    cr_assert_not(p.add_generation_prompt);
    cr_assert_null(p.date);
    char buf[64];
    size_t len = 7;
    llm_chat_message ok[] = {{"user", "hi"}};
    llm_chat_message null_role[] = {{NULL, "hi"}};
    llm_chat_message bad_utf8[] = {{"user", "caf\xC3"}};
    llm_chat_message overlong[] = {{"user", "\xC0\xAF"}};
    llm_chat_message surrogate[] = {{"user", "\xED\xA0\x80"}};
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, null_role, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_INVALID_ARG);
    cr_assert_eq(len, 0);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, bad_utf8, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_BAD_UTF8);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, overlong, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_BAD_UTF8);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, surrogate, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_BAD_UTF8);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_UNKNOWN, ok, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_chat_render((llm_chat_template)77, ok, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, ok, 1, NULL, buf, sizeof buf, &len),
                 LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, NULL, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, ok, 1, &p, buf, sizeof buf, NULL),
                 LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, ok, 1, &p, NULL, 4, &len), LLM_ERR_INVALID_ARG);
    p.bos_token = "\xFF";
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_LLAMA3, ok, 1, &p, buf, sizeof buf, &len),
                 LLM_ERR_BAD_UTF8);
    p.bos_token = NULL;
    /* NULL bos/eos render as "" */
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_LLAMA3, ok, 1, &p, buf, sizeof buf, &len), LLM_OK);
    cr_assert_str_eq(buf, "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>");
    cr_assert_eq(len, strlen(buf));
    /* Empty conversation with a template that does not read messages[0]. */
    cr_assert_eq(llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, NULL, 0, &p, buf, sizeof buf, &len), LLM_OK);
    cr_assert_eq(len, 0);
    cr_assert_str_eq(buf, "");
    char *s = (char *)1;
    cr_assert_eq(llm_chat_render_alloc(LLM_CHAT_TEMPLATE_CHATML, NULL, 0, &p, &s, &len), LLM_OK);
    cr_assert_not_null(s);
    cr_assert_str_eq(s, "");
    free(s);
    cr_assert_eq(llm_chat_render_alloc(LLM_CHAT_TEMPLATE_CHATML, NULL, 0, &p, NULL, &len),
                 LLM_ERR_INVALID_ARG);
}

/* mistral-v7 prints today's date when no system message is given; without an
 * explicit date it must be a well-formed YYYY-MM-DD. */
Test(chat_render, mistral_v7_date) {
    llm_chat_message m[] = {{"user", "hi"}};
    llm_chat_params p = llm_chat_default_params();
    char *s;
    size_t len;
    cr_assert_eq(llm_chat_render_alloc(LLM_CHAT_TEMPLATE_MISTRAL_V7, m, 1, &p, &s, &len), LLM_OK);
    const char *d = strstr(s, "The current date is ");
    cr_assert(d);
    d += strlen("The current date is ");
    for (int i = 0; i < 10; i++)
        cr_assert((i == 4 || i == 7) ? d[i] == '-' : (d[i] >= '0' && d[i] <= '9'), "%s", d);
    cr_assert_eq(d[10], '.');
    free(s);
    p.date = "2030-01-02";
    cr_assert_eq(llm_chat_render_alloc(LLM_CHAT_TEMPLATE_MISTRAL_V7, m, 1, &p, &s, &len), LLM_OK);
    cr_assert(strstr(s, "The current date is 2030-01-02."));
    free(s);
}

/* A long conversation exercises the builder's growth. */
Test(chat_render, long_conversation) {
    enum { N = 400 };
    static llm_chat_message m[N];
    static char content[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(content[i], sizeof content[i], "message number %d", i);
        m[i].role = (i % 2 == 0) ? "user" : "assistant";
        m[i].content = content[i];
    }
    llm_chat_params p = llm_chat_default_params();
    p.bos_token = "<s>";
    p.eos_token = "</s>";
    char *s;
    size_t len;
    cr_assert_eq(llm_chat_render_alloc(LLM_CHAT_TEMPLATE_LLAMA2, m, N, &p, &s, &len), LLM_OK);
    cr_assert(strstr(s, "<s>[INST] message number 398 [/INST] message number 399 </s>"));
    cr_assert_eq(len, strlen(s));
    free(s);
}
