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

/* qwen2_hf: the same model as a GGUF and as a Hugging Face folder
 * (tokenizer.json written from the GGUF's vocabulary, tokenizer_config.json
 * with the template): the engine must tokenize alike and report the same
 * chat template from both. */
Test(family_chat, qwen2_hf_folder_tokenizes_as_gguf) {
    const char *bin = getenv("LLM_BINARY_DIR"), *src = getenv("LLM_SOURCE_DIR");
    char gguf[1024], dir[1024], tj[1100], gold[1024];
    snprintf(gguf, sizeof gguf, "%s/synthetic/qwen2_hf.gguf", bin ? bin : ".");
    snprintf(dir, sizeof dir, "%s/synthetic/qwen2_hf", bin ? bin : ".");
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    snprintf(gold, sizeof gold, "%s/scripts/golden/families/golden/qwen2.chat.json", src ? src : ".");
    FILE *probe = fopen(tj, "rb");
    if (!probe) cr_skip_test("%s not generated (runtime_families_generate_qwen2_hf says why)", tj);
    fclose(probe);
    json_error_t jerr;
    json_t *g = json_load_file(gold, 0, &jerr);
    cr_assert_not_null(g, "%s: %s", gold, jerr.text);
    llm_model_params mp = llm_model_default_params();
    mp.vocab_only = true;
    llm_model *mg, *mh;
    cr_assert_eq(llm_load_model(gguf, &mp, &mg), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(llm_load_model(dir, &mp, &mh), LLM_OK, "%s", llm_last_error());
    llm_model_info ig, ih;
    cr_assert_eq(llm_model_get_info(mg, &ig), LLM_OK);
    cr_assert_eq(llm_model_get_info(mh, &ih), LLM_OK);
    cr_expect_str_eq(ih.chat_template ? ih.chat_template : "", ig.chat_template ? ig.chat_template : "",
                     "the folder's chat template differs from the GGUF's");
    const char *texts[] = {
        json_string_value(json_object_get(g, "text")),
        "La Tour Eiffel est une tour de fer puddlé de 330 mètres. 東京は日本の首都です。Москва — столица России.",
        "  leading spaces,\ttabs,\r\nCRLF and 12345 digits; <|im_start|>user\nhi<|im_end|> [PAD151650] <|endoftext|>",
        "def f(x):\n    return x ** 2  # 🙂 emoji, and ‘quotes’ and don't we'll I'M",
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        static llm_token tg[4096], th[4096];
        int32_t ng = 0, nh = 0;
        for (int special = 0; special < 2; special++) {
            const unsigned fl = special ? LLM_ENCODE_PARSE_SPECIAL : 0;
            cr_assert_eq(llm_tokenize(mg, texts[k], strlen(texts[k]), fl, tg, 4096, &ng), LLM_OK, "%s", llm_last_error());
            cr_assert_eq(llm_tokenize(mh, texts[k], strlen(texts[k]), fl, th, 4096, &nh), LLM_OK, "%s", llm_last_error());
            cr_expect_eq(nh, ng, "text %zu (special %d): %d tokens from the folder, %d from the GGUF", k, special, nh, ng);
            int first = -1;
            for (int32_t i = 0; i < ng && i < nh; i++)
                if (tg[i] != th[i]) {
                    first = i;
                    break;
                }
            cr_expect_eq(first, -1, "text %zu (special %d): token %d differs (%d vs %d)", k, special, first,
                         first >= 0 ? th[first] : 0, first >= 0 ? tg[first] : 0);
        }
    }
    llm_model_free(mg);
    llm_model_free(mh);
    json_decref(g);
}

/* qwen3moe: the Qwen2 vocabulary with Qwen3's template, on the mixture-of-experts model. */
Test(family_chat, qwen3moe) { check_family("qwen3moe"); }
