/* Model loading: descriptor (libs/models), backend (libs/runtime), tokenizer
 * (libs/tokenizer, llm_tokenizer_from_gguf), KV pool (libs/kv) and the forward
 * adapter; model info and the memory plan. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "llama/arch.h"

#include "engine_internal.h"
#include "engine_tok.h"

double llm__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

uint64_t llm__peak_rss(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux reports KiB */
}

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        if (n) memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static char *gguf_str(const llm_gguf *g, const char *key) {
    const char *s;
    size_t n;
    if (g && llm_gguf_get_str(g, key, &s, &n) == LLM_OK) return dup_n(s, n);
    return dup_n("", 0);
}

/* Resolved sizes for a descriptor and params. */
typedef struct resolved {
    int32_t n_ctx, kv_tokens, block_size, n_batch, n_blocks;
    int32_t n_pass; /* tokens per forward pass (llm__fwd_params.n_batch) */
    llm_dtype type_k, type_v;
    int32_t n_swa, n_blocks_swa; /* the window layers' group (0: none) */
    int32_t n_state_slots; /* recurrent state slots (0: not a recurrent model) */
} resolved;

/* The runtime's element type of an engine cache type (-1: not one). */
static int kv_dtype(llm_kv_type t) {
    switch (t) {
    case LLM_KV_F16: return LLM_DTYPE_F16;
    case LLM_KV_F32: return LLM_DTYPE_F32;
    case LLM_KV_BF16: return LLM_DTYPE_BF16;
    case LLM_KV_Q8_0: return LLM_DTYPE_Q8_0;
    case LLM_KV_Q4_0: return LLM_DTYPE_Q4_0;
    case LLM_KV_Q4_1: return LLM_DTYPE_Q4_1;
    case LLM_KV_Q5_0: return LLM_DTYPE_Q5_0;
    case LLM_KV_Q5_1: return LLM_DTYPE_Q5_1;
    }
    return -1;
}

/* Every hyper-parameter the engine sizes buffers from is range-checked here,
 * before any arithmetic on it: a file may hold any 32-bit value, and a cast
 * to int32_t of one above INT32_MAX turns negative (a context_length of
 * 0xFFFFFFFF once skipped the 4096 cap). The bounds are far above any real
 * model and keep every product below in 64 bits. */
static llm_status check_hparams(const llm_model_hparams *hp, char *err) {
    const struct {
        const char *name;
        uint32_t v, lo, hi;
    } f[] = {
        {"vocabulary size", hp->n_vocab, 1, 1u << 24},
        {"embedding width", hp->n_embd, 1, 1u << 17},
        {"layer count", hp->n_layer, 1, 1u << 12},
        {"head count", hp->n_head, 1, 1u << 14},
        {"KV head count", hp->n_head_kv, 0, 1u << 14},
        {"head dimension", hp->head_dim, 0, 1u << 14},
        {"feed-forward width", hp->n_ff, 0, 1u << 22},
        {"context_length", hp->n_ctx_train, 0, (uint32_t)INT32_MAX},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v < f[i].lo || f[i].v > f[i].hi)
            return llm__fail(err, LLM_ERR_BAD_FORMAT,
                             "the model's %s is %" PRIu32 ", outside [%" PRIu32 ", %" PRIu32 "]",
                             f[i].name, f[i].v, f[i].lo, f[i].hi);
    return LLM_OK;
}

