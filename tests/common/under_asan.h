/*
 * under_asan.h -- LLM_UNDER_ASAN: 1 when the test is compiled with
 * AddressSanitizer (scripts/test.sh --sanitize), else 0. Tests whose
 * forwards run ~30x slower there use it to do the same checks on less work.
 */
#ifndef LLM_TESTS_UNDER_ASAN_H
#define LLM_TESTS_UNDER_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define LLM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LLM_UNDER_ASAN 1
#endif
#endif
#ifndef LLM_UNDER_ASAN
#define LLM_UNDER_ASAN 0
#endif

#endif
