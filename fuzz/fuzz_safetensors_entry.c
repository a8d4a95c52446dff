/*
 * fuzz_safetensors_entry.c -- feeds one input to the SafeTensors reader and,
 * when accepted, checks every tensor's range lies inside the input and the
 * ranges tile the data exactly, and runs the name lookups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_entries.h"
#include "llama/models.h"

#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                      \
        }                                                                 \
    } while (0)

int llm_fuzz_safetensors_one(const uint8_t *data, size_t size) {
    llm_safetensors *st = NULL;
    if (llm_safetensors_open_memory(data, size, "fuzz", &st) != LLM_OK) {
        CHECK(st == NULL);
        CHECK(llm_models_last_error()[0] != '\0');
        return 0;
    }
    uint64_t end = 0;
    unsigned h = 0;
    for (int64_t i = 0; i < llm_safetensors_tensor_count(st); i++) {
        const llm_st_tensor *t = llm_safetensors_tensor_at(st, i);
        CHECK(t && t->name && llm_safetensors_find_tensor(st, t->name) != NULL);
        CHECK(t->offset <= size && t->size <= size - t->offset);
        CHECK((const uint8_t *)t->data == data + t->offset);
        CHECK(i == 0 || t->offset == end);
        CHECK(t->n_dims <= 4);
        end = t->offset + t->size;
        if (t->size) h += ((const uint8_t *)t->data)[t->size - 1];
        if (t->type >= 0 && t->size >= 4) {
            float f[2];
            CHECK(llm_dtype_dequantize_row((llm_dtype)t->type, t->data, f, t->type == LLM_DTYPE_F32 ? 1 : 2) == LLM_OK);
        }
    }
    CHECK(llm_safetensors_tensor_count(st) == 0 || end == size);
    for (int64_t i = 0; i < llm_safetensors_meta_count(st); i++)
        h += (unsigned)strlen(llm_safetensors_meta_key(st, i)) + (unsigned)strlen(llm_safetensors_meta_value(st, i));
    llm_safetensors_close(st);
    (void)h;
    return 0;
}
