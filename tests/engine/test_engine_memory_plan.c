/* The memory plan counts what is really mapped and allocated (issue 19,
 * item 11): at n_ctx 4096 the plan of llm_model_plan() is within 10% of the
 * resident memory the load and one chat-sized turn add to the process, read
 * from /proc/self/status (VmRSS before loading, VmHWM after decoding).
 *
 * Both the growth and the absolute peak are compared: the growth is what the
 * model costs; the absolute peak also holds the test runner and libraries
 * (before item 12, a CUDA build's libcublasLt pages alone were 62 MiB).
 * Skipped under AddressSanitizer, whose shadow memory and redzones add to
 * every allocation. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* A "Vm...:  N kB" line of /proc/self/status, in bytes; 0 if absent. */
static uint64_t status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long v = 0;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            sscanf(line + n + 1, "%llu", &v);
            break;
        }
    fclose(f);
    return (uint64_t)v * 1024u;
}

static double mib(uint64_t b) { return (double)b / 1048576.0; }

static bool on_text(const char *t, size_t n, llm_token tok, void *u) {
    (void)t, (void)n, (void)tok, (void)u;
    return true;
}

Test(memory_plan, within_10_percent_of_resident_growth_at_ctx_4096) {
#ifdef UNDER_ASAN
    cr_skip_test("AddressSanitizer adds shadow memory to every allocation");
#endif
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || !*p || access(p, R_OK) != 0)
        cr_skip_test("default model not found (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    uint64_t before = status_kib("VmRSS");
    cr_assert(before > 0, "no VmRSS in /proc/self/status");

    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 1;
    mp.n_ctx = 4096;
    llm_memory_plan plan;
    cr_assert_eq(llm_model_plan(p, &mp, &plan), LLM_OK, "plan: %s", llm_last_error());
    llm_model *m = NULL;
    cr_assert_eq(llm_load_model(p, &mp, &m), LLM_OK, "load: %s", llm_last_error());
    llm_session_params sp = llm_session_default_params();
    sp.sampling.temperature = 0.0f;
    llm_session *s = NULL;
    cr_assert_eq(llm_session_new(m, &sp, &s), LLM_OK, "%s", llm_last_error());
    llm_token toks[512];
    int32_t n = 0;
    const char *text = "Write a short poem about the sea, the wind and the harbour lights at night.";
    cr_assert_eq(llm_tokenize(m, text, strlen(text), LLM_ENCODE_ADD_SPECIAL, toks, 512, &n), LLM_OK);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK, "%s", llm_session_last_error(s));
    llm_status st = llm_decode(s, 32, on_text, NULL);
    cr_assert(st >= 0, "decode: %s", llm_session_last_error(s));

    uint64_t peak = status_kib("VmHWM");
    uint64_t grown = peak - before;
    double ratio = (double)plan.total_bytes / (double)grown;
    cr_log_info("plan %.1f MiB (mapped %.1f + KV %.1f + scratch %.1f), resident growth %.1f MiB "
                "(VmRSS before %.1f, VmHWM after %.1f): ratio %.3f",
                mib(plan.total_bytes), mib(plan.weights_bytes), mib(plan.kv_bytes), mib(plan.scratch_bytes),
                mib(grown), mib(before), mib(peak), ratio);
    cr_expect(ratio > 0.90 && ratio < 1.10,
              "plan %.1f MiB vs resident growth %.1f MiB (ratio %.3f): not within 10%%",
              mib(plan.total_bytes), mib(grown), ratio);
    /* And against the absolute peak, as llm-chat prints it: what the process
     * held before (runner, libraries) is small now that no CUDA library is
     * linked (issue 19 item 12). */
    double abs_ratio = (double)plan.total_bytes / (double)peak;
    cr_expect(abs_ratio > 0.90 && abs_ratio < 1.10,
              "plan %.1f MiB vs peak RSS %.1f MiB (ratio %.3f): not within 10%%", mib(plan.total_bytes),
              mib(peak), abs_ratio);
    llm_session_free(s);
    llm_model_free(m);
}
