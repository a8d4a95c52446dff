/*
 * select.c -- the candidate kernels: argmax, top-k, threshold filter, mass
 * histogram selection (top-p, typical) and the draw.
 *
 * None sorts the whole input. Inputs are either dense (the full vocabulary,
 * position == token id) or a sparse candidate list; outputs always go to a
 * sparse list. Loops over the full vocabulary are written so gcc vectorizes
 * them (fixed lanes, no early exits) or skip 16 logits at a time with one
 * branch, because at 150k+ tokens the memory pass is the whole cost.
 *
 * Ordering: "better" means higher logit, then lower position. Packed uint64
 * keys carry that order in one integer compare: (order(x) << 32) | ~pos.
 */
#include "sampling_internal.h"
#include "simd.h"

/* x86-64 with gcc/clang: the exp-heavy loops get an AVX2 twin chosen at run
 * time. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LLM_X86_DISPATCH 1
#define LLM_ALWAYS_INLINE __attribute__((always_inline))
#else
#define LLM_X86_DISPATCH 0
#define LLM_ALWAYS_INLINE
#endif

#define SKIP 16          /* logits tested per branch in the scans */
#define NBUCKET 256      /* mass histogram buckets */
#define BUCKET_SCALE 8.0f /* buckets per logit (or per nat for typical) */
#define DRAW_BLOCK 256   /* positions per block in the draw */
#define TOP_P_BAND 8.0f  /* logits below the max histogrammed in the band pass */

