/* bench_kv: throughput of the KV bookkeeping at realistic sizes.
 *
 *     bench_kv [n_blocks] [block_size] [prompt_len]
 *
 * Defaults: 8192 blocks of 16 tokens (131072 token slots, e.g. 2.9 GiB of
 * F16 K/V for SmolLM2-135M), 64 sequences, 1024-token prompts. Prints ops/s
 * for: decode append (1 token, with commit), prefill append (whole prompt,
 * with commit), prefix lookup (probe of a fully cached prompt), attach +
 * free (prefill with a full hit), fork + free of a long sequence, and a
 * decode step with copy-on-write after fork. Device work is not included:
 * these are the host costs the engine pays per call. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "llama/kv.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, llm_status st) {
    fprintf(stderr, "bench_kv: %s: %s (%s)\n", what, llm_status_str(st), llm_kv_last_error());
    exit(1);
}

#define CHECK(call)                          \
    do {                                     \
        llm_status st_ = (call);             \
        if (st_ != LLM_OK) die(#call, st_);  \
    } while (0)

static void report(const char *name, long ops, double secs, const char *unit) {
    printf("%-34s %10.0f %s/s  (%ld in %.3f s, %.1f ns each)\n", name, (double)ops / secs, unit, ops,
           secs, 1e9 * secs / (double)ops);
}

int main(int argc, char **argv) {
    const int32_t n_blocks = argc > 1 ? atoi(argv[1]) : 8192;
    const int32_t bs = argc > 2 ? atoi(argv[2]) : 16;
    const int32_t plen = argc > 3 ? atoi(argv[3]) : 1024;
    const int32_t n_seqs = 64;
    if (n_blocks <= 0 || bs <= 0 || plen <= 1) {
        fprintf(stderr, "usage: bench_kv [n_blocks] [block_size] [prompt_len]\n");
        return 2;
    }
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = n_blocks;
    pp.block_size = bs;
    pp.bytes_per_token = (size_t)2 * 30 * 3 * 64 * 2; /* K+V x layers x kv heads x head dim x F16 */
    llm_kv_pool *pool;
    CHECK(llm_kv_pool_create(&pp, &pool));
    printf("pool: %d blocks x %d tokens, %.2f GiB of F16 K/V for SmolLM2-135M (%zu B/token)\n",
           n_blocks, bs, (double)n_blocks * bs * (double)pp.bytes_per_token / (1 << 30),
           pp.bytes_per_token);

    int32_t *prompt = malloc((size_t)plen * sizeof *prompt);
    if (!prompt) return 1;
    uint32_t r = 1;
    for (int32_t i = 0; i < plen; i++) {
        r = r * 1664525u + 1013904223u;
        prompt[i] = (int32_t)(r >> 17) % 49152;
    }
    llm_kv_cow cow;
    llm_kv_seq_id seqs[64];

    /* Prefill append + commit of distinct prompts (first token differs). */
    const int32_t per_seq_blocks = n_blocks / n_seqs;
    int32_t decode_room = per_seq_blocks * bs - plen;
    if (decode_room < 1) {
        fprintf(stderr, "bench_kv: pool too small for %d sequences of %d tokens\n", n_seqs, plen);
        return 1;
    }
    double t0 = now_s();
    long n = 0;
    const int rounds = 32;
    for (int round = 0; round < rounds; round++) {
        for (int s = 0; s < n_seqs; s++) {
            CHECK(llm_kv_seq_create(pool, &seqs[s]));
            prompt[0] = s + 1000 * round;
            CHECK(llm_kv_seq_append(pool, seqs[s], prompt, plen, &cow));
            CHECK(llm_kv_seq_commit(pool, seqs[s], plen));
            n++;
        }
        if (round < rounds - 1)
            for (int s = 0; s < n_seqs; s++) CHECK(llm_kv_seq_free(pool, seqs[s]));
    }
    double dt = now_s() - t0;
    report("prefill append+commit (prompt)", n, dt, "prompts");
    printf("%-34s %10.0f tokens/s\n", "", (double)n * plen / dt);

    /* Decode: one token per sequence per step, commit after each step. */
    t0 = now_s();
    n = 0;
    for (int rep = 0; rep < 16; rep++) {
        /* Back to the prompt (a block boundary: no copy needed), decode again. */
        for (int s = 0; s < n_seqs; s++) CHECK(llm_kv_seq_truncate(pool, seqs[s], plen));
        for (int32_t step = 0; step < decode_room; step++) {
            for (int s = 0; s < n_seqs; s++) {
                int32_t tok = step + rep;
                CHECK(llm_kv_seq_append(pool, seqs[s], &tok, 1, &cow));
                CHECK(llm_kv_seq_commit(pool, seqs[s], llm_kv_seq_len(pool, seqs[s])));
                n++;
            }
        }
    }
    report("decode append+commit (1 token)", n, now_s() - t0, "tokens");

    /* Prefix lookup probe of a fully cached prompt. */
    prompt[0] = 1000 * (rounds - 1); /* the first sequence's prompt of the last round */
    int32_t hit = 0;
    t0 = now_s();
    n = 0;
    for (int i = 0; i < 20000; i++) {
        CHECK(llm_kv_prefix_lookup(pool, prompt, plen, &hit));
        n++;
    }
    dt = now_s() - t0;
    report("prefix lookup (cached prompt)", n, dt, "lookups");
    printf("%-34s %10.0f blocks/s (hit %d of %d tokens)\n", "", (double)n * (hit / bs) / dt, hit, plen);

    /* Attach (full hit) + free: a new request reusing a cached prompt. */
    t0 = now_s();
    n = 0;
    for (int i = 0; i < 20000; i++) {
        llm_kv_seq_id s;
        CHECK(llm_kv_seq_create(pool, &s));
        CHECK(llm_kv_seq_attach_prefix(pool, s, prompt, plen - 1, &hit));
        CHECK(llm_kv_seq_free(pool, s));
        n++;
    }
    report("attach (full hit) + free", n, now_s() - t0, "requests");

    /* Fork + free of a long sequence (plen + decode tokens). */
    t0 = now_s();
    n = 0;
    for (int i = 0; i < 50000; i++) {
        llm_kv_seq_id c;
        CHECK(llm_kv_seq_fork(pool, seqs[i % n_seqs], &c));
        CHECK(llm_kv_seq_free(pool, c));
        n++;
    }
    report("fork + free", n, now_s() - t0, "forks");
    printf("%-34s (%d blocks per sequence)\n", "", (llm_kv_seq_len(pool, seqs[0]) + bs - 1) / bs);

    /* Free everything but a few, then fork + first decode step with COW. */
    for (int s = 8; s < n_seqs; s++) CHECK(llm_kv_seq_free(pool, seqs[s]));
    CHECK(llm_kv_seq_truncate(pool, seqs[0], plen + 1)); /* partial last block */
    t0 = now_s();
    n = 0;
    long copies = 0;
    for (int i = 0; i < 50000; i++) {
        llm_kv_seq_id c;
        int32_t tok = i;
        CHECK(llm_kv_seq_fork(pool, seqs[0], &c));
        CHECK(llm_kv_seq_append(pool, c, &tok, 1, &cow));
        copies += cow.src >= 0;
        CHECK(llm_kv_seq_free(pool, c));
        n++;
    }
    report("fork + COW append + free", n, now_s() - t0, "forks");
    printf("%-34s (%ld copies reported)\n", "", copies);

    llm_kv_stats st;
    CHECK(llm_kv_pool_stats(pool, &st));
    printf("final: used %d cached %d free %d, indexed %d, evictions %llu, hits %llu blocks\n", st.n_used,
           st.n_cached, st.n_free, st.n_indexed, (unsigned long long)st.evictions,
           (unsigned long long)st.hit_blocks);
    CHECK(llm_kv_pool_check(pool));
    llm_kv_pool_free(pool);
    free(prompt);
    return 0;
}
