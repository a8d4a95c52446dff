/* What every llm-* program shares: validated options, output files written
 * beside their target and renamed when complete, checked stdout, input text
 * checks and exit codes. Links only libc (no library of ours), so tools that
 * do not link the engine (llm-inspect, llm-tokenize) use it too.
 *
 * Usage:
 *   int32_t t;
 *   if (app_parse_threads("llm-x", "-t", argv[i], &t)) return APP_EXIT_USAGE;
 *   app_file out;
 *   if (app_file_open(&out, "llm-x", path)) return APP_EXIT_FAIL;   // path "-" = stdout
 *   fprintf(out.f, ...);
 *   if (app_file_commit(&out, "llm-x")) return APP_EXIT_FAIL;     // fsync + rename
 *   return app_finish_stdout("llm-x");                            // 0, or 1 on a write error
 */
#ifndef LLM_APP_COMMON_H
#define LLM_APP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of every program. */
enum {
    APP_EXIT_OK = 0,
    APP_EXIT_FAIL = 1,         /* an error; the reason is on stderr */
    APP_EXIT_USAGE = 2,        /* bad command line */
    APP_EXIT_INTERRUPTED = 130 /* stopped by Ctrl-C (SIGINT) before the work was complete */
};

/* ---- options ------------------------------------------------------------ */

/* Each parser prints "PROG: OPT expects ..., got 'S'" on stderr and returns
 * -1 when S is not a valid value; returns 0 and sets *out otherwise. */
int app_parse_i32(const char *prog, const char *opt, const char *s, int32_t lo, int32_t hi,
                  int32_t *out);
/* A finite number in [lo, hi]; NaN and infinities are refused. */
int app_parse_f32(const char *prog, const char *opt, const char *s, float lo, float hi, float *out);
/* Like app_parse_f32 but the lower bound is excluded: (lo, hi]. */
int app_parse_f32_above(const char *prog, const char *opt, const char *s, float lo, float hi,
                        float *out);
/* -t: 0 (= all cores) up to the number of CPUs this process may run on;
 * more is refused, naming that number. */
int app_parse_threads(const char *prog, const char *opt, const char *s, int32_t *out);
/* The number of CPUs this process may run on (affinity mask), >= 1. */
int app_cpu_count(void);
/* Prints "PROG: option OPT needs a value" and returns -1 when v is NULL. */
int app_need_value(const char *prog, const char *opt, const char *v);

/* The default model path: $LLM_MODEL, else ${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-
 * $HOME/.cache}/llm/models}/APP_DEFAULT_MODEL_FILE. */
#define APP_DEFAULT_MODEL_FILE "SmolLM2-135M-Instruct.Q4_1.gguf"
void app_default_model(char *buf, size_t cap);

/* Bytes of memory available to this process without swapping: the smaller of
 * /proc/meminfo's MemAvailable and the cgroup's memory.max less its current
 * use; 0 when unknown. */
uint64_t app_available_memory(void);
/* Refuses a plan of `need` bytes larger than app_available_memory(): prints
 * "PROG: refusing to ... (lower HOW, or --force to try anyway)" and returns -1;
 * with force, prints a warning and returns 0. 0 when it fits or is unknown. */
int app_check_memory(const char *prog, uint64_t need, bool force, const char *how);

/* ---- input -------------------------------------------------------------- */

/* Text handed to the engine is a C string: a NUL byte inside it would cut it
 * silently. Returns 0 when buf[0..len) holds no NUL; otherwise prints
 * "PROG: WHAT contains a NUL byte at offset N" and returns -1. */
int app_check_no_nul(const char *prog, const char *what, const char *buf, size_t len);

/* The whole stream (or file) in a malloc'd, NUL-terminated buffer; *len is
 * its length without the NUL. NULL on a read or allocation error, with errno
 * set (ENOMEM for allocation). The caller frees. */
char *app_read_stream(FILE *f, size_t *len);
char *app_read_file(const char *path, size_t *len);

/* 0 when path names something a program can read text from (a regular file,
 * a pipe or a character device); a directory or a missing file prints a
 * message and returns -1. */
int app_check_input_file(const char *prog, const char *path);

/* ---- output ------------------------------------------------------------- */

/* An output file. app_file_open("-") writes to stdout (a stream the user asked
 * for). Any other path must be a regular file or not exist yet (a symlink is
 * followed to its target, which must be a regular file): devices, FIFOs,
 * directories are refused before anything is created. The data go to a
 * temporary file in the target's directory ("<dir>/.<name>.XXXXXX", same mode
 * as the file it replaces, else 0666 & ~umask); app_file_commit() flushes,
 * fsyncs and renames it over the target. Until then SIGINT, SIGTERM and SIGHUP
 * remove the temporary file before the program dies of the signal. */
typedef struct app_file {
    FILE *f;          /* write here */
    char *target;     /* the final path (a symlink resolved), malloc'd; NULL for stdout */
    char *tmp;        /* temporary path, malloc'd; NULL for stdout */
    int slot;         /* index in the signal-cleanup table, -1 if none */
} app_file;

/* Checks that path may be written (see above) without creating anything.
 * 0, or -1 after printing why. */
int app_file_check(const char *prog, const char *path);
/* Opens f for path. 0, or -1 after printing why (nothing is left behind). */
int app_file_open(app_file *f, const char *prog, const char *path);
/* Completes f: flush, fsync, rename. 0, or -1 after printing why; either way
 * the temporary file is gone and f is closed. */
int app_file_commit(app_file *f, const char *prog);
/* Drops f: closes and removes the temporary file. Harmless on a closed f. */
void app_file_abort(app_file *f);

/* Flushes and closes stdout. Returns APP_EXIT_OK, or APP_EXIT_FAIL after
 * printing "PROG: cannot write the output: REASON" (ENOSPC on /dev/full, EPIPE,
 * EIO). Call it last, in every exit path that wrote to stdout. */
int app_finish_stdout(const char *prog);

#endif