static llm_status resolve(const llm_model_desc *d, const llm_model_params *p, resolved *r, char *err) {
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    llm_status st = check_hparams(hp, err);
    if (st != LLM_OK) return st;
    if (p->n_ctx < 0)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "n_ctx must be >= 0 (got %d)", p->n_ctx);
    if (p->kv_tokens < 0 || p->kv_block_size < 0 || p->kv_block_size > 4096 || p->n_batch < 0)
        return llm__fail(err, LLM_ERR_INVALID_ARG,
                         "kv_tokens, kv_block_size (at most 4096) and n_batch must be >= 0");
    /* n_ctx_train <= INT32_MAX (checked above); compared unsigned, so no cast can wrap. */
    uint32_t train = hp->n_ctx_train ? hp->n_ctx_train : 4096u;
    r->n_ctx = p->n_ctx > 0 ? p->n_ctx : (int32_t)(train < 4096u ? train : 4096u);
    r->block_size = p->kv_block_size > 0 ? p->kv_block_size : 16;
    r->kv_tokens = p->kv_tokens > 0 ? p->kv_tokens : r->n_ctx;
    if (r->kv_tokens < r->n_ctx)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "kv_tokens (%d) must be >= n_ctx (%d)",
                         r->kv_tokens, r->n_ctx);
    /* One spare block per session for copy-on-write of a shared tail; in
     * 64 bits, since kv_tokens + block_size - 1 may pass INT32_MAX. */
    int64_t nb = ((int64_t)r->kv_tokens + r->block_size - 1) / r->block_size + 1;
    if (nb > INT32_MAX)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "kv_tokens %d needs too many KV blocks", r->kv_tokens);
    r->n_blocks = (int32_t)nb;
    r->n_batch = p->n_batch > 0 ? p->n_batch : 256;
    if (r->n_batch > r->n_ctx) r->n_batch = r->n_ctx;
    /* An encoder's pass packs whole texts (llm_embed), each at most n_batch
     * tokens, so it may hold more: a larger pass spreads each matrix
     * product's fixed costs (packing the weights, waking the threads) over
     * more rows. Its results do not depend on the packing. */
    r->n_pass = r->n_batch;
    if (llm_net_arch_is_encoder(llm_model_desc_arch(d)) && r->n_pass < 1024) r->n_pass = 1024;
    const int tk = kv_dtype(p->type_k), tv = kv_dtype(p->type_v);
    if (tk < 0 || tv < 0)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "unknown KV cache type (type_k %d, type_v %d)", (int)p->type_k,
                         (int)p->type_v);
    r->type_k = (llm_dtype)tk;
    r->type_v = (llm_dtype)tv;
    /* Sliding-window layers get a pool of their own when their window is
     * shorter than a session: per session the window, one pass, a partial
     * block at each end, one block of slack (engine_kv.c) and a
     * copy-on-write block. */
    if (p->kv_swa_seqs < 0)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "kv_swa_seqs must be >= 0 (got %d)", p->kv_swa_seqs);
    if (p->state_seqs < 0 || p->state_seqs > 65536)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "state_seqs must be in [0, 65536] (got %d)", p->state_seqs);
    r->n_state_slots = 0;
    if (llm_model_desc_hparams(d)->ssm_n_layer > 0) {
        const int32_t dflt = r->kv_tokens / r->n_ctx + 1;
        r->n_state_slots = p->state_seqs > 0 ? p->state_seqs : (dflt > 4 ? dflt : 4);
    }
    r->n_swa = llm__fwd_window(d);
    r->n_blocks_swa = 0;
    if (r->n_swa > 0 && r->n_swa < r->n_ctx) {
        const int64_t per = ((int64_t)r->n_swa + r->n_batch - 2) / r->block_size + 4;
        const int64_t seqs = p->kv_swa_seqs > 0 ? p->kv_swa_seqs : r->kv_tokens / r->n_ctx + 1;
        const int64_t nbs = per * seqs;
        r->n_blocks_swa = nbs < r->n_blocks ? (int32_t)nbs : r->n_blocks;
    } else {
        r->n_swa = 0;
    }
    return LLM_OK;
}

static uint64_t weights_bytes(const llm_model_desc *d, uint64_t *n_params, const char **dominant) {
    uint64_t total = 0, per_type[LLM_DTYPE_END_] = {0};
    *n_params = 0;
    for (int64_t i = 0; i < llm_model_desc_tensor_count(d); i++) {
        const llm_model_tensor *t = llm_model_desc_tensor_at(d, i);
        total += t->size;
        uint64_t ne = 1;
        for (uint32_t k = 0; k < t->n_dims; k++) ne *= (uint64_t)t->ne[k];
        *n_params += ne;
        if ((int)t->type >= 0 && (int)t->type < LLM_DTYPE_END_ && t->n_dims >= 2)
            per_type[t->type] += t->size;
    }
    int best = 0;
    for (int k = 0; k < LLM_DTYPE_END_; k++)
        if (per_type[k] > per_type[best]) best = k;
    const char *nm = llm_dtype_name((llm_dtype)best);
    *dominant = nm ? nm : "?";
    return total;
}

