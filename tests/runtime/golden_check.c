/* golden_check.c -- see golden_check.h. */
#define _POSIX_C_SOURCE 200809L
#include "golden_check.h"

#include <sys/stat.h>

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR_TIE 0.5f
#define MAX_ABS_TOL 2.5
#define RMSE_TOL 0.4
#define POS0_TOL 1e-4

void gc_open(gc_fx *f, const char *path, int n_threads, llm_kernels kernels) {
    gc_open_ctx(f, path, n_threads, kernels, 0);
}

static void open_with(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, const llm_net_params *np);

void gc_open_ctx(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, int32_t n_ctx_seq) {
    llm_net_params np = llm_net_default_params();
    np.n_ctx_seq = n_ctx_seq;
    open_with(f, path, n_threads, kernels, &np);
}

void gc_open_kv(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, llm_dtype type_k, llm_dtype type_v) {
    llm_net_params np = llm_net_default_params();
    np.type_k = type_k;
    np.type_v = type_v;
    open_with(f, path, n_threads, kernels, &np);
}

void gc_open_np(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, const llm_net_params *np) {
    open_with(f, path, n_threads, kernels, np);
}

static void open_with(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, const llm_net_params *np) {
    memset(f, 0, sizeof(*f));
    if (!path || !*path) cr_skip_test("model path not set");
    FILE *probe = fopen(path, "rb");
    if (!probe) cr_skip_test("model %s not present", path);
    fclose(probe);
    struct stat sb;
    const int dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode); /* a Hugging Face folder */
    cr_assert_eq(dir ? llm_model_desc_from_dir(path, &f->desc) : llm_model_desc_from_gguf(path, &f->desc), LLM_OK,
                 "%s", llm_models_last_error());
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = n_threads;
    bp.kernels = kernels;
    cr_assert_eq(llm_backend_create("cpu", &bp, &f->be), LLM_OK);
    cr_assert_eq(llm_net_create(f->desc, f->be, np, &f->net), LLM_OK, "%s", llm_net_last_error());
    cr_assert_eq(llm_net_kv_create(f->net, GC_N_BLOCKS, GC_BLOCK, &f->kv), LLM_OK);
    if (llm_net_is_recurrent(f->net)) /* one state slot: gc_run's single sequence */
        cr_assert_eq(llm_net_kv_state_alloc(f->kv, 1), LLM_OK, "%s", llm_net_last_error());
    for (int i = 0; i < GC_N_BLOCKS; i++) f->table[i] = (i * 7 + 3) % GC_N_BLOCKS;
    f->n_vocab = (int32_t)llm_net_hparams(f->net)->n_vocab;
}

void gc_close(gc_fx *f) {
    llm_net_kv_free(f->kv);
    llm_net_free(f->net);
    llm_backend_free(f->be);
    llm_model_desc_free(f->desc);
}

void gc_run(gc_fx *f, const int32_t *tokens, int32_t n, int32_t first, llm_logits_mode mode, float *logits) {
    int32_t mb = llm_net_max_batch(f->net);
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)mb);
    for (int32_t c = 0; c < n; c += mb) {
        int32_t m = n - c < mb ? n - c : mb;
        for (int32_t i = 0; i < m; i++) pos[i] = first + c + i;
        llm_net_seq seq = {m, f->table, GC_N_BLOCKS, NULL, 0};
        const int32_t slot = 1; /* recurrent nets: state slot 1 */
        llm_net_batch b = llm_net_batch_default();
        b.tokens = tokens + c;
        b.positions = pos;
        b.n_tokens = m;
        b.seqs = &seq;
        b.n_seqs = 1;
        b.state_slots = &slot;
        b.logits_mode = (mode == LLM_LOGITS_LAST && c + m < n) ? LLM_LOGITS_NONE : mode;
        b.logits = mode == LLM_LOGITS_ALL ? logits + (size_t)c * f->n_vocab : logits;
        cr_assert_eq(llm_net_forward(f->net, f->kv, &b), LLM_OK, "%s", llm_net_last_error());
    }
    free(pos);
}