/* Monotone map from float (not NaN) to uint32: a < b <=> ord(a) < ord(b). */
static inline uint32_t ord_f(float v) {
    uint32_t u = llm__f2u(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline int32_t id_at(const llm__cands *in, size_t pos) {
    return in->ids ? in->ids[pos] : (int32_t)pos;
}

static inline void emit(const llm__cands *in, size_t pos, llm__out *out) {
    out->ids[out->n] = id_at(in, pos);
    out->x[out->n] = in->x[pos];
    out->n++;
}

bool llm__argmax(const llm__cands *in, size_t *pos, float *max) {
    const float *x = in->x;
    size_t n = in->n;
    float m = llm__max_raw(x, n);
    if (m == INFINITY) { /* rare: +inf logits are skipped, like NaN */
        m = -INFINITY;
        for (size_t i = 0; i < n; i++) m = (x[i] > m && x[i] < INFINITY) ? x[i] : m;
    }
    if (!(m > -INFINITY)) return false;
    *pos = llm__find_first(x, n, m);
    *max = m;
    return true;
}

/* ---- top-k: bounded min-heap of packed keys (root = worst kept) ------- */

static inline uint64_t pack_better(float v, size_t pos) {
    return ((uint64_t)ord_f(v) << 32) | (uint32_t)~(uint32_t)pos;
}
static inline size_t unpack_pos(uint64_t k) {
    return (size_t)(uint32_t)~(uint32_t)k;
}
static inline float unpack_val(uint64_t k) {
    uint32_t o = (uint32_t)(k >> 32);
    return llm__u2f((o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o);
}

static void heap_sift_down(uint64_t *h, size_t n, size_t i) {
    uint64_t v = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static void heap_sift_up(uint64_t *h, size_t i) {
    uint64_t v = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p] <= v) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

/* In-place ascending sort of packed keys without allocating (glibc's qsort
 * may malloc a merge buffer, and sample() must not allocate): insertion sort
 * for short runs, heapsort otherwise. Keys are unique, so the order is fully
 * determined whatever the algorithm. */
static void sift_max(uint64_t *a, size_t n, size_t i) {
    uint64_t v = a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && a[c + 1] > a[c]) c++;
        if (a[c] <= v) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = v;
}

static void sort_u64(uint64_t *a, size_t n) {
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            uint64_t v = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    for (size_t i = n / 2; i-- > 0;) sift_max(a, n, i);
    for (size_t end = n - 1; end > 0; end--) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_max(a, end, 0);
    }
}

typedef struct heap {
    uint64_t *h;
    size_t n, k;
    float thr; /* value at the root once full; strict > keeps ties' first */
} heap;

static inline void heap_offer(heap *hp, float v, size_t pos) {
    if (!(v >= hp->thr && v > -INFINITY && v < INFINITY)) return;
    uint64_t key = pack_better(v, pos);
    if (hp->n < hp->k) {
        hp->h[hp->n++] = key;
        heap_sift_up(hp->h, hp->n - 1);
        if (hp->n == hp->k) hp->thr = unpack_val(hp->h[0]);
    } else if (key > hp->h[0]) {
        hp->h[0] = key;
        heap_sift_down(hp->h, hp->n, 0);
        hp->thr = unpack_val(hp->h[0]);
    }
}

void llm__top_k(const llm__cands *in, size_t k, llm__scratch *s, llm__out *out) {
    const float *x = in->x;
    size_t n = in->n;
    heap hp = {s->keys, 0, k, -INFINITY};
    out->n = 0;
    if (k == 0) return;
    /* Patched positions (dense only) are skipped in the scan and offered
     * with their patched value afterwards. */
    const int32_t *pslot = in->np ? in->pslot : NULL;
    size_t i = 0;
    while (i < n) {
        size_t end = i + SKIP <= n ? i + SKIP : n;
        if (end - i == SKIP && !llm__any16(x + i, hp.thr, 0)) {
            i = end;
            continue;
        }
        for (; i < end; i++) {
            if (pslot && pslot[i] >= 0) continue;
            heap_offer(&hp, x[i], i);
        }
    }
    for (size_t p = 0; p < in->np; p++) heap_offer(&hp, in->pval[p], (size_t)in->pid[p]);
    sort_u64(hp.h, hp.n); /* ascending: the best is last */
    for (size_t r = hp.n; r-- > 0;) {
        size_t pos = unpack_pos(hp.h[r]);
        out->ids[out->n] = id_at(in, pos);
        out->x[out->n] = unpack_val(hp.h[r]);
        out->n++;
    }
}

void llm__keep_above(const llm__cands *in, float thr, size_t min_keep, llm__scratch *s,
                     llm__out *out) {
    const float *x = in->x;
    size_t n = in->n;
    out->n = 0;
    size_t i = 0;
    while (i < n) {
        size_t end = i + SKIP <= n ? i + SKIP : n;
        if (end - i == SKIP && !llm__any16(x + i, thr, 1)) {
            i = end;
            continue;
        }
        for (; i < end; i++) {
            float v = x[i];
            if (v >= thr && v < INFINITY) emit(in, i, out);
        }
    }
    if (out->n < min_keep) llm__top_k(in, min_keep, s, out);
}

/* ---- top-p / typical: mass histogram, then sort one boundary bucket ----- */

/* Selection key (smaller = kept first): top-p M - x; typical |M - x - c|. */
static inline float sel_key(float v, float m, bool typical, float c) {
    float d = m - v;
    if (!typical) return d;
    float k = d - c;
    return k < 0.0f ? -k : k;
}
static inline int bucket_of(float key) {
    /* Guarded so NaN or +-inf (from a +inf logit) never reaches the
     * float->int conversion. */
    return ((key >= 0.0f) & (key < 31.9f)) ? (int)(key * BUCKET_SCALE) : NBUCKET - 1;
}

/* typical: -ln p_i - H = (M - x_i) - S/Z with S = sum w_i (M - x_i). */
static float typical_center(const float *x, size_t n, float m) {
    float zl[8] = {0}, sl[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 8; j++) {
            float d = m - x[i + j];
            float w = llm__expf_neg(-d);
            float dc = d <= 80.0f ? d : 0.0f; /* w == 0 there; avoids 0 * inf */
            zl[j] += w;
            sl[j] += w * dc;
        }
    }
    for (; i < n; i++) {
        float d = m - x[i];
        float w = llm__expf_neg(-d);
        float dc = d <= 80.0f ? d : 0.0f;
        zl[i & 7] += w;
        sl[i & 7] += w * dc;
    }
    float z = 0.0f, sd = 0.0f;
    for (int j = 0; j < 8; j++) {
        z += zl[j];
        sd += sl[j];
    }
    return sd / z;
}

/* Weight and bucket of each of xc[0..len), len <= 64. */
static inline LLM_ALWAYS_INLINE void chunk_body(const float *xc, size_t len, float m, bool typical,
                                                float c, float *cw, int32_t *cb) {
    if (typical) {
        for (size_t j = 0; j < len; j++) {
            cw[j] = llm__expf_neg(xc[j] - m);
            cb[j] = bucket_of(sel_key(xc[j], m, true, c));
        }
    } else {
        for (size_t j = 0; j < len; j++) {
            cw[j] = llm__expf_neg(xc[j] - m);
            cb[j] = bucket_of(sel_key(xc[j], m, false, c));
        }
    }
}