/* Bytes of the model files that end up resident: each file is mapped and
 * read from its start (header, metadata) to the end of its last tensor, as
 * the forward wraps it (libs/models/src/arch/net_weights.c, llm__net_wrap_files). */
static uint64_t mapped_bytes(const llm_model_desc *d) {
    uint64_t total = 0;
    uint32_t nf = llm_model_desc_file_count(d);
    for (uint32_t f = 0; f < nf; f++) {
        uint64_t end = 0;
        for (int64_t i = 0; i < llm_model_desc_tensor_count(d); i++) {
            const llm_model_tensor *t = llm_model_desc_tensor_at(d, i);
            if (t->file_index == f && t->file_offset + t->size > end) end = t->file_offset + t->size;
        }
        total += end;
    }
    return total;
}

llm_status llm_model_plan(const char *path, const llm_model_params *params, llm_memory_plan *plan) {
    if (!path || !plan) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_model_plan: NULL argument");
    llm_model_params p = params ? *params : llm_model_default_params();
    llm_model_desc *d = NULL;
    llm_status st = llm_model_desc_load(path, &d);
    if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_models_last_error());
    resolved r;
    char err[LLM__ERR_CAP];
    st = resolve(d, &p, &r, err);
    if (st == LLM_OK) {
        llm__fwd_params fp = {r.n_ctx, r.n_pass, r.n_blocks, r.block_size, r.type_k, r.type_v, r.n_blocks_swa,
                              r.n_state_slots};
        uint64_t kv = 0, scratch = 0, np;
        const char *dom;
        st = llm__fwd_sizes(d, &fp, &kv, &scratch);
        if (st == LLM_OK) {
            memset(plan, 0, sizeof *plan);
            (void)weights_bytes(d, &np, &dom);
            plan->weights_bytes = mapped_bytes(d);
            plan->kv_bytes = kv;
            /* scratch: the forward's arena plus the host logits of a session */
            plan->scratch_bytes = scratch + (uint64_t)llm_model_desc_hparams(d)->n_vocab * 4u;
            plan->total_bytes = plan->weights_bytes + plan->kv_bytes + plan->scratch_bytes;
            plan->n_ctx = r.n_ctx;
            plan->kv_blocks = r.n_blocks;
            plan->kv_swa_blocks = r.n_blocks_swa;
        } else {
            llm__fail(NULL, st, "memory plan: %s", llm_net_last_error());
        }
    }
    llm_model_desc_free(d);
    return st;
}

void llm_model_free(llm_model *m) {
    if (!m) return;
    llm__fwd_free(m->fwd);
    llm_kv_pool_free(m->pool);
    llm_kv_pool_free(m->pool_swa);
    free(m->state_free);
    llm_tokenizer_free(m->tok);
    llm_backend_free(m->be);
    llm_model_desc_free(m->desc);
    pthread_mutex_destroy(&m->lock);
    llm__model_grammar_free(&m->grammar);
    free(m->name);
    free(m->arch);
    free(m->chat_template);
    free(m->weight_type);
    free(m->bos_text);
    free(m->eos_text);
    free(m->pos);
    free(m);
}

const char *llm_model_last_error(const llm_model *m) { return m ? m->err : ""; }

static char *token_text(const llm_tokenizer *tok, llm_token id) {
    const char *s = id >= 0 ? llm_tokenizer_token_text(tok, id) : NULL;
    return dup_n(s ? s : "", s ? strlen(s) : 0);
}

