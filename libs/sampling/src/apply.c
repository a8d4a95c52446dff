/*
 * apply.c -- the sample() driver: runs each sampler over the current
 * candidates (dense or sparse, see chain_internal.h) and the selector; plus
 * the usual chain built from llm_sampler_params.
 */
#include "chain_internal.h"

/* ln(x) for positive finite x: x = m * 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172; the series to s^15
 * is below 1e-13 relative. Double arithmetic only, so it is reproducible. */
double llm__log(double x) {
    if (!(x > 0.0)) return -INFINITY;
    int e = 0;
    while (x >= 1.4142135623730951) {
        x *= 0.5;
        e++;
    }
    while (x < 0.7071067811865476) {
        x *= 2.0;
        e--;
    }
    double s = (x - 1.0) / (x + 1.0), s2 = s * s;
    double term = s, sum = 0.0;
    for (int k = 1; k <= 15; k += 2) {
        sum += term / k;
        term *= s2;
    }
    return 2.0 * sum + e * 0.6931471805599453;
}

/* ---- state helpers ------------------------------------------------------- */

static void cands_of(const llm_sampler_chain *ch, llm__cands *c) {
    memset(c, 0, sizeof *c);
    if (ch->dense_mode) {
        c->ids = NULL;
        c->x = ch->dense;
        c->pslot = ch->pslot;
        c->pid = ch->pid;
        c->pval = ch->pval;
        c->np = ch->np;
    } else {
        c->ids = ch->cid[ch->cur];
        c->x = ch->cx[ch->cur];
    }
    c->n = ch->n;
}

static void clear_patches(llm_sampler_chain *ch) {
    for (size_t j = 0; j < ch->np; j++) ch->pslot[ch->pid[j]] = -1;
    ch->np = 0;
}

/* Out buffer: the sparse buffer not holding the current list. */
static llm__out next_out(llm_sampler_chain *ch) {
    int b = ch->dense_mode ? ch->cur : 1 - ch->cur;
    llm__out o = {ch->cid[b], ch->cx[b], 0};
    return o;
}

static void clear_patches(llm_sampler_chain *ch);

static void commit_out(llm_sampler_chain *ch, const llm__out *o) {
    clear_patches(ch); /* the filter has consumed them */
    ch->cur = o->ids == ch->cid[0] ? 0 : 1;
    ch->dense_mode = false;
    ch->n = o->n;
}

/* Writable logits of the current candidates: when dense, the caller's
 * array is copied once (copy-on-write) and pending patches applied. */
static float *writable(llm_sampler_chain *ch) {
    if (!ch->dense_mode) return ch->cx[ch->cur];
    if (ch->dense != ch->work) {
        memcpy(ch->work, ch->dense, ch->n * sizeof(float));
        ch->dense = ch->work;
    }
    for (size_t j = 0; j < ch->np; j++) ch->work[ch->pid[j]] = ch->pval[j];
    clear_patches(ch);
    return ch->work;
}

/* Dense only: read / change the logit of token t (< n) without copying the
 * vocabulary, by patching, while the patch list has room. */
static float dense_get(const llm_sampler_chain *ch, int32_t t) {
    int32_t j = ch->np ? ch->pslot[t] : -1;
    return j >= 0 ? ch->pval[j] : ch->dense[t];
}
static void dense_set(llm_sampler_chain *ch, int32_t t, float v) {
    if (ch->dense == ch->work) {
        ch->work[t] = v;
        return;
    }
    int32_t j = ch->pslot[t];
    if (j < 0) {
        if (ch->np == LLM__PATCH_CAP) {
            writable(ch);
            ch->work[t] = v;
            return;
        }
        j = (int32_t)ch->np++;
        ch->pslot[t] = j;
        ch->pid[j] = t;
    }
    ch->pval[j] = v;
}

static inline const int32_t *ids_now(const llm_sampler_chain *ch) {
    return ch->dense_mode ? ch->iota : ch->cid[ch->cur];
}

/* ---- samplers ------------------------------------------------------------ */