int32_t gc_argmax(const float *v, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

/* Any selection built on AVX2 (+ AVX-VNNI or AVX-512 VNNI) keeps llama.cpp's bits. */
int gc_exact_kernels(const gc_fx *f) { return strncmp(llm_backend_kernels(f->be), "avx2+fma+f16c", 13) == 0; }

int gc_check_logits(gc_fx *f, const golden_set *g, int exact, int32_t max_pos) {
    cr_assert_eq(g->n_vocab, f->n_vocab, "golden vocabulary %d, model %d", g->n_vocab, f->n_vocab);
    int fails = 0, total_pos = 0, total_equal = 0;
    for (int32_t pi = 0; pi < g->n_prompts; pi++) {
        const golden_prompt *p = &g->prompts[pi];
        int32_t n = p->n_tokens;
        if (max_pos && n > max_pos) n = max_pos;
        float *lg = malloc(sizeof(float) * (size_t)n * f->n_vocab);
        gc_run(f, p->tokens, n, 0, LLM_LOGITS_ALL, lg);
        double max_top = 0, max_full = 0, se = 0;
        size_t cnt = 0;
        int near = 0, mism = 0;
        for (int32_t t = 0; t < n; t++) {
            const float *row = lg + (size_t)t * f->n_vocab;
            for (int32_t k = 0; k < g->topk; k++) {
                double d = fabs(row[p->top_ids[t * g->topk + k]] - p->top_logits[t * g->topk + k]);
                max_top = d > max_top ? d : max_top;
            }
            if (t == 0) {
                for (int32_t k = 0; k < g->topk; k++) {
                    cr_expect(fabs(row[p->top_ids[k]] - p->top_logits[k]) <= POS0_TOL,
                              "%s pos 0: logit of %d is %.6f, llama.cpp %.6f", p->name, p->top_ids[k],
                              (double)row[p->top_ids[k]], (double)p->top_logits[k]);
                }
            }
            int32_t am = gc_argmax(row, f->n_vocab);
            total_pos++;
            total_equal += am == p->argmax[t];
            if (am != p->argmax[t]) {
                const int tie = p->gap[t] < NEAR_TIE;
                near += tie;
                mism += !tie;
                fprintf(stderr, "  %s pos %d: argmax %d vs llama.cpp %d (llama.cpp gap %.4f%s)\n", p->name, t, am,
                        p->argmax[t], (double)p->gap[t], tie ? ": near tie" : ") MISMATCH (");
            }
        }
        for (int32_t k = 0; k < p->n_full; k++) {
            int32_t t = p->full_pos[k];
            if (t >= n) continue;
            const float *row = lg + (size_t)t * f->n_vocab, *ref = p->full_logits + (size_t)k * f->n_vocab;
            for (int32_t v = 0; v < f->n_vocab; v++) {
                double d = (double)row[v] - ref[v];
                se += d * d;
                cnt++;
                max_full = fabs(d) > max_full ? fabs(d) : max_full;
            }
        }
        double rmse = cnt ? sqrt(se / (double)cnt) : 0;
        fprintf(stderr, "%-12s %4d pos: top-10 max|diff| %.4f, full-vocab max|diff| %.4f rmse %.5f, "
                        "argmax mismatches %d (+%d near ties)\n",
                p->name, n, max_top, max_full, rmse, mism, near);
        fails += mism + near;
        if (exact) {
            cr_expect(max_top == 0.0 && max_full == 0.0,
                      "%s: with %s kernels logits should equal llama.cpp's bit for bit (max|diff| %g / %g)",
                      p->name, llm_backend_kernels(f->be), max_top, max_full);
        }
        cr_expect_leq(max_top, MAX_ABS_TOL, "%s: top-10 logits differ by %g", p->name, max_top);
        cr_expect_leq(max_full, MAX_ABS_TOL, "%s: full logits differ by %g", p->name, max_full);
        cr_expect_leq(rmse, RMSE_TOL, "%s: rmse %g", p->name, rmse);
        free(lg);
        /* Reset is implicit: the next prompt overwrites positions from 0. */
    }
    fprintf(stderr, "argmax equal at %d of %d positions\n", total_equal, total_pos);
    cr_expect_eq(fails, 0, "argmax differs from llama.cpp's at %d positions", fails);
    return fails;
}

void gc_check_greedy(gc_fx *f, const golden_set *g, int max_prompts, int32_t max_tokens, int32_t max_steps) {
    float *lg = malloc(sizeof(float) * (size_t)f->n_vocab);
    int prompts_done = 0, all_steps = 0, all_equal = 0;
    for (int32_t pi = 0; pi < g->n_prompts; pi++) {
        const golden_prompt *p = &g->prompts[pi];
        if ((max_tokens && p->n_tokens > max_tokens) || (max_prompts && prompts_done >= max_prompts)) continue;
        prompts_done++;
        gc_run(f, p->tokens, p->n_tokens, 0, LLM_LOGITS_LAST, lg);
        int32_t steps = max_steps && max_steps < p->n_cont ? max_steps : p->n_cont;
        int32_t pos = p->n_tokens, equal = 0, first_div = -1;
        for (int32_t s = 0; s < steps; s++) {
            int32_t tok = gc_argmax(lg, f->n_vocab);
            if (tok == p->cont[s]) {
                equal++;
            } else if (first_div < 0) {
                first_div = s;
                fprintf(stderr, "  %s step %d: %d vs llama.cpp %d (llama.cpp gap %.4f)\n", p->name, s, tok,
                        p->cont[s], (double)p->cont_gap[s]);
            }
            /* Free running: our own pick is fed back (one KV-cached decode
             * step), as a user's greedy generation would. */
            gc_run(f, &tok, 1, pos++, LLM_LOGITS_LAST, lg);
        }
        fprintf(stderr, "%-12s greedy continuation: %d/%d steps equal (first difference at step %d, -1: none)\n",
                p->name, equal, steps, first_div);
        cr_expect_eq(first_div, -1, "%s: greedy continuation leaves llama.cpp's at step %d", p->name, first_div);
        all_steps += steps;
        all_equal += equal;
    }
    fprintf(stderr, "greedy continuation: %d of %d steps equal\n", all_equal, all_steps);
    free(lg);
}