llm_status llm_load_model(const char *path, const llm_model_params *params, llm_model **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_load_model: NULL argument");
    double t0 = llm__now_ms();
    llm_model_params p = params ? *params : llm_model_default_params();
    llm_model *m = calloc(1, sizeof *m);
    if (!m) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    llm__model_grammar_init(&m->grammar);
    llm_status st;
    if (p.vocab_only) {
        st = llm__model_load_vocab(m, path);
        if (st != LLM_OK) goto fail;
        m->load_ms = llm__now_ms() - t0;
        *out = m;
        llm__clear_error();
        return LLM_OK;
    }
    st = llm_model_desc_load(path, &m->desc);
    if (st != LLM_OK) {
        llm__fail(NULL, st, "%s", llm_models_last_error());
        goto fail;
    }
    resolved r;
    char err[LLM__ERR_CAP];
    st = resolve(m->desc, &p, &r, err);
    if (st != LLM_OK) goto fail;

    /* Tokenizer: from the GGUF metadata (HF folders: tokenizer.json). */
    st = llm__tokenizer_load(m->desc, &m->tok, err, sizeof err);
    if (st != LLM_OK) {
        llm__fail(NULL, st, "tokenizer: %s", err);
        goto fail;
    }

    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = p.n_threads;
    st = llm_backend_create(p.backend ? p.backend : "auto", &bp, &m->be);
    if (st != LLM_OK) {
        llm__fail(NULL, st == LLM_ERR_NOT_FOUND ? LLM_ERR_BACKEND : st, "backend '%s': %s",
                  p.backend ? p.backend : "auto", llm_runtime_last_error());
        st = st == LLM_ERR_NOT_FOUND ? LLM_ERR_BACKEND : st;
        goto fail;
    }

    llm__fwd_params fp = {r.n_ctx, r.n_pass, r.n_blocks, r.block_size, r.type_k, r.type_v, r.n_blocks_swa,
                              r.n_state_slots};
    uint64_t kvb = 0, scratch = 0;
    st = llm__fwd_sizes(m->desc, &fp, &kvb, &scratch);
    if (st != LLM_OK) {
        llm__fail(NULL, st, "%s", llm_net_last_error());
        goto fail;
    }
    st = llm__fwd_create(m->desc, m->be, &fp, &m->fwd, err, sizeof err);
    if (st == LLM_ERR_UNSUPPORTED && (!p.backend || !strcmp(p.backend, "auto")) &&
        strcmp(llm_backend_name(m->be), "cpu") != 0) {
        /* "auto" chose a GPU backend that lacks an op of this architecture
         * (the encoder ops have no CUDA kernels yet): run on the CPU. */
        llm_backend_free(m->be);
        m->be = NULL;
        st = llm_backend_create("cpu", &bp, &m->be);
        if (st == LLM_OK) st = llm__fwd_create(m->desc, m->be, &fp, &m->fwd, err, sizeof err);
        else snprintf(err, sizeof err, "backend 'cpu': %s", llm_runtime_last_error());
    }
    if (st != LLM_OK) {
        llm__fail(NULL, st, "%s", err);
        goto fail;
    }
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = r.n_blocks;
    pp.block_size = r.block_size;
    pp.enable_prefix_cache = p.prefix_cache;
    llm_kv_pool_params pps = pp; /* the window layers' pool: same block size, fewer blocks */
    llm__fwd_token_bytes(m->desc, &fp, &pp.bytes_per_token, &pps.bytes_per_token);
    st = llm_kv_pool_create(&pp, &m->pool);
    if (st == LLM_OK && r.n_blocks_swa > 0) {
        pps.n_blocks = r.n_blocks_swa;
        st = llm_kv_pool_create(&pps, &m->pool_swa);
    }
    if (st != LLM_OK) {
        llm__fail(NULL, st, "kv pool: %s", llm_kv_last_error());
        goto fail;
    }

    const llm_model_hparams *hp = llm_model_desc_hparams(m->desc);
    const llm_gguf *g = llm_model_desc_gguf(m->desc);
    m->pos = malloc((size_t)r.n_batch * sizeof *m->pos);
    m->name = gguf_str(g, "general.name");
    m->arch = dup_n(llm_model_desc_arch(m->desc), strlen(llm_model_desc_arch(m->desc)));
    m->chat_template = llm__chat_template_string(m->desc);
    uint64_t n_params;
    const char *dom;
    uint64_t wbytes = weights_bytes(m->desc, &n_params, &dom);
    m->weight_type = dup_n(dom, strlen(dom));
    m->bos_text = token_text(m->tok, llm_tokenizer_special(m->tok, LLM_SPECIAL_BOS));
    m->eos_text = token_text(m->tok, llm_tokenizer_special(m->tok, LLM_SPECIAL_EOS));
    if (!m->pos || !m->name || !m->arch || !m->chat_template || !m->weight_type ||
        !m->bos_text || !m->eos_text) {
        st = llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if (!*m->name) {
        free(m->name);
        const char *base = strrchr(path, '/');
        base = base && base[1] ? base + 1 : path;
        m->name = dup_n(base, strlen(base));
        if (!m->name) {
            st = llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
            goto fail;
        }
    }
    snprintf(m->backend_name, sizeof m->backend_name, "%s", llm_backend_name(m->be));
    snprintf(m->kernels_name, sizeof m->kernels_name, "%s", llm_backend_kernels(m->be));
    m->n_ctx = r.n_ctx;
    m->n_batch = r.n_batch;
    m->n_pass = r.n_pass;
    m->block_size = r.block_size;
    m->kv_blocks = r.n_blocks;
    m->n_swa = r.n_swa;
    m->kv_blocks_swa = r.n_blocks_swa;
    m->kv_bytes = kvb;
    if (r.n_state_slots > 0) {
        m->state_free = malloc((size_t)r.n_state_slots * sizeof *m->state_free);
        if (!m->state_free) {
            st = llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
            goto fail;
        }
        for (int32_t i = 0; i < r.n_state_slots; i++) m->state_free[i] = r.n_state_slots - i; /* 1 on top */
        m->n_state_free = m->n_state_slots = r.n_state_slots;
    }

    llm_model_info *in = &m->info;
    in->architecture = m->arch;
    in->name = m->name;
    in->weight_type = m->weight_type;
    in->chat_template = m->chat_template;
    in->backend = m->backend_name;
    in->kernels = m->kernels_name;
    in->n_threads = llm_backend_n_threads(m->be);
    in->n_vocab = (int32_t)hp->n_vocab;
    in->n_ctx_train = (int32_t)hp->n_ctx_train;
    in->n_ctx = r.n_ctx;
    in->n_embd = (int32_t)hp->n_embd;
    in->n_layer = (int32_t)hp->n_layer;
    in->n_head = (int32_t)hp->n_head;
    in->n_head_kv = (int32_t)hp->n_head_kv;
    in->n_params = n_params;
    in->weights_bytes = wbytes;
    in->bos = llm_tokenizer_special(m->tok, LLM_SPECIAL_BOS);
    in->eos = llm_tokenizer_special(m->tok, LLM_SPECIAL_EOS);
    in->eot = llm_tokenizer_special(m->tok, LLM_SPECIAL_EOT);
    in->pad = llm_tokenizer_special(m->tok, LLM_SPECIAL_PAD);
    in->unk = llm_tokenizer_special(m->tok, LLM_SPECIAL_UNK);
    in->is_encoder = llm__fwd_is_encoder(m->fwd);
    st = llm__embed_config_load(m, path);
    if (st != LLM_OK) goto fail;
    m->load_ms = llm__now_ms() - t0;
    *out = m;
    llm__clear_error();
    return LLM_OK;
fail:
    llm_model_free(m);
    return st;
}

llm_status llm_model_get_info(const llm_model *m, llm_model_info *info) {
    if (!m || !info) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_model_get_info: NULL argument");
    *info = m->info;
    return LLM_OK;
}

bool llm__model_is_eog(const llm_model *m, llm_token t) {
    if (t < 0 || t >= m->info.n_vocab) return false;
    return llm_tokenizer_is_eog(m->tok, t) != 0;
}

bool llm_token_is_eog(const llm_model *m, llm_token t) { return m && llm__model_is_eog(m, t); }

const char *llm__model_chat_template(const llm_model *m) { return m->chat_template; }
const char *llm__model_bos_text(const llm_model *m) { return m->bos_text; }
const char *llm__model_eos_text(const llm_model *m) { return m->eos_text; }