static void apply_bias(llm_sampler_chain *ch, const sampler *s) {
    if (s->n_bias == 0) return;
    if (ch->dense_mode) {
        for (size_t i = 0; i < s->n_bias; i++) {
            int32_t t = s->bias[i].token;
            if ((size_t)t < ch->n) dense_set(ch, t, dense_get(ch, t) + s->bias[i].bias);
        }
        return;
    }
    float *x = ch->cx[ch->cur];
    const int32_t *ids = ch->cid[ch->cur];
    for (size_t i = 0; i < ch->n; i++) { /* binary search in the sorted list */
        size_t lo = 0, hi = s->n_bias;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (s->bias[mid].token < ids[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < s->n_bias && s->bias[lo].token == ids[i]) x[i] += s->bias[lo].bias;
    }
}

static inline float penalize(const sampler *s, float v, int32_t c) {
    if (s->f != 1.0f) v = v > 0.0f ? v / s->f : v * s->f;
    return v - ((float)c * s->freq + s->pres);
}

static void apply_penalties(llm_sampler_chain *ch, sampler *s) {
    if (s->ring_len == 0) return;
    if (s->f == 1.0f && s->freq == 0.0f && s->pres == 0.0f) return;
    size_t w = (size_t)s->i;
    if (ch->dense_mode) {
        /* Visit each distinct token of the window once: mark visited by
         * negating its count, then restore. */
        for (size_t r = 0; r < s->ring_len; r++) {
            int32_t t = s->ring[(s->ring_head + r) % w];
            int32_t c = s->count[t];
            if (c <= 0) continue;
            if ((size_t)t < ch->n) dense_set(ch, t, penalize(s, dense_get(ch, t), c));
            s->count[t] = -c;
        }
        for (size_t r = 0; r < s->ring_len; r++) {
            int32_t t = s->ring[(s->ring_head + r) % w];
            if (s->count[t] < 0) s->count[t] = -s->count[t];
        }
        return;
    }
    float *x = ch->cx[ch->cur];
    const int32_t *ids = ch->cid[ch->cur];
    for (size_t i = 0; i < ch->n; i++) {
        int32_t c = s->count[ids[i]];
        if (c > 0) x[i] = penalize(s, x[i], c);
    }
}

static void apply_temperature(llm_sampler_chain *ch, const sampler *s) {
    if (s->f == 1.0f) return;
    if (ch->np) writable(ch);
    llm__cands in;
    cands_of(ch, &in);
    if (s->f <= 0.0f) { /* greedy: keep the best only */
        size_t pos;
        float m;
        llm__out o = next_out(ch);
        if (llm__argmax(&in, &pos, &m)) {
            o.ids[0] = in.ids ? in.ids[pos] : (int32_t)pos;
            o.x[0] = m;
            o.n = 1;
        }
        commit_out(ch, &o);
        return;
    }
    float inv = 1.0f / s->f;
    const float *src = in.x;
    float *dst = ch->dense_mode ? ch->work : ch->cx[ch->cur];
    for (size_t i = 0; i < ch->n; i++) dst[i] = src[i] * inv; /* fused copy when dense */
    if (ch->dense_mode) ch->dense = ch->work;
}

static void apply_filter(llm_sampler_chain *ch, const sampler *s) {
    if (ch->np && s->kind != K_TOP_K) writable(ch); /* only top-k reads patches */
    llm__cands in;
    cands_of(ch, &in);
    llm__out o = next_out(ch);
    switch (s->kind) {
    case K_TOP_K:
        if (s->i <= 0 || (size_t)s->i >= ch->n) return;
        llm__top_k(&in, (size_t)s->i, &ch->scratch, &o);
        break;
    case K_TOP_P:
    case K_TYPICAL:
        if (s->f >= 1.0f) return;
        llm__mass_select(&in, s->f, s->min_keep, s->kind == K_TYPICAL, &ch->scratch, &o);
        break;
    case K_MIN_P: {
        if (s->f <= 0.0f) return;
        size_t pos;
        float m;
        if (!llm__argmax(&in, &pos, &m)) break;
        float thr = m + (float)llm__log((double)s->f);
        llm__keep_above(&in, thr, s->min_keep, &ch->scratch, &o);
        break;
    }
    default:
        return;
    }
    commit_out(ch, &o);
}

llm_status llm_sampler_chain_sample(llm_sampler_chain *ch, const float *logits, int32_t n_vocab,
                                    int32_t *token) {
    if (token) *token = -1;
    if (!ch || !logits || !token) return llm__sampling_fail(LLM_ERR_INVALID_ARG, "NULL argument");
    if (n_vocab <= 0 || n_vocab > ch->n_vocab_max)
        return llm__sampling_fail(LLM_ERR_INVALID_ARG, "n_vocab %d outside [1, %d]", (int)n_vocab,
                                  (int)ch->n_vocab_max);
    if (ch->n_s == 0 || (ch->s[ch->n_s - 1].kind != K_GREEDY && ch->s[ch->n_s - 1].kind != K_DIST))
        return llm__sampling_fail(LLM_ERR_STATE, "the chain does not end with greedy or dist");

    ch->last_n = 0;
    ch->dense = logits;
    ch->dense_mode = true;
    ch->cur = 0;
    ch->n = (size_t)n_vocab;

    for (size_t k = 0; k + 1 < ch->n_s; k++) {
        sampler *s = &ch->s[k];
        switch (s->kind) {
        case K_BIAS: apply_bias(ch, s); break;
        case K_PENALTIES: apply_penalties(ch, s); break;
        case K_TEMPERATURE: apply_temperature(ch, s); break;
        case K_MASK: {
            float *x = writable(ch);
            llm_status st = s->fn(s->user, ids_now(ch), x, ch->n);
            if (st < 0) return llm__sampling_fail(st, "mask hook failed (%s)", llm_status_str(st));
            break;
        }
        default: apply_filter(ch, s); break;
        }
    }
    if (ch->np) writable(ch); /* the selector reads plain logits */

    llm__cands in;
    cands_of(ch, &in);
    size_t pos;
    float m;
    if (!llm__argmax(&in, &pos, &m))
        return llm__sampling_fail(LLM_ERR_STATE, "no candidate left (all masked or not finite)");
    if (ch->s[ch->n_s - 1].kind == K_DIST) {
        float u = llm__uniform_from_word(llm_philox_stream_word(ch->seed, ch->rng_n));
        ch->rng_n++;
        pos = llm__draw(&in, u, &ch->scratch);
    }
    *token = in.ids ? in.ids[pos] : (int32_t)pos;
    ch->last_n = ch->n;
    ch->last_dense = ch->dense_mode;
    ch->last_dense_private = ch->dense_mode && ch->dense == ch->work;
    return LLM_OK;
}

size_t llm_sampler_chain_last_candidates(const llm_sampler_chain *ch, int32_t *ids, float *logits,
                                         size_t cap) {
    if (!ch) return 0;
    size_t n = ch->last_n < cap ? ch->last_n : cap;
    for (size_t i = 0; i < n; i++) {
        if (ids) ids[i] = ch->last_dense ? (int32_t)i : ch->cid[ch->cur][i];
        if (logits && (!ch->last_dense || ch->last_dense_private))
            logits[i] = ch->last_dense ? ch->work[i] : ch->cx[ch->cur][i];
    }
    return ch->last_n;
}

/* ---- the usual chain ----------------------------------------------------- */

llm_sampler_params llm_sampler_default_params(void) {
    llm_sampler_params p;
    memset(&p, 0, sizeof p);
    p.n_vocab_max = 262144;
    p.seed = 0x5eed;
    p.temperature = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.typical_p = 1.0f;
    p.repeat_penalty = 1.0f;
    p.presence_penalty = 0.0f;
    p.frequency_penalty = 0.0f;
    p.penalty_window = 64;
    p.logit_bias = NULL;
    p.n_logit_bias = 0;
    p.min_keep = 1;
    p.mask = NULL;
    p.mask_user = NULL;
    return p;
}

llm_status llm_sampler_chain_from_params(const llm_sampler_params *p, llm_sampler_chain **out) {
    if (out) *out = NULL;
    if (!p || !out) return llm__sampling_fail(LLM_ERR_INVALID_ARG, "NULL argument");
    llm_sampler_chain_params cp = {p->n_vocab_max, p->seed};
    llm_sampler_chain *ch;
    llm_status st = llm_sampler_chain_create(&cp, &ch);
    if (st != LLM_OK) return st;
#define TRY(call)                                                                                  \
    do {                                                                                           \
        st = (call);                                                                               \
        if (st != LLM_OK) goto fail;                                                               \
    } while (0)
    if (p->mask) TRY(llm_sampler_chain_add_mask(ch, p->mask, p->mask_user));
    if (p->n_logit_bias > 0) TRY(llm_sampler_chain_add_logit_bias(ch, p->logit_bias, p->n_logit_bias));
    if (p->penalty_window != 0 &&
        (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f || p->presence_penalty != 0.0f))
        TRY(llm_sampler_chain_add_penalties(ch, p->penalty_window, p->repeat_penalty,
                                            p->frequency_penalty, p->presence_penalty));
    if (p->temperature <= 0.0f) {
        TRY(llm_sampler_chain_add_greedy(ch));
    } else {
        if (p->top_k > 0) TRY(llm_sampler_chain_add_top_k(ch, p->top_k));
        if (p->typical_p < 1.0f) TRY(llm_sampler_chain_add_typical(ch, p->typical_p, p->min_keep));
        if (p->top_p < 1.0f) TRY(llm_sampler_chain_add_top_p(ch, p->top_p, p->min_keep));
        if (p->min_p > 0.0f) TRY(llm_sampler_chain_add_min_p(ch, p->min_p, p->min_keep));
        TRY(llm_sampler_chain_add_temperature(ch, p->temperature));
        TRY(llm_sampler_chain_add_dist(ch));
    }
#undef TRY
    *out = ch;
    return LLM_OK;
fail:
    llm_sampler_chain_free(ch);
    return st;
}
