/* Vocab-only loading: a model file's tokenizer and metadata without its
 * weights (llm_model_params.vocab_only). The path is a .gguf (model or
 * vocab-only), a tokenizer.json, or a Hugging Face folder holding
 * tokenizer.json; the tokenizer library reads the tokenizer. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine_internal.h"
#include "engine_tok.h"

static char *dup_s(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static char *gguf_str(const llm_gguf *g, const char *key) {
    const char *s;
    size_t n;
    if (llm_gguf_get_str(g, key, &s, &n) != LLM_OK) return dup_s("");
    char *d = malloc(n + 1);
    if (d) {
        if (n) memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* A JSON file starts with '{' after optional white space. */
static int is_json_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
    }
    fclose(f);
    return c == '{';
}

static int is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Copies the tokenizer library's message (it names the path) into the engine's. */
static llm_status tok_fail(llm_status st) { return llm__fail(NULL, st, "%s", llm_tokenizer_last_error()); }

static char *token_text(const llm_tokenizer *tok, llm_token id) {
    const char *s = id >= 0 ? llm_tokenizer_token_text(tok, id) : NULL;
    return dup_s(s ? s : "");
}

llm_status llm__model_load_vocab(llm_model *m, const char *path) {
    llm_status st = LLM_OK;
    m->vocab_only = true;
    if (is_dir(path)) {
        st = llm_tokenizer_load(path, &m->tok);
        if (st != LLM_OK) return tok_fail(st);
        m->chat_template = llm__hf_chat_template(path);
        m->arch = dup_s("");
        m->name = dup_s("");
    } else if (is_json_file(path)) {
        st = llm_tokenizer_load(path, &m->tok);
        if (st != LLM_OK) return tok_fail(st);
        m->chat_template = dup_s("");
        m->arch = dup_s("");
        m->name = dup_s("");
    } else {
        llm_gguf *g = NULL;
        st = llm_gguf_open(path, &g);
        if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_gguf_last_error());
        st = llm_tokenizer_from_gguf(g, &m->tok);
        if (st != LLM_OK) llm__fail(NULL, st, "%s: %s", path, llm_tokenizer_last_error());
        if (st == LLM_OK) {
            m->chat_template = llm__gguf_chat_template(g);
            m->arch = gguf_str(g, "general.architecture");
            m->name = gguf_str(g, "general.name");
        }
        llm_gguf_close(g);
        if (st != LLM_OK) return st;
    }
    m->weight_type = dup_s("");
    m->bos_text = token_text(m->tok, llm_tokenizer_special(m->tok, LLM_SPECIAL_BOS));
    m->eos_text = token_text(m->tok, llm_tokenizer_special(m->tok, LLM_SPECIAL_EOS));
    if (!m->chat_template || !m->arch || !m->name || !m->weight_type || !m->bos_text || !m->eos_text)
        return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    if (!*m->name) {
        const char *base = strrchr(path, '/');
        base = base && base[1] ? base + 1 : path;
        char *nm = dup_s(base);
        if (!nm) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
        free(m->name);
        m->name = nm;
    }
    m->backend_name[0] = '\0';
    m->kernels_name[0] = '\0';
    llm_model_info *in = &m->info;
    memset(in, 0, sizeof *in);
    in->architecture = m->arch;
    in->name = m->name;
    in->weight_type = m->weight_type;
    in->chat_template = m->chat_template;
    in->backend = m->backend_name;
    in->kernels = m->kernels_name;
    in->n_vocab = llm_tokenizer_n_tokens(m->tok);
    in->bos = llm_tokenizer_special(m->tok, LLM_SPECIAL_BOS);
    in->eos = llm_tokenizer_special(m->tok, LLM_SPECIAL_EOS);
    in->eot = llm_tokenizer_special(m->tok, LLM_SPECIAL_EOT);
    in->pad = llm_tokenizer_special(m->tok, LLM_SPECIAL_PAD);
    in->unk = llm_tokenizer_special(m->tok, LLM_SPECIAL_UNK);
    in->vocab_only = true;
    return LLM_OK;
}
