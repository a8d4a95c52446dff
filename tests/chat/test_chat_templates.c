/* The 70 real chat templates llama.cpp tests with
 * ($LLM_TESTDATA_DIR/chat-templates/NAME.jinja), each rendering the conversations
 * of tests/chat/golden/templates_golden.json (single turn, system +
 * multi-turn, tools with a tool call and result, Unicode and Jinja-looking
 * content, a final assistant message without generation prompt) through
 * llm_chat_render_json(): the text must equal jinja2's byte for byte, and
 * where jinja2 raised we must fail too. Goldens: scripts/golden/chat/
 * make_template_golden.py (jinja2 in transformers' environment).
 *
 * k_known lists the (template, conversation) pairs that still differ, each
 * with its reason; the test fails if a listed pair starts passing (remove it)
 * or an unlisted pair fails. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/chat.h"

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) p[n] = '\0';
    return p;
}

/* Known differences: template file, conversation ("*" = all), reason. */
static const struct {
    const char *tmpl, *conv, *reason;
} k_known[] = {
#include "chat_templates_known.h"
};

static const char *known_reason(const char *tmpl, const char *conv) {
    for (size_t i = 0; i < sizeof k_known / sizeof k_known[0]; i++)
        if (strcmp(k_known[i].tmpl, tmpl) == 0 && (strcmp(k_known[i].conv, "*") == 0 || strcmp(k_known[i].conv, conv) == 0))
            return k_known[i].reason;
    return NULL;
}

/* Index of the first differing byte. */
static size_t first_diff(const char *a, size_t na, const char *b, size_t nb) {
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    return i;
}

Test(chat_templates, real_templates_match_jinja2, .timeout = 120) {
    char path[1200];
    snprintf(path, sizeof path, "%s/tests/chat/golden/templates_golden.json", env_or("LLM_SOURCE_DIR", "."));
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    cr_assert(doc, "%s: %s", path, jerr.text);
    const char *tdir = env_or("LLM_TESTDATA_DIR", "../shared/testdata");
    llm_chat_params params = llm_chat_default_params();
    params.bos_token = json_string_value(json_object_get(doc, "bos_token"));
    params.eos_token = json_string_value(json_object_get(doc, "eos_token"));
    params.date = json_string_value(json_object_get(doc, "date"));
    json_t *convs = json_object_get(doc, "conversations"), *cases = json_object_get(doc, "cases");
    cr_assert(json_is_array(convs) && json_is_array(cases));

    int n = 0, pass = 0, known_fail = 0, bad = 0;
    char *tmpl = NULL, cur[256] = "";
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *tname = json_string_value(json_object_get(c, "template"));
        const char *cname = json_string_value(json_object_get(c, "conversation"));
        if (strcmp(cur, tname) != 0) {
            free(tmpl);
            char tp[1500];
            snprintf(tp, sizeof tp, "%s/chat-templates/%s", tdir, tname);
            tmpl = read_file(tp);
            cr_assert(tmpl, "cannot read %s", tp);
            snprintf(cur, sizeof cur, "%s", tname);
        }
        char *vars = NULL;
        size_t k;
        json_t *cv;
        json_array_foreach(convs, k, cv) {
            if (strcmp(json_string_value(json_object_get(cv, "name")), cname) == 0)
                vars = json_dumps(json_object_get(cv, "vars"), JSON_COMPACT);
        }
        cr_assert(vars, "conversation %s missing", cname);
        json_t *want = json_object_get(c, "expected");
        char *got = NULL;
        size_t got_len = 0;
        llm_status st = llm_chat_render_json(tmpl, vars, &params, &got, &got_len);
        bool ok;
        char why[400] = "";
        if (want) {
            const char *w = json_string_value(want);
            size_t wl = json_string_length(want);
            ok = st == LLM_OK && got_len == wl && memcmp(got, w, wl) == 0;
            if (!ok && st == LLM_OK) {
                size_t d = first_diff(got, got_len, w, wl);
                snprintf(why, sizeof why, "differs at byte %zu: want \"%.40s\" got \"%.40s\"", d, w + d,
                         got + d);
            } else if (!ok) {
                snprintf(why, sizeof why, "%s: %s", llm_status_str(st), llm_chat_last_error());
            }
        } else {
            ok = st != LLM_OK && st != LLM_ERR_NO_MEMORY && st != LLM_ERR_UNSUPPORTED && st != LLM_ERR_BAD_FORMAT;
            /* raise_exception(msg): our message must carry jinja2's text. */
            const char *jmsg = json_string_value(json_object_get(c, "error"));
            if (ok && strncmp(jmsg, "TemplateError: ", 15) == 0 && !strstr(llm_chat_last_error(), jmsg + 15)) {
                ok = false;
                snprintf(why, sizeof why, "raised \"%s\", jinja2 \"%s\"", llm_chat_last_error(), jmsg + 15);
            } else if (!ok)
                snprintf(why, sizeof why, "jinja2 raised (%s) but we %s%s", json_string_value(json_object_get(c, "error")),
                         st == LLM_OK ? "rendered" : llm_status_str(st), st == LLM_OK ? "" : llm_chat_last_error());
        }
        const char *reason = known_reason(tname, cname);
        n++;
        if (ok && reason) {
            printf("templates: %s / %s now passes: remove it from the known failures (%s)\n", tname, cname, reason);
            bad++;
        } else if (!ok && !reason) {
            printf("templates: %s / %s FAILS: %s\n", tname, cname, why);
            bad++;
        } else if (!ok) {
            known_fail++;
        } else {
            pass++;
        }
        free(got);
        free(vars);
    }
    free(tmpl);
    json_decref(doc);
    printf("templates: %d cases: %d pass, %d known failures, %d unexpected\n", n, pass, known_fail, bad);
    cr_expect(n >= 350, "only %d cases", n);
    cr_expect_eq(bad, 0, "%d cases behave unlike the known-failure list says", bad);
}

