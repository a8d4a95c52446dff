/*
 * fileutil.c -- the small pieces the file readers of several libraries share
 * (llama-gguf, llama-models): a read-only file mapping, a name hash index
 * and a strict UTF-8 check. Internal: declared in llama/fileutil.h.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llama/fileutil.h"

llm_status llm__map_file(const char *path, llm__err_slot slot, const char *what, llm__mapped *m) {
    memset(m, 0, sizeof *m);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return llm__err_set(slot, LLM_ERR_IO, "%s: %s: cannot open: %s", what, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return llm__err_set(slot, LLM_ERR_IO, "%s: %s: cannot stat: %s", what, path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return llm__err_set(slot, LLM_ERR_IO, "%s: %s: not a regular file", what, path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return LLM_OK; /* empty: the parser reports "too small" */
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return llm__err_set(slot, LLM_ERR_IO, "%s: %s: too large to map", what, path);
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file alive */
    if (p == MAP_FAILED)
        return llm__err_set(slot, LLM_ERR_IO, "%s: %s: cannot map: %s", what, path, strerror(e));
    m->data = (const uint8_t *)p;
    m->size = (uint64_t)sb.st_size;
    m->owned = 1;
    return LLM_OK;
}

void llm__unmap(llm__mapped *m) {
    if (m && m->owned && m->data) munmap((void *)m->data, (size_t)m->size);
    if (m) memset(m, 0, sizeof *m);
}

void llm__mapped_release(const llm__mapped *m, const void *p, size_t n) {
    const uintptr_t lo = (uintptr_t)p, hi = lo + n, base = (uintptr_t)(m ? m->data : NULL);
    if (!m || !m->owned || !m->data || lo < base || hi > base + m->size) return;
    const long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return;
    const uintptr_t a = (lo + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1), b = hi & ~((uintptr_t)pg - 1);
    /* A private read-only file mapping: MADV_DONTNEED drops the pages, the
     * next read maps the file's again. Advice only: a failure changes nothing. */
    if (b > a) (void)madvise((void *)a, b - a, MADV_DONTNEED);
}

char *llm__strndup(const char *s, size_t len) {
    char *r = malloc(len + 1);
    if (!r) return NULL;
    if (len) memcpy(r, s, len);
    r[len] = '\0';
    return r;
}

/* FNV-1a: short names, no adversarial-collision concern worth more. */
static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 1099511628211ull;
    }
    return h;
}

llm_status llm__strmap_init(llm__strmap *m, uint64_t n, llm__name_fn get, const void *ctx) {
    uint64_t cap = 16;
    while (cap < 2 * n + 1) {
        if (cap > (UINT64_MAX >> 2) || cap > SIZE_MAX / sizeof(int64_t) / 2) return LLM_ERR_NO_MEMORY;
        cap <<= 1;
    }
    m->slots = malloc((size_t)cap * sizeof(int64_t));
    if (!m->slots) return LLM_ERR_NO_MEMORY;
    for (uint64_t i = 0; i < cap; i++) m->slots[i] = -1;
    m->mask = cap - 1;
    m->get = get;
    m->ctx = ctx;
    return LLM_OK;
}

void llm__strmap_free(llm__strmap *m) {
    if (!m) return;
    free(m->slots);
    m->slots = NULL;
}

int64_t llm__strmap_insert(llm__strmap *m, int64_t id) {
    const char *name = m->get(m->ctx, id);
    for (uint64_t i = hash_name(name) & m->mask;; i = (i + 1) & m->mask) {
        if (m->slots[i] < 0) {
            m->slots[i] = id;
            return -1;
        }
        if (strcmp(m->get(m->ctx, m->slots[i]), name) == 0) return m->slots[i];
    }
}

int64_t llm__strmap_find(const llm__strmap *m, const char *name) {
    if (!m->slots || !name) return -1;
    for (uint64_t i = hash_name(name) & m->mask;; i = (i + 1) & m->mask) {
        if (m->slots[i] < 0) return -1;
        if (strcmp(m->get(m->ctx, m->slots[i]), name) == 0) return m->slots[i];
    }
}

int llm__utf8_valid(const uint8_t *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        const uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1Fu; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0Fu; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07u; min = 0x10000; }
        else return 0;
        if (len - i <= n) return 0;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += n + 1;
    }
    return 1;
}