#if LLM_X86_DISPATCH
__attribute__((target("avx2"))) static void chunk_avx2(const float *xc, size_t len, float m,
                                                        bool typical, float c, float *cw,
                                                        int32_t *cb) {
    chunk_body(xc, len, m, typical, c, cw, cb);
}
#endif

static void chunk_weights(const float *xc, size_t len, float m, bool typical, float c, float *cw,
                          int32_t *cb) {
#if LLM_X86_DISPATCH
    if (__builtin_cpu_supports("avx2")) {
        chunk_avx2(xc, len, m, typical, c, cw, cb);
        return;
    }
#endif
    chunk_body(xc, len, m, typical, c, cw, cb);
}

/* Mass per bucket of the elements with x >= lo (all when lo == -inf).
 * Four interleaved histograms (position % 4) break the store-to-load chain
 * when neighbours share a bucket; merged in a fixed order. */
static void histogram(const float *x, size_t n, float m, bool typical, float c, float lo,
                      float *mass /* [NBUCKET] */) {
    float hist[4][NBUCKET];
    memset(hist, 0, sizeof hist);
    if (lo == -INFINITY) {
        /* weights and buckets of a chunk in a vectorizable loop, then scatter */
        float cw[64];
        int32_t cb[64];
        for (size_t i0 = 0; i0 < n; i0 += 64) {
            size_t len = n - i0 < 64 ? n - i0 : 64;
            const float *xc = x + i0;
            chunk_weights(xc, len, m, typical, c, cw, cb);
            for (size_t j = 0; j < len; j++) hist[j & 3][cb[j]] += cw[j];
        }
    } else {
        size_t i = 0;
        while (i < n) {
            size_t end = i + SKIP <= n ? i + SKIP : n;
            if (end - i == SKIP && !llm__any16(x + i, lo, 1)) {
                i = end;
                continue;
            }
            for (; i < end; i++) {
                float v = x[i];
                if (!(v >= lo && v < INFINITY)) continue;
                hist[i & 3][bucket_of(sel_key(v, m, typical, c))] += llm__expf_neg(v - m);
            }
        }
    }
    for (int b = 0; b < NBUCKET; b++)
        mass[b] = ((hist[0][b] + hist[1][b]) + hist[2][b]) + hist[3][b];
}

/* First bucket where the running mass reaches target (-1 if none); *cum
 * gets the mass of the buckets before it. */
static int find_cut(const float *mass, float target, float *cum) {
    float acc = 0.0f;
    for (int b = 0; b < NBUCKET; b++) {
        if (acc + mass[b] >= target) {
            *cum = acc;
            return b;
        }
        acc += mass[b];
    }
    *cum = acc;
    return -1;
}

/* Buckets before bstar are kept whole (in position order); bstar's members
 * are sorted by (key asc, position asc) and taken until the mass reaches the
 * target. Only elements with x >= lo are looked at (the same set the
 * histogram saw). */
static void collect(const llm__cands *in, float m, bool typical, float c, float lo, int bstar,
                    float cum, float target, size_t min_keep, llm__scratch *s, llm__out *out) {
    const float *x = in->x;
    size_t n = in->n;
    uint64_t *ring = s->keys;
    size_t nring = 0;
    size_t i = 0;
    while (i < n) {
        size_t end = i + SKIP <= n ? i + SKIP : n;
        if (lo > -INFINITY && end - i == SKIP && !llm__any16(x + i, lo, 1)) {
            i = end;
            continue;
        }
        for (; i < end; i++) {
            float v = x[i];
            if (!(v >= lo && v > -INFINITY && v < INFINITY)) continue;
            float key = sel_key(v, m, typical, c);
            int b = bucket_of(key);
            if (b < bstar) {
                emit(in, i, out);
            } else if (b == bstar) {
                ring[nring++] = ((uint64_t)ord_f(key) << 32) | (uint32_t)i;
            }
        }
    }
    sort_u64(ring, nring);
    float acc = cum;
    for (size_t r = 0; r < nring; r++) {
        if (acc >= target && out->n >= min_keep) break;
        size_t pos = (size_t)(uint32_t)ring[r];
        emit(in, pos, out);
        acc += llm__expf_neg(x[pos] - m);
    }
}

static float block_sum(const float *x, size_t lo, size_t hi, float m);

