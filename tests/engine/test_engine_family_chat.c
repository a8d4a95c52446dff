/*
 * test_engine_family_chat.c -- each synthetic family model's own chat
 * template (scripts/golden/families: the real template of the family in the
 * GGUF) renders a conversation exactly as jinja2 does under transformers'
 * apply_chat_template, and the engine tokenizes the rendered prompt to
 * llama.cpp's tokens (golden/FAMILY.chat.json, made by
 * make_family_golden.py). The conversation has a system message, two user
 * turns with non-Latin text and Jinja-looking text, and an assistant turn;
 * the date the templates may print is fixed (2026-01-02) on both sides.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/chat.h"
#include "llama/engine.h"

static void check_family(const char *family) {
    const char *bin = getenv("LLM_BINARY_DIR"), *src = getenv("LLM_SOURCE_DIR");
    char model[1024], gold[1024];
    snprintf(model, sizeof model, "%s/synthetic/%s.gguf", bin ? bin : ".", family);
    snprintf(gold, sizeof gold, "%s/scripts/golden/families/golden/%s.chat.json", src ? src : ".", family);
    FILE *probe = fopen(model, "rb");
    if (!probe) cr_skip_test("%s not generated (the runtime_families_generate_%s test says why)", model, family);
    fclose(probe);
    json_error_t jerr;
    json_t *g = json_load_file(gold, 0, &jerr);
    cr_assert_not_null(g, "%s: %s", gold, jerr.text);

    llm_model_params mp = llm_model_default_params();
    mp.vocab_only = true;
    llm_model *m;
    cr_assert_eq(llm_load_model(model, &mp, &m), LLM_OK, "%s", llm_last_error());
    llm_model_info info;
    cr_assert_eq(llm_model_get_info(m, &info), LLM_OK);

    json_t *jm = json_object_get(g, "messages");
    size_t n = json_array_size(jm);
    llm_chat_message msgs[16];
    cr_assert_leq(n, 16);
    for (size_t i = 0; i < n; i++) {
        msgs[i].role = json_string_value(json_object_get(json_array_get(jm, i), "role"));
        msgs[i].content = json_string_value(json_object_get(json_array_get(jm, i), "content"));
    }
    llm_chat_params p = llm_chat_default_params();
    p.bos_token = json_string_value(json_object_get(g, "bos_token"));
    p.eos_token = json_string_value(json_object_get(g, "eos_token"));
    p.add_generation_prompt = true;
    p.date = "2026-01-02";
    p.engine = LLM_CHAT_ENGINE_JINJA;
    static char text[1 << 16];
    size_t len = 0;
    cr_assert_eq(llm_chat_render_template(info.chat_template, msgs, n, &p, text, sizeof text, &len), LLM_OK,
                 "%s: %s", family, llm_chat_last_error());
    const char *want = json_string_value(json_object_get(g, "text"));
    cr_expect_eq(len, strlen(want), "%s: rendered %zu bytes, jinja2 %zu", family, len, strlen(want));
    cr_expect_str_eq(text, want, "%s: the template renders differently from jinja2", family);

    llm_token toks[4096];
    int32_t nt = 0;
    cr_assert_eq(llm_tokenize(m, text, len, LLM_ENCODE_PARSE_SPECIAL, toks, 4096, &nt), LLM_OK, "%s",
                 llm_last_error());
    json_t *jt = json_object_get(g, "tokens");
    cr_expect_eq((size_t)nt, json_array_size(jt), "%s: %d tokens, llama.cpp %zu", family, nt, json_array_size(jt));
    int first = -1;
    for (int32_t i = 0; i < nt && (size_t)i < json_array_size(jt); i++)
        if (toks[i] != (llm_token)json_integer_value(json_array_get(jt, (size_t)i))) {
            first = i;
            break;
        }
    cr_expect_eq(first, -1, "%s: token %d differs from llama.cpp's", family, first);
    llm_model_free(m);
    json_decref(g);
}

Test(family_chat, llama3) { check_family("llama3"); }
Test(family_chat, mistral) { check_family("mistral"); }
Test(family_chat, qwen2) { check_family("qwen2"); }
Test(family_chat, qwen3) { check_family("qwen3"); }
Test(family_chat, phi3) { check_family("phi3"); }
