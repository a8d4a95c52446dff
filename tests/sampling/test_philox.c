/*
 * test_philox.c -- Philox4x32-10 against the Random123 known-answer vectors
 * (Random123 distribution, file examples/kat_vectors, the three
 * "philox4x32 10" lines: counter[4] key[2] -> output[4]), and the documented
 * mapping from (seed, n) to stream words and from a word to u.
 */
#include "sampling_test_util.h"

typedef struct {
    uint32_t ctr[4], key[2], out[4];
} kat;

static const kat KATS[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

Test(philox, random123_known_answers) {
    for (size_t i = 0; i < sizeof KATS / sizeof KATS[0]; i++) {
        uint32_t out[4];
        llm_philox4x32_10(KATS[i].ctr, KATS[i].key, out);
        for (int j = 0; j < 4; j++)
            cr_expect_eq(out[j], KATS[i].out[j], "kat %zu word %d: %08x != %08x", i, j, out[j],
                         KATS[i].out[j]);
    }
}

Test(philox, stream_layout_matches_counter_and_key) {
    /* Seed 0, words 0..3 are the all-zero KAT. */
    for (uint64_t n = 0; n < 4; n++) cr_expect_eq(llm_philox_stream_word(0, n), KATS[0].out[n]);
    /* Seed = key of KAT 3 (lo word first); words of block b come from counter {b lo, b hi, 0, 0}. */
    uint64_t seed = ((uint64_t)0x299f31d0 << 32) | 0xa4093822;
    uint64_t blocks[] = {0, 1, 7, 0x100000000ull, 0x123456789abull};
    for (size_t t = 0; t < sizeof blocks / sizeof blocks[0]; t++) {
        uint64_t b = blocks[t];
        uint32_t ctr[4] = {(uint32_t)b, (uint32_t)(b >> 32), 0, 0}, key[2] = {0xa4093822, 0x299f31d0};
        uint32_t out[4];
        llm_philox4x32_10(ctr, key, out);
        for (uint64_t j = 0; j < 4; j++) cr_expect_eq(llm_philox_stream_word(seed, b * 4 + j), out[j]);
    }
}

static const float ALL[4] = {0.0f, 0.0f, 0.0f, 0.0f};

Test(philox, dist_consumes_one_word_per_draw_and_uses_top_24_bits) {
    /* Two equally likely tokens: the draw picks token 0 iff u * Z < Z/2, i.e.
     * iff (w >> 8) < 2^23, i.e. iff the word's top bit is 0. */
    llm_sampler_chain *ch = tu_chain(4, 12345);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    for (uint64_t n = 0; n < 64; n++) {
        int32_t tok;
        cr_assert_eq(llm_sampler_chain_sample(ch, ALL, 2, &tok), LLM_OK);
        uint32_t w = llm_philox_stream_word(12345, n);
        cr_expect_eq(tok, (int32_t)(w >> 31), "draw %d: token %d, word %08x", (int)n, tok, w);
    }
    /* reset rewinds the stream. */
    llm_sampler_chain_reset(ch);
    int32_t tok;
    cr_assert_eq(llm_sampler_chain_sample(ch, ALL, 2, &tok), LLM_OK);
    cr_expect_eq(tok, (int32_t)(llm_philox_stream_word(12345, 0) >> 31));
    llm_sampler_chain_free(ch);
}

Test(philox, greedy_consumes_no_word) {
    llm_sampler_chain *ch = tu_chain(4, 7);
    cr_assert_eq(llm_sampler_chain_add_temperature(ch, 0.0f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    llm_sampler_chain *g = tu_chain(4, 7);
    cr_assert_eq(llm_sampler_chain_add_greedy(g), LLM_OK);
    const float x[4] = {0.1f, 0.9f, 0.3f, 0.2f};
    int32_t a, b;
    cr_assert_eq(llm_sampler_chain_sample(g, x, 4, &a), LLM_OK);
    cr_assert_eq(llm_sampler_chain_sample(ch, x, 4, &b), LLM_OK); /* temp 0 then dist of 1 */
    cr_expect_eq(a, 1);
    cr_expect_eq(b, 1);
    llm_sampler_chain_free(ch);
    llm_sampler_chain_free(g);
}