void llm__mass_select(const llm__cands *in, float p, size_t min_keep, bool typical,
                      llm__scratch *s, llm__out *out) {
    const float *x = in->x;
    size_t n = in->n;
    size_t mpos;
    float m;
    float mass[NBUCKET];
    float cum;
    out->n = 0;
    if (!llm__argmax(in, &mpos, &m)) return;
    if (!typical) {
        /* Band pass: the total mass Z in one vectorized pass, then a
         * histogram of only the logits within TOP_P_BAND of the max. When
         * the cut falls inside the band (the usual case), nothing else of
         * the vocabulary is touched again. */
        float z = 0.0f;
        for (size_t b0 = 0; b0 < n; b0 += 4096) /* fixed 4096-blocks, summed in order */
            z += block_sum(x, b0, b0 + 4096 < n ? b0 + 4096 : n, m);
        float lo = m - TOP_P_BAND;
        histogram(x, n, m, false, 0.0f, lo, mass);
        float target = p * z;
        int bstar = find_cut(mass, target, &cum);
        if (bstar >= 0) {
            collect(in, m, false, 0.0f, lo, bstar, cum, target, min_keep, s, out);
            if (out->n < min_keep) llm__top_k(in, min_keep, s, out);
            return;
        }
    }
    float c = typical ? typical_center(x, n, m) : 0.0f;
    histogram(x, n, m, typical, c, -INFINITY, mass);
    float z = 0.0f;
    for (int b = 0; b < NBUCKET; b++) z += mass[b];
    float target = p * z;
    int bstar = find_cut(mass, target, &cum);
    if (bstar < 0) bstar = NBUCKET - 1;
    collect(in, m, typical, c, -INFINITY, bstar, cum, target, min_keep, s, out);
    if (out->n < min_keep) llm__top_k(in, min_keep, s, out);
}

/* ---- the draw ----------------------------------------------------------- */

/* Sum of exp(x - m) over [lo, hi): eight lanes (lane j takes positions
 * with (i - lo) % 8 == j), then lanes 0..7 added left to right. */
static inline LLM_ALWAYS_INLINE float block_sum_body(const float *x, size_t lo, size_t hi, float m) {
    float lane[8] = {0};
    size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        for (int j = 0; j < 8; j++) lane[j] += llm__expf_neg(x[i + j] - m);
    }
    for (; i < hi; i++) lane[(i - lo) & 7] += llm__expf_neg(x[i] - m);
    float sum = 0.0f;
    for (int j = 0; j < 8; j++) sum += lane[j];
    return sum;
}

#if LLM_X86_DISPATCH
/* The same code compiled for AVX2 (no FMA: -ffp-contract=off keeps every
 * rounding), so the result is bit-identical to the baseline build. */
__attribute__((target("avx2"))) static float block_sum_avx2(const float *x, size_t lo, size_t hi,
                                                             float m) {
    return block_sum_body(x, lo, hi, m);
}
#endif

static float block_sum(const float *x, size_t lo, size_t hi, float m) {
#if LLM_X86_DISPATCH
    if (__builtin_cpu_supports("avx2")) return block_sum_avx2(x, lo, hi, m);
#endif
    return block_sum_body(x, lo, hi, m);
}

size_t llm__draw(const llm__cands *in, float u, llm__scratch *s) {
    const float *x = in->x;
    size_t n = in->n;
    size_t mpos;
    float m;
    if (!llm__argmax(in, &mpos, &m)) return 0;
    size_t nb = (n + DRAW_BLOCK - 1) / DRAW_BLOCK;
    float z = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        size_t lo = b * DRAW_BLOCK, hi = lo + DRAW_BLOCK < n ? lo + DRAW_BLOCK : n;
        s->blocks[b] = block_sum(x, lo, hi, m);
        z += s->blocks[b];
    }
    float t = u * z;
    float acc = 0.0f;
    size_t last = mpos; /* last position with w > 0, for the rounding fallback */
    for (size_t b = 0; b < nb; b++) {
        size_t lo = b * DRAW_BLOCK, hi = lo + DRAW_BLOCK < n ? lo + DRAW_BLOCK : n;
        if (s->blocks[b] > 0.0f) {
            for (size_t i = hi; i > lo; i--) {
                if (llm__expf_neg(x[i - 1] - m) > 0.0f) {
                    last = i - 1;
                    break;
                }
            }
        }
        if (!(acc + s->blocks[b] > t)) {
            acc += s->blocks[b];
            continue;
        }
        for (size_t i = lo; i < hi; i++) {
            acc += llm__expf_neg(x[i] - m);
            if (acc > t) return i;
        }
    }
    return last;
}