/* Small templates for each feature the real ones use, and for the rest of
 * jinja2's statements (call blocks, varargs/kwargs, recursive loops, blocks,
 * include/import/extends raising as without a loader): the "features"
 * section of the same golden file, with the tool_call conversation. */
Test(chat_templates, feature_templates_match_jinja2) {
    char path[1200];
    snprintf(path, sizeof path, "%s/tests/chat/golden/templates_golden.json", env_or("LLM_SOURCE_DIR", "."));
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    cr_assert(doc, "%s: %s", path, jerr.text);
    llm_chat_params params = llm_chat_default_params();
    params.bos_token = json_string_value(json_object_get(doc, "bos_token"));
    params.eos_token = json_string_value(json_object_get(doc, "eos_token"));
    params.date = json_string_value(json_object_get(doc, "date"));
    json_t *feat = json_object_get(doc, "features");
    const char *cname = json_string_value(json_object_get(feat, "conversation"));
    char *vars = NULL;
    size_t k;
    json_t *cv, *c;
    json_array_foreach(json_object_get(doc, "conversations"), k, cv) {
        if (strcmp(json_string_value(json_object_get(cv, "name")), cname) == 0)
            vars = json_dumps(json_object_get(cv, "vars"), JSON_COMPACT);
    }
    cr_assert(vars);
    int n = 0, bad = 0;
    json_array_foreach(json_object_get(feat, "cases"), k, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *tmpl = json_string_value(json_object_get(c, "template"));
        json_t *want = json_object_get(c, "expected");
        char *got = NULL;
        size_t got_len = 0;
        llm_status st = llm_chat_render_json(tmpl, vars, &params, &got, &got_len);
        /* jinja2's compile-time errors (TemplateSyntaxError and its subclass
         * TemplateAssertionError) are syntax errors for us; what it raises
         * while rendering is LLM_ERR_INVALID_ARG. */
        const char *raised = want ? "" : json_string_value(json_object_get(c, "error"));
        bool syntax = strncmp(raised, "TemplateSyntaxError", 19) == 0 || strncmp(raised, "TemplateAssertionError", 22) == 0;
        bool ok = want ? st == LLM_OK && got_len == json_string_length(want) &&
                             memcmp(got, json_string_value(want), got_len) == 0
                       : st == (syntax ? LLM_ERR_BAD_FORMAT : LLM_ERR_INVALID_ARG);
        if (!ok) {
            printf("features: %s FAILS (%s): got \"%s\", want \"%s\"\n", name, llm_status_str(st),
                   st == LLM_OK ? got : llm_chat_last_error(),
                   want ? json_string_value(want) : json_string_value(json_object_get(c, "error")));
            bad++;
        }
        n++;
        free(got);
    }
    free(vars);
    json_decref(doc);
    cr_expect(n >= 20, "only %d feature cases", n);
    cr_expect_eq(bad, 0, "%d of %d feature templates differ from jinja2", bad, n);
}
