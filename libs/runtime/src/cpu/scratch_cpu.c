/*
 * cpu/scratch_cpu.c -- the CPU backend's memory: zeroed host buffers and the
 * scratch buffers ops grow (per-thread scratch, attention's slot offsets,
 * any 64-byte aligned work buffer). A leaf: ops and the backend table call
 * it, it calls neither.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu/cpu.h"

/* Buffers of 2 MiB and more (the KV cache, the activation arenas) are
 * aligned to 2 MiB and offered to the kernel for transparent huge pages.
 * Attention reads the cache a head at a time, 128-256 bytes per cell at a
 * stride of a whole cell row, and with 4 KiB pages nearly every few cells
 * cost a TLB miss. Where THP is off (or "never") madvise fails and nothing
 * changes.
 *
 * On Linux such a buffer is zeroed by dropping its whole pages
 * (MADV_DONTNEED on private anonymous memory: the next touch of a page maps
 * a zero-filled one) rather than by writing it, so the pages a buffer never
 * touches never become resident: e.g. the arena's logits slot holds 71 rows
 * of n_vocab floats (35 MiB for a 128k vocabulary) and a prompt pass that
 * needs only its last token's logits writes one row. Only the partial last
 * page is written. Should madvise fail, the buffer is written as before. */
#define HUGE_PAGE ((size_t)2 << 20)

void *llm__cpu_zalloc(size_t size) {
    void *p = NULL;
    const int huge = size >= HUGE_PAGE;
    if (posix_memalign(&p, huge ? HUGE_PAGE : 64, size ? size : 64) != 0) {
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (huge) {
        (void)madvise(p, size, MADV_HUGEPAGE); /* only the buffer: a partial 2 MiB tail keeps small pages */
    }
#endif
#if defined(__linux__) && defined(MADV_DONTNEED)
    const long page = sysconf(_SC_PAGESIZE);
    if (huge && page > 0 && HUGE_PAGE % (size_t)page == 0) { /* p is page aligned */
        const size_t whole = size / (size_t)page * (size_t)page;
        if (madvise(p, whole, MADV_DONTNEED) == 0) {
            memset((char *)p + whole, 0, size - whole);
            return p;
        }
    }
#endif
    memset(p, 0, size);
    return p;
}

llm_status llm__cpu_reserve_tscratch(llm__cpu *c, int n_threads, size_t n) {
    if (n <= c->tscratch_len) {
        return LLM_OK;
    }
    size_t len = n + n / 2; /* grow geometrically so long prompts reallocate rarely */
    for (int i = 0; i < n_threads; i++) {
        float *p = llm__cpu_zalloc(len * sizeof(float));
        if (!p) {
            return llm__err(LLM_ERR_NO_MEMORY, "cpu: out of memory for %zu floats of scratch", len);
        }
        free(c->tscratch[i]);
        c->tscratch[i] = p;
    }
    c->tscratch_len = len;
    return LLM_OK;
}

llm_status llm__cpu_reserve_kv_offs(llm__cpu *c, int64_t n_pos) {
    if ((size_t)n_pos <= c->kv_offs_len) {
        return LLM_OK;
    }
    size_t len = (size_t)n_pos + (size_t)n_pos / 2;
    size_t *offs = realloc(c->kv_offs, len * sizeof(size_t));
    if (!offs) {
        return llm__err(LLM_ERR_NO_MEMORY, "attention: no memory for %zu offsets", len);
    }
    c->kv_offs = offs;
    c->kv_offs_len = len;
    return LLM_OK;
}

llm_status llm__cpu_grow(void **buf, size_t *size, size_t need, const char *op, const char *what) {
    if (need <= *size) {
        return LLM_OK;
    }
    void *p = NULL;
    if (posix_memalign(&p, 64, need) != 0) {
        return llm__err(LLM_ERR_NO_MEMORY, "%s: no memory for %s", op, what);
    }
    free(*buf);
    *buf = p;
    *size = need;
    return LLM_OK;
}
