/*
 * stop.c -- stop strings matched on streamed text across token boundaries.
 *
 * The matcher keeps a small pending buffer: text that was fed but not yet
 * released. After each feed, the text before the first completed stop is
 * released and the rest dropped; otherwise all but the longest suffix that
 * is a proper prefix of some stop string (or an unfinished UTF-8 sequence)
 * is released. The held suffix is shorter than the longest stop, so the
 * work per feed is bounded by (piece + longest stop) * total stop length.
 *
 * Which stop wins when several complete in the same feed: the one that ends
 * first, then the one that starts first. That is the stop a byte-by-byte
 * feed would have seen first, so the result does not depend on how the text
 * was cut into pieces.
 */
#include <stdlib.h>

#include "sampling_internal.h"

struct llm_stop_matcher {
    char **stops;    /* [n_stops] copies */
    size_t *lens;    /* [n_stops] */
    size_t n_stops;
    char *buf;       /* [cap] pending text; buf[0..emitted) was released last call */
    size_t len, cap, emitted;
    bool stopped;
    int which;
};

void llm_stop_matcher_free(llm_stop_matcher *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_stops; i++) free(m->stops[i]);
    free(m->stops);
    free(m->lens);
    free(m->buf);
    free(m);
}

llm_status llm_stop_matcher_create(const char *const *stops, size_t n_stops,
                                   llm_stop_matcher **out) {
    if (out) *out = NULL;
    if (!out || (!stops && n_stops > 0))
        return llm__sampling_fail(LLM_ERR_INVALID_ARG, "NULL argument");
    for (size_t i = 0; i < n_stops; i++)
        if (!stops[i] || !stops[i][0])
            return llm__sampling_fail(LLM_ERR_INVALID_ARG, "stop string %zu is NULL or empty", i);
    llm_stop_matcher *m = calloc(1, sizeof *m);
    if (!m) return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
    m->which = -1;
    if (n_stops > 0) {
        m->stops = calloc(n_stops, sizeof *m->stops);
        m->lens = calloc(n_stops, sizeof *m->lens);
        if (!m->stops || !m->lens) goto oom;
        m->n_stops = n_stops;
        for (size_t i = 0; i < n_stops; i++) {
            size_t l = strlen(stops[i]);
            m->stops[i] = malloc(l + 1);
            if (!m->stops[i]) goto oom;
            memcpy(m->stops[i], stops[i], l + 1);
            m->lens[i] = l;
        }
    }
    *out = m;
    return LLM_OK;
oom:
    llm_stop_matcher_free(m);
    return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
}

/* Drop the text released by the previous call. */
static void compact(llm_stop_matcher *m) {
    if (m->emitted == 0) return;
    memmove(m->buf, m->buf + m->emitted, m->len - m->emitted);
    m->len -= m->emitted;
    m->emitted = 0;
}

/* Bytes at the end of buf[0..len) forming an unfinished UTF-8 sequence. */
static size_t utf8_tail(const char *buf, size_t len) {
    for (size_t back = 1; back <= 4 && back <= len; back++) {
        unsigned char c = (unsigned char)buf[len - back];
        if ((c & 0xC0) == 0x80) continue; /* continuation: keep looking for the lead */
        size_t need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                      : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > back ? back : 0;
    }
    return 0; /* not UTF-8 we can complete: release it as is */
}

llm_status llm_stop_matcher_feed(llm_stop_matcher *m, const char *piece, size_t len,
                                 const char **out, size_t *out_len) {
    if (out) *out = "";
    if (out_len) *out_len = 0;
    if (!m || !out || !out_len || (!piece && len > 0))
        return llm__sampling_fail(LLM_ERR_INVALID_ARG, "NULL argument");
    if (m->stopped) return LLM_END_OF_STREAM;
    compact(m);
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 64;
        while (cap < m->len + len) cap *= 2;
        char *nb = realloc(m->buf, cap);
        if (!nb) return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
        m->buf = nb;
        m->cap = cap;
    }
    if (len > 0) memcpy(m->buf + m->len, piece, len);
    m->len += len;

    /* A completed stop: smallest end, then smallest start. */
    size_t best_end = SIZE_MAX, best_start = 0;
    int best = -1;
    for (size_t s = 0; s < m->n_stops; s++) {
        size_t l = m->lens[s];
        for (size_t st = 0; st + l <= m->len; st++) {
            if (st + l > best_end) break;
            if (memcmp(m->buf + st, m->stops[s], l) == 0) {
                if (st + l < best_end || (st + l == best_end && st < best_start)) {
                    best_end = st + l;
                    best_start = st;
                    best = (int)s;
                }
                break;
            }
        }
    }
    if (best >= 0) {
        m->stopped = true;
        m->which = best;
        *out = m->buf;
        *out_len = best_start;
        m->emitted = m->len; /* everything from the stop on is dropped */
        return LLM_END_OF_STREAM;
    }

    /* Hold back the longest suffix that a stop string starts with. */
    size_t hold = 0;
    for (size_t s = 0; s < m->n_stops; s++) {
        size_t l = m->lens[s];
        size_t kmax = l - 1 < m->len ? l - 1 : m->len;
        for (size_t k = kmax; k > hold; k--) {
            if (memcmp(m->buf + m->len - k, m->stops[s], k) == 0) {
                hold = k;
                break;
            }
        }
    }
    size_t t = utf8_tail(m->buf, m->len);
    if (t > hold) hold = t;
    *out = m->buf;
    *out_len = m->len - hold;
    m->emitted = m->len - hold;
    return LLM_OK;
}

llm_status llm_stop_matcher_flush(llm_stop_matcher *m, const char **out, size_t *out_len) {
    if (out) *out = "";
    if (out_len) *out_len = 0;
    if (!m || !out || !out_len) return llm__sampling_fail(LLM_ERR_INVALID_ARG, "NULL argument");
    if (m->stopped) return LLM_END_OF_STREAM;
    compact(m);
    *out = m->buf ? m->buf : "";
    *out_len = m->len;
    m->emitted = m->len;
    return LLM_OK;
}

bool llm_stop_matcher_stopped(const llm_stop_matcher *m) { return m && m->stopped; }

int llm_stop_matcher_which(const llm_stop_matcher *m) { return m ? m->which : -1; }

void llm_stop_matcher_reset(llm_stop_matcher *m) {
    if (!m) return;
    m->len = 0;
    m->emitted = 0;
    m->stopped = false;
    m->which = -1;
}
