/* golden_logits.c -- see golden_logits.h for the file layout. */
#include "golden_logits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rd(FILE *f, void *dst, size_t n) { return fread(dst, 1, n, f) == n ? 0 : -1; }

static void *rd_alloc(FILE *f, size_t n, int *err) {
    void *p = malloc(n ? n : 1);
    if (!p || rd(f, p, n) != 0) {
        *err = 1;
    }
    return p;
}

int golden_load(const char *path, golden_set *g) {
    memset(g, 0, sizeof(*g));
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char magic[8];
    uint32_t hdr[5];
    int err = rd(f, magic, 8) || memcmp(magic, "LLMLGLD1", 8) != 0 || rd(f, hdr, sizeof(hdr)) || hdr[0] != 1;
    if (!err) {
        g->n_prompts = (int32_t)hdr[1];
        g->n_vocab = (int32_t)hdr[2];
        g->topk = (int32_t)hdr[3];
        g->n_cont = (int32_t)hdr[4];
        g->prompts = calloc((size_t)g->n_prompts, sizeof(golden_prompt));
        err = !g->prompts || g->n_prompts > 100 || g->topk > 100;
    }
    for (int32_t i = 0; !err && i < g->n_prompts; i++) {
        golden_prompt *p = &g->prompts[i];
        uint32_t len, n;
        err = rd(f, &len, 4) || len >= sizeof(p->name) || rd(f, p->name, len);
        if (err || rd(f, &n, 4) || n > 100000) { err = 1; break; }
        p->n_tokens = (int32_t)n;
        p->tokens = rd_alloc(f, 4 * (size_t)n, &err);
        p->argmax = malloc(4 * (size_t)n);
        p->gap = malloc(4 * (size_t)n);
        p->top_ids = malloc(4 * (size_t)n * (size_t)g->topk);
        p->top_logits = malloc(4 * (size_t)n * (size_t)g->topk);
        for (uint32_t t = 0; !err && t < n; t++) {
            err = rd(f, &p->argmax[t], 4) || rd(f, &p->gap[t], 4) ||
                  rd(f, p->top_ids + (size_t)t * g->topk, 4 * (size_t)g->topk) ||
                  rd(f, p->top_logits + (size_t)t * g->topk, 4 * (size_t)g->topk);
        }
        uint32_t nf;
        if (err || rd(f, &nf, 4) || nf > 16) { err = 1; break; }
        p->n_full = (int32_t)nf;
        p->full_pos = malloc(4 * (size_t)nf + 4);
        p->full_logits = malloc(4 * (size_t)nf * (size_t)g->n_vocab + 4);
        for (uint32_t k = 0; !err && k < nf; k++) {
            err = rd(f, &p->full_pos[k], 4) || rd(f, p->full_logits + (size_t)k * g->n_vocab, 4 * (size_t)g->n_vocab);
        }
        uint32_t nc;
        if (err || rd(f, &nc, 4) || nc > 4096) { err = 1; break; }
        p->n_cont = (int32_t)nc;
        p->cont = malloc(4 * (size_t)nc + 4);
        p->cont_gap = malloc(4 * (size_t)nc + 4);
        for (uint32_t k = 0; !err && k < nc; k++) {
            err = rd(f, &p->cont[k], 4) || rd(f, &p->cont_gap[k], 4);
        }
    }
    fclose(f);
    if (err) {
        golden_free(g);
        return -1;
    }
    return 0;
}

void golden_free(golden_set *g) {
    for (int32_t i = 0; g->prompts && i < g->n_prompts; i++) {
        golden_prompt *p = &g->prompts[i];
        free(p->tokens); free(p->argmax); free(p->gap); free(p->top_ids); free(p->top_logits);
        free(p->full_pos); free(p->full_logits); free(p->cont); free(p->cont_gap);
    }
    free(g->prompts);
    memset(g, 0, sizeof(*g));
}
