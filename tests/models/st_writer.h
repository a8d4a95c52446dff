/*
 * st_writer.h -- test-only SafeTensors and HF-folder builder. Writes the
 * header JSON verbatim (so tests can make it lie) followed by data bytes.
 */
#ifndef LLM_TESTS_ST_WRITER_H
#define LLM_TESTS_ST_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* Buffer: u64 len(header) | header | data[data_len]. Caller frees. */
uint8_t *st_build(const char *header, const void *data, size_t data_len, size_t *out_len);
/* Writes text or bytes to dir/name; 0 on success. */
int st_write_file(const char *dir, const char *name, const void *p, size_t n);
int st_write_text(const char *dir, const char *name, const char *text);
/* mkdtemp under /tmp; returns a malloc'ed path. rm_rf removes it. */
char *st_tmpdir(void);
void st_rm_rf(const char *dir);

#endif
