/* test_chat_jinja.c -- the Jinja interpreter against jinja2 itself:
 *  - every real model template of chat_golden.json rendered from its string
 *    (interpreter only, and interpreter-with-fallback), byte for byte;
 *  - jinja_golden.json: small templates that exercise one language feature
 *    each (whitespace control, loops, filters, tests, slicing, namespace,
 *    tojson, errors), rendered by transformers' jinja2 environment.
 * Both files come from scripts/golden/chat/make_chat_golden.py. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/chat.h"

static json_t *load(const char *name) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/chat/golden/%s", src ? src : ".", name);
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    cr_assert(doc, "cannot load %s: %s (line %d)", path, err.text, err.line);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "format")), "llm-chat-golden");
    return doc;
}

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

static size_t first_diff(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    return i;
}

/* Render every case of every template in doc with engine; returns cases. */
static size_t check_doc(json_t *doc, llm_chat_engine engine) {
    const char *date = json_string_value(json_object_get(doc, "date"));
    size_t n_cases = 0;
    size_t ti;
    json_t *t;
    json_array_foreach(json_object_get(doc, "templates"), ti, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        const char *tmpl = json_string_value(json_object_get(t, "template"));
        json_t *family = json_object_get(t, "family");
        if (engine == LLM_CHAT_ENGINE_FAMILY && json_is_null(family)) {
            /* no family renderer for it: the family engine must refuse */
            llm_chat_message m[] = {{"user", "hi"}};
            llm_chat_params p = llm_chat_default_params();
            p.engine = engine;
            char *out = NULL;
            size_t len;
            cr_assert_eq(llm_chat_render_template_alloc(tmpl, m, 1, &p, &out, &len), LLM_ERR_UNSUPPORTED,
                         "%s", name);
            continue;
        }
        llm_chat_params p = llm_chat_default_params();
        p.bos_token = json_string_value(json_object_get(t, "bos_token"));
        p.eos_token = json_string_value(json_object_get(t, "eos_token"));
        p.date = date;
        p.engine = engine;
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
            llm_status st = llm_chat_render_template_alloc(tmpl, m, n, &p, &out, &len);
            if (!expected) {
                const char *err = json_string_value(json_object_get(c, "error"));
                cr_assert(err, "%s/%s: golden has neither text nor error", name, cname);
                cr_assert_eq(st, LLM_ERR_INVALID_ARG, "%s/%s: jinja raised '%s' but we returned %d (%s)",
                             name, cname, err, st, llm_chat_last_error());
                cr_assert_null(out);
            } else {
                cr_assert_eq(st, LLM_OK, "%s/%s: render failed (%d): %s", name, cname, st,
                             llm_chat_last_error());
                size_t d = first_diff(out, expected);
                cr_assert(len == strlen(expected) && memcmp(out, expected, len) == 0,
                          "%s/%s: differs at byte %zu\n got: [%s]\nwant: [%s]", name, cname, d, out + d,
                          expected + d);
            }
            free(out);
            free(m);
            n_cases++;
        }
    }
    return n_cases;
}

Test(chat_jinja, model_templates_interpreter_only) {
    json_t *doc = load("chat_golden.json");
    cr_assert_gt(check_doc(doc, LLM_CHAT_ENGINE_JINJA), 100);
    json_decref(doc);
}

Test(chat_jinja, model_templates_auto) {
    json_t *doc = load("chat_golden.json");
    cr_assert_gt(check_doc(doc, LLM_CHAT_ENGINE_AUTO), 100);
    json_decref(doc);
}

Test(chat_jinja, family_engine_on_template_strings) {
    json_t *doc = load("chat_golden.json");
    cr_assert_gt(check_doc(doc, LLM_CHAT_ENGINE_FAMILY), 100);
    json_decref(doc);
}

Test(chat_jinja, language_features) {
    json_t *doc = load("jinja_golden.json");
    cr_assert_gt(check_doc(doc, LLM_CHAT_ENGINE_JINJA), 80);
    json_decref(doc);
}

Test(chat_jinja, syntax_errors) {
    json_t *doc = load("jinja_golden.json");
    json_t *list = json_object_get(doc, "syntax_errors");
    cr_assert_gt(json_array_size(list), 3);
    size_t i;
    json_t *e;
    llm_chat_message m[] = {{"user", "hi"}};
    json_array_foreach(list, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *tmpl = json_string_value(json_object_get(e, "template"));
        llm_chat_params p = llm_chat_default_params();
        p.engine = LLM_CHAT_ENGINE_JINJA;
        char *out = NULL;
        size_t len;
        llm_status st = llm_chat_render_template_alloc(tmpl, m, 1, &p, &out, &len);
        cr_assert_eq(st, LLM_ERR_BAD_FORMAT, "%s: got %d (%s), jinja2 said: %s", name, st,
                     llm_chat_last_error(), json_string_value(json_object_get(e, "error")));
        cr_assert_null(out);
        /* AUTO has no family to fall back to: the syntax error stays. */
        p.engine = LLM_CHAT_ENGINE_AUTO;
        cr_assert_eq(llm_chat_render_template_alloc(tmpl, m, 1, &p, &out, &len), LLM_ERR_BAD_FORMAT, "%s",
                     name);
    }
    json_decref(doc);
}

/* Truncated and corrupted real templates: any status is fine, a crash or a
 * sanitizer report is not (the suite runs under ASan/UBSan in CI). */
