/*
 * test_stop.c -- stop sequences on streamed text: stops split over 2 and 3
 * pieces, overlapping candidates, a stop in the first piece, several stops,
 * held text released when a partial match fails, UTF-8 safety, and output
 * independent of how the text is cut into pieces.
 */
#include "sampling_test_util.h"

/* Feed pieces, concatenate what is emitted; returns the final status. */
static llm_status feed_all(llm_stop_matcher *m, const char *const *pieces, size_t n, char *acc,
                           size_t cap, bool flush) {
    acc[0] = '\0';
    llm_status st = LLM_OK;
    for (size_t i = 0; i < n; i++) {
        const char *out;
        size_t len;
        st = llm_stop_matcher_feed(m, pieces[i], strlen(pieces[i]), &out, &len);
        cr_assert(st == LLM_OK || st == LLM_END_OF_STREAM, "status %d", st);
        cr_assert_lt(strlen(acc) + len, cap);
        strncat(acc, out, len);
    }
    if (flush) {
        const char *out;
        size_t len;
        llm_status fs = llm_stop_matcher_flush(m, &out, &len);
        strncat(acc, out, len);
        if (st == LLM_OK) st = fs;
    }
    return st;
}

static llm_stop_matcher *mk(const char *const *stops, size_t n) {
    llm_stop_matcher *m;
    cr_assert_eq(llm_stop_matcher_create(stops, n, &m), LLM_OK);
    return m;
}

/* Feed one piece and check exactly what is emitted now. */
static void step(llm_stop_matcher *m, const char *piece, const char *want, llm_status want_st) {
    const char *out;
    size_t len;
    llm_status st = llm_stop_matcher_feed(m, piece, strlen(piece), &out, &len);
    cr_expect_eq(st, want_st, "feeding '%s'", piece);
    cr_expect_eq(len, strlen(want), "feeding '%s': emitted %zu bytes '%.*s', want '%s'", piece, len,
                 (int)len, out, want);
    if (len == strlen(want)) cr_expect(memcmp(out, want, len) == 0);
}

Test(stop, split_over_two_pieces) {
    const char *stops[] = {"</s>"};
    llm_stop_matcher *m = mk(stops, 1);
    step(m, "Hello </", "Hello ", LLM_OK);
    step(m, "s> world", "", LLM_END_OF_STREAM);
    cr_expect(llm_stop_matcher_stopped(m));
    cr_expect_eq(llm_stop_matcher_which(m), 0);
    step(m, "more", "", LLM_END_OF_STREAM); /* nothing after a stop */
    llm_stop_matcher_free(m);
}

Test(stop, split_over_three_pieces) {
    const char *stops[] = {"<|im_end|>"};
    llm_stop_matcher *m = mk(stops, 1);
    step(m, "Sure.<|", "Sure.", LLM_OK);
    step(m, "im_", "", LLM_OK);
    step(m, "end|>\n", "", LLM_END_OF_STREAM);
    llm_stop_matcher_free(m);
}

Test(stop, overlapping_candidates) {
    const char *stops[] = {"abcx", "bcd"};
    llm_stop_matcher *m = mk(stops, 2);
    step(m, "a", "", LLM_OK);
    step(m, "b", "", LLM_OK);
    step(m, "c", "", LLM_OK);
    step(m, "d", "a", LLM_END_OF_STREAM);
    cr_expect_eq(llm_stop_matcher_which(m), 1);
    llm_stop_matcher_reset(m);
    cr_expect(!llm_stop_matcher_stopped(m));
    step(m, "abcd", "a", LLM_END_OF_STREAM);
    llm_stop_matcher_reset(m);
    step(m, "zabcxd", "z", LLM_END_OF_STREAM);
    cr_expect_eq(llm_stop_matcher_which(m), 0);
    llm_stop_matcher_free(m);
}

Test(stop, first_piece_is_the_stop) {
    const char *stops[] = {"STOP"};
    llm_stop_matcher *m = mk(stops, 1);
    step(m, "STOP", "", LLM_END_OF_STREAM);
    llm_stop_matcher_reset(m);
    step(m, "ST", "", LLM_OK);
    step(m, "OP and more", "", LLM_END_OF_STREAM);
    llm_stop_matcher_free(m);
}

