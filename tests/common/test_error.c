/* The shared error facility (llama/error.h): per-slot, per-thread messages,
 * printf formatting, arguments that point into a slot, truncation, and the
 * copy into a handle-owned buffer, and the wrapper LLM__DEFINE_FAIL defines. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "llama/error.h"

Test(error, set_get_clear_per_slot) {
    cr_expect_eq(llm__err_set(LLM__ERR_KV, LLM_ERR_EXHAUSTED, "no block for seq %d", 7), LLM_ERR_EXHAUSTED);
    cr_expect_eq(llm__err_set(LLM__ERR_TOKENIZER, LLM_ERR_BAD_UTF8, "%s at %zu", "bad byte", (size_t)3),
                 LLM_ERR_BAD_UTF8);
    cr_expect_str_eq(llm__err_get(LLM__ERR_KV), "no block for seq 7");
    cr_expect_str_eq(llm__err_get(LLM__ERR_TOKENIZER), "bad byte at 3");
    llm__err_clear(LLM__ERR_KV);
    cr_expect_str_eq(llm__err_get(LLM__ERR_KV), "");
    cr_expect_str_eq(llm__err_get(LLM__ERR_TOKENIZER), "bad byte at 3");
    /* Out-of-range slots are ignored, never NULL. */
    cr_expect_str_eq(llm__err_get(LLM__ERR_N_SLOTS), "");
    cr_expect_str_eq(llm__err_get((llm__err_slot)-1), "");
    cr_expect_eq(llm__err_set(LLM__ERR_N_SLOTS, LLM_ERR_IO, "x"), LLM_ERR_IO);
}

/* What a library writes once: a file-local wrapper over its slot. */
LLM__PRINTF(2, 3) static llm_status sampling_fail(llm_status st, const char *fmt, ...);
static LLM__DEFINE_FAIL(sampling_fail, LLM__ERR_SAMPLING)

Test(error, defined_fail_wrapper_records_in_its_slot) {
    llm__err_clear(LLM__ERR_KV);
    cr_expect_eq(sampling_fail(LLM_ERR_INVALID_ARG, "top_k %d < 0", -3), LLM_ERR_INVALID_ARG);
    cr_expect_str_eq(llm__err_get(LLM__ERR_SAMPLING), "top_k -3 < 0");
    cr_expect_str_eq(llm__err_get(LLM__ERR_KV), "");
    cr_expect_eq(sampling_fail(LLM_CANCELLED, "%s", ""), LLM_CANCELLED); /* positive codes pass through */
    cr_expect_str_eq(llm__err_get(LLM__ERR_SAMPLING), "");
}

Test(error, arguments_may_point_into_the_slot) {
    llm__err_set(LLM__ERR_ENGINE, LLM_ERR_IO, "inner");
    llm__err_set(LLM__ERR_ENGINE, LLM_ERR_IO, "outer: %s (%s)", llm__err_get(LLM__ERR_ENGINE),
                 llm__err_get(LLM__ERR_ENGINE));
    cr_expect_str_eq(llm__err_get(LLM__ERR_ENGINE), "outer: inner (inner)");
}

Test(error, long_messages_are_truncated) {
    char big[3 * LLM__ERR_MSG_CAP];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    llm__err_set(LLM__ERR_MODELS, LLM_ERR_BAD_FORMAT, "%s", big);
    cr_expect_eq(strlen(llm__err_get(LLM__ERR_MODELS)), (size_t)LLM__ERR_MSG_CAP - 1);
}

Test(error, handle_buffer_gets_a_copy) {
    char buf[8];
    memset(buf, '#', sizeof buf);
    cr_expect_eq(llm__err_set_handle(LLM__ERR_ENGINE, buf, sizeof buf, LLM_ERR_STATE, "state %d", 12345),
                 LLM_ERR_STATE);
    cr_expect_str_eq(llm__err_get(LLM__ERR_ENGINE), "state 12345");
    cr_expect_str_eq(buf, "state 1"); /* truncated to the handle's capacity, NUL-terminated */
    /* The handle's own text as an argument. */
    char hb[64] = "first";
    llm__err_set_handle(LLM__ERR_ENGINE, hb, sizeof hb, LLM_ERR_STATE, "second after %s", hb);
    cr_expect_str_eq(hb, "second after first");
    /* NULL buffer: the slot only. */
    llm__err_set_handle(LLM__ERR_ENGINE, NULL, 0, LLM_ERR_STATE, "slot only");
    cr_expect_str_eq(llm__err_get(LLM__ERR_ENGINE), "slot only");
}

static void *other_thread(void *arg) {
    char *seen = arg;
    /* A fresh thread starts with empty slots, whatever the main thread set. */
    strcpy(seen, llm__err_get(LLM__ERR_SAMPLING));
    llm__err_set(LLM__ERR_SAMPLING, LLM_ERR_INVALID_ARG, "from the other thread");
    return NULL;
}

Test(error, messages_are_per_thread) {
    llm__err_set(LLM__ERR_SAMPLING, LLM_ERR_INVALID_ARG, "from the main thread");
    char seen[LLM__ERR_MSG_CAP] = "unset";
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, other_thread, seen), 0);
    pthread_join(th, NULL);
    cr_expect_str_eq(seen, "");
    cr_expect_str_eq(llm__err_get(LLM__ERR_SAMPLING), "from the main thread");
}