Test(chat_jinja, truncated_templates_do_not_crash) {
    json_t *doc = load("chat_golden.json");
    llm_chat_message m[] = {{"system", "s"}, {"user", "u"}, {"assistant", "a"}, {"user", "v"}};
    llm_chat_params p = llm_chat_default_params();
    p.engine = LLM_CHAT_ENGINE_JINJA;
    p.date = "2025-02-07";
    size_t ti, runs = 0;
    json_t *t;
    json_array_foreach(json_object_get(doc, "templates"), ti, t) {
        const char *tmpl = json_string_value(json_object_get(t, "template"));
        size_t n = strlen(tmpl);
        char *buf = malloc(n + 1);
        cr_assert(buf);
        for (size_t cut = 0; cut <= n; cut += 3) {
            memcpy(buf, tmpl, cut);
            buf[cut] = '\0';
            char *out = NULL;
            size_t len;
            llm_status st = llm_chat_render_template_alloc(buf, m, 4, &p, &out, &len);
            cr_assert(st == LLM_OK || st == LLM_ERR_BAD_FORMAT || st == LLM_ERR_UNSUPPORTED ||
                          st == LLM_ERR_INVALID_ARG,
                      "status %d for a prefix of %zu bytes", st, cut);
            cr_assert((st == LLM_OK) == (out != NULL));
            free(out);
            /* the same prefix with one byte flipped to a tag character */
            if (cut > 0) {
                char saved = buf[cut / 2];
                buf[cut / 2] = "{}%#|'\"("[cut % 8];
                st = llm_chat_render_template_alloc(buf, m, 4, &p, &out, &len);
                cr_assert(st <= 0);
                free(out);
                buf[cut / 2] = saved;
            }
            runs++;
        }
        free(buf);
    }
    cr_assert_gt(runs, 1000);
    json_decref(doc);
}

static llm_status render_str(const char *tmpl) {
    llm_chat_message m[] = {{"user", "hi"}};
    llm_chat_params p = llm_chat_default_params();
    p.engine = LLM_CHAT_ENGINE_JINJA;
    char *out = NULL;
    size_t len;
    llm_status st = llm_chat_render_template_alloc(tmpl, m, 1, &p, &out, &len);
    free(out);
    return st;
}

static char *repeat_str(const char *a, size_t times, const char *mid, const char *b) {
    size_t la = strlen(a), lb = strlen(b), lm = strlen(mid);
    char *s = malloc(times * (la + lb) + lm + 1);
    cr_assert(s);
    char *p = s;
    for (size_t i = 0; i < times; i++, p += la)
        memcpy(p, a, la);
    memcpy(p, mid, lm);
    p += lm;
    for (size_t i = 0; i < times; i++, p += lb)
        memcpy(p, b, lb);
    *p = '\0';
    return s;
}

/* Hostile templates stop with a status instead of exhausting the machine. */
Test(chat_jinja, sandbox_limits) {
    char *deep = repeat_str("(", 100000, "1", ")");
    char *deep_tag = malloc(strlen(deep) + 8);
    cr_assert(deep_tag);
    sprintf(deep_tag, "{{ %s }}", deep);
    cr_assert_eq(render_str(deep_tag), LLM_ERR_UNSUPPORTED);
    cr_assert_eq(render_str(deep), LLM_OK); /* outside a tag it is only text */
    free(deep_tag);
    free(deep);
    char *nested_if = repeat_str("{% if true %}", 5000, "x", "{% endif %}");
    cr_assert_eq(render_str(nested_if), LLM_ERR_UNSUPPORTED);
    free(nested_if);
    char *nots = repeat_str(" not", 50000, " 1 }}", "");
    memcpy(nots, "{{  ", 4); /* "{{  not not ... 1 }}" */
    cr_assert_eq(render_str(nots), LLM_ERR_UNSUPPORTED);
    free(nots);
    char *lists = repeat_str("[", 50000, "", "]");
    char *in_tag = malloc(strlen(lists) + 8);
    cr_assert(in_tag);
    sprintf(in_tag, "{{ %s }}", lists);
    cr_assert_eq(render_str(in_tag), LLM_ERR_UNSUPPORTED);
    free(in_tag);
    free(lists);
    cr_assert_eq(render_str("{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}"),
                 LLM_ERR_UNSUPPORTED);
    cr_assert_eq(render_str("{{ 'a' * 1000000000 }}"), LLM_ERR_UNSUPPORTED);
    cr_assert_eq(render_str("{{ range(100000000) | list }}"), LLM_ERR_UNSUPPORTED);
    cr_assert_eq(render_str("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"),
                 LLM_ERR_UNSUPPORTED);
    cr_assert_eq(render_str("{{ 9223372036854775807 + 1 }}"), LLM_ERR_UNSUPPORTED);
    /* Macros are supported; endless recursion stops at the nesting bound. */
    cr_assert_eq(render_str("{% macro m() %}{% endmacro %}"), LLM_OK);
    cr_assert_eq(render_str("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}"), LLM_ERR_UNSUPPORTED);
    cr_assert_eq(render_str("{{ messages.__class__ }}"), LLM_OK); /* an undefined attribute, printed as "" */
    cr_assert_eq(render_str("{{ ''.__class__.__mro__ }}"), LLM_ERR_INVALID_ARG);
}