Test(stop, several_stops_first_completed_wins) {
    const char *stops[] = {"\n\n", "User:", "abcdef", "cd"};
    llm_stop_matcher *m = mk(stops, 4);
    step(m, "Hi\nUs", "Hi\n", LLM_OK);
    step(m, "er: x", "", LLM_END_OF_STREAM);
    cr_expect_eq(llm_stop_matcher_which(m), 1);
    llm_stop_matcher_reset(m);
    /* "cd" completes before "abcdef" would: same as a byte-by-byte feed */
    step(m, "xxabcdef", "xxab", LLM_END_OF_STREAM);
    cr_expect_eq(llm_stop_matcher_which(m), 3);
    llm_stop_matcher_reset(m);
    step(m, "ok\n", "ok", LLM_OK);
    step(m, "\n", "", LLM_END_OF_STREAM);
    cr_expect_eq(llm_stop_matcher_which(m), 0);
    llm_stop_matcher_free(m);
}

Test(stop, partial_match_released_when_it_fails) {
    const char *stops[] = {"abc"};
    llm_stop_matcher *m = mk(stops, 1);
    step(m, "xab", "x", LLM_OK);
    step(m, "d", "abd", LLM_OK);
    step(m, "a", "", LLM_OK);
    step(m, "a", "a", LLM_OK); /* "aa": the first a can no longer start "abc" */
    const char *out;
    size_t len;
    cr_expect_eq(llm_stop_matcher_flush(m, &out, &len), LLM_OK);
    cr_expect_eq(len, 1);
    cr_expect_eq(out[0], 'a');
    cr_expect(!llm_stop_matcher_stopped(m));
    llm_stop_matcher_free(m);
}

Test(stop, utf8_never_split) {
    const char *stops[] = {"\xc3\xa9!", "\xe6\x97\xa5\xe6\x9c\xac"}; /* "é!", "日本" */
    llm_stop_matcher *m = mk(stops, 2);
    step(m, "caf\xc3", "caf", LLM_OK);
    step(m, "\xa9 ok", "\xc3\xa9 ok", LLM_OK);
    step(m, "x\xe6\x97\xa5", "x", LLM_OK);          /* "日" may start "日本" */
    step(m, "\xe6\x9b\x9c", "\xe6\x97\xa5\xe6\x9b\x9c", LLM_OK); /* "日曜": released */
    step(m, "\xe6\x97\xa5\xe6", "", LLM_OK);
    step(m, "\x9c\xac!", "", LLM_END_OF_STREAM);
    llm_stop_matcher_free(m);
    /* no stops: only an unfinished sequence is held */
    m = mk(NULL, 0);
    step(m, "a\xe6\x97", "a", LLM_OK);
    step(m, "\xa5", "\xe6\x97\xa5", LLM_OK);
    step(m, "\xf0\x9f", "", LLM_OK);
    step(m, "\x98\x80z", "\xf0\x9f\x98\x80z", LLM_OK); /* U+1F600 */
    llm_stop_matcher_free(m);
}

Test(stop, output_does_not_depend_on_cuts) {
    const char *stops[] = {"<end>", "endet", "\xe2\x82\xac\xe2\x82\xac"};
    const char *text = "Wir wenden \xe2\x82\xac und <en> und <e-end und \xe2\x82\xac"
                       "x enden <end> tail";
    size_t n = strlen(text);
    char whole[256], acc[256], buf[256];
    llm_stop_matcher *m = mk(stops, 3);
    const char *p1[1] = {text};
    llm_status st = feed_all(m, p1, 1, whole, sizeof whole, true);
    cr_expect_eq(st, LLM_END_OF_STREAM);
    cr_expect_str_eq(whole, "Wir wenden \xe2\x82\xac und <en> und <e-end und \xe2\x82\xacx enden ");
    uint64_t s = 5;
    for (int trial = 0; trial < 200; trial++) {
        llm_stop_matcher_reset(m);
        acc[0] = '\0';
        size_t pos = 0;
        llm_status last = LLM_OK;
        while (pos < n) {
            size_t k = 1 + (size_t)(tu_next(&s) % 6);
            if (pos + k > n) k = n - pos;
            memcpy(buf, text + pos, k);
            const char *out;
            size_t len;
            last = llm_stop_matcher_feed(m, buf, k, &out, &len);
            strncat(acc, out, len);
            pos += k;
        }
        cr_expect_eq(last, LLM_END_OF_STREAM);
        cr_expect_str_eq(acc, whole, "trial %d", trial);
    }
    llm_stop_matcher_free(m);
}

Test(stop, bad_arguments) {
    llm_stop_matcher *m = (llm_stop_matcher *)1;
    const char *empty[] = {"ok", ""};
    cr_expect_eq(llm_stop_matcher_create(empty, 2, &m), LLM_ERR_INVALID_ARG);
    cr_expect_null(m);
    cr_expect_eq(llm_stop_matcher_create(NULL, 1, &m), LLM_ERR_INVALID_ARG);
    const char *out;
    size_t len;
    cr_expect_eq(llm_stop_matcher_feed(NULL, "a", 1, &out, &len), LLM_ERR_INVALID_ARG);
}
