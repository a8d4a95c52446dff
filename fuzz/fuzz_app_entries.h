/* fuzz_app_entries.h -- the programs' parsing entry points for fuzzing and
 * corpus replay (fuzz_app_entry.c). Each returns 0; a bug aborts. */
#ifndef LLM_FUZZ_APP_ENTRIES_H
#define LLM_FUZZ_APP_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

/* llm-chat's argv: the input split at NUL bytes. */
int llm_fuzz_chat_args_one(const uint8_t *data, size_t size);
/* llm-embed's input: byte 0 bit 0 = JSONL, the rest is the file. */
int llm_fuzz_embed_input_one(const uint8_t *data, size_t size);

#endif
