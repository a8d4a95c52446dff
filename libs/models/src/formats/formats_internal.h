/*
 * formats_internal.h -- PRIVATE to llama-models: helpers shared by the file
 * readers and the model descriptor (error text, file mapping, string hash
 * index, UTF-8 check, little-endian reads).
 */
#ifndef LLM_MODELS_FORMATS_INTERNAL_H
#define LLM_MODELS_FORMATS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "llama/fileutil.h"
#include "llama/models.h"

/* Sets the calling thread's last error (printf-style) and returns st. */
llm_status llm__models_error(llm_status st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clears the last error (sets it to ""). */
void llm__models_clear_error(void);

/* Copies the calling thread's llm_gguf_last_error() into this library's
 * message and returns st: for a failed llm_gguf_* call whose status a
 * models function returns as its own. */
llm_status llm__models_gguf_error(llm_status st);

/* The mapping behind a SafeTensors reader (a GGUF's pages are released by
 * llama-gguf itself, llm_gguf_release_pages). llm__mapped and the other
 * shared reader pieces: llama/fileutil.h (llama-common). */
const llm__mapped *llm__st_mapping(const struct llm_safetensors *st);

static inline uint16_t llm__rd16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t llm__rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t llm__rd64(const uint8_t *p) {
    return (uint64_t)llm__rd32(p) | (uint64_t)llm__rd32(p + 4) << 32;
}

/* malloc'ed NUL-terminated copy of s[0..len), or NULL. */

/* Builds a descriptor from an already open GGUF (takes ownership of g, also
 * on failure). Defined in desc_gguf.c. */
llm_status llm__desc_from_gguf_handle(llm_gguf *g, const char *path, llm_model_desc **out);

#endif
