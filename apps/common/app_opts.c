/* Validated options and input checks shared by the programs. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_common.h"

int app_need_value(const char *prog, const char *opt, const char *v) {
    if (v) return 0;
    fprintf(stderr, "%s: option %s needs a value\n", prog, opt);
    return -1;
}

int app_parse_i32(const char *prog, const char *opt, const char *s, int32_t lo, int32_t hi,
                  int32_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s expects an integer in [%d, %d], got '%s'\n", prog, opt, (int)lo,
                (int)hi, s);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

static int parse_f32(const char *prog, const char *opt, const char *s, float lo, float hi,
                     bool lo_open, float *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || (lo_open ? v <= lo : v < lo) || v > hi) {
        fprintf(stderr, "%s: %s expects a number in %c%g, %g], got '%s'\n", prog, opt,
                lo_open ? '(' : '[', (double)lo, (double)hi, s);
        return -1;
    }
    *out = (float)v;
    return 0;
}

int app_parse_f32(const char *prog, const char *opt, const char *s, float lo, float hi, float *out) {
    return parse_f32(prog, opt, s, lo, hi, false, out);
}

int app_parse_f32_above(const char *prog, const char *opt, const char *s, float lo, float hi,
                        float *out) {
    return parse_f32(prog, opt, s, lo, hi, true, out);
}

int app_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int app_parse_threads(const char *prog, const char *opt, const char *s, int32_t *out) {
    int32_t v;
    if (app_parse_i32(prog, opt, s, 0, 1 << 20, &v)) return -1;
    int cores = app_cpu_count();
    if (v > cores) {
        fprintf(stderr,
                "%s: %s %d is more threads than the %d CPU%s this process may use: more would only "
                "slow it down (give at most %d, or 0 for all)\n",
                prog, opt, (int)v, cores, cores == 1 ? "" : "s", cores);
        return -1;
    }
    *out = v;
    return 0;
}

void app_default_model(char *buf, size_t cap) {
    const char *m = getenv("LLM_MODEL"), *dir = getenv("LLM_MODELS_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (m && *m) snprintf(buf, cap, "%s", m);
    else if (dir && *dir) snprintf(buf, cap, "%s/%s", dir, APP_DEFAULT_MODEL_FILE);
    else if (xdg && *xdg) snprintf(buf, cap, "%s/llm/models/%s", xdg, APP_DEFAULT_MODEL_FILE);
    else snprintf(buf, cap, "%s/.cache/llm/models/%s", home ? home : ".", APP_DEFAULT_MODEL_FILE);
}

int app_check_no_nul(const char *prog, const char *what, const char *buf, size_t len) {
    const char *z = len ? memchr(buf, '\0', len) : NULL;
    if (!z) return 0;
    fprintf(stderr,
            "%s: %s contains a NUL byte at offset %zu: text may not contain NUL bytes, "
            "refusing it rather than cutting it there\n",
            prog, what, (size_t)(z - buf));
    return -1;
}

int app_check_input_file(const char *prog, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s is a directory, not a text file\n", prog, path);
        return -1;
    }
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    return 0;
}

static uint64_t read_u64_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    int ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    return ok ? (uint64_t)v : 0;
}

uint64_t app_available_memory(void) {
    uint64_t avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kib;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
                avail = (uint64_t)kib * 1024u;
                break;
            }
        fclose(f);
    }
    if (!avail) {
        long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psz > 0) avail = (uint64_t)pages * (uint64_t)psz;
    }
    /* cgroup v2: "max" reads as 0 here (no limit). */
    uint64_t max = read_u64_file("/sys/fs/cgroup/memory.max");
    uint64_t cur = read_u64_file("/sys/fs/cgroup/memory.current");
    if (max) {
        uint64_t left = max > cur ? max - cur : 0;
        if (!avail || left < avail) avail = left;
    }
    return avail;
}

int app_check_memory(const char *prog, uint64_t need, bool force, const char *how) {
    uint64_t avail = app_available_memory();
    if (!avail || need <= avail) return 0;
    fprintf(stderr,
            "%s: %s the plan needs %.0f MiB but only %.0f MiB of memory are available (lower %s%s)\n",
            prog, force ? "warning (--force):" : "refusing to load:", (double)need / 1048576.0,
            (double)avail / 1048576.0, how, force ? "" : ", or --force to try anyway");
    return force ? 0 : -1;
}

char *app_read_stream(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(buf);
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

char *app_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = app_read_stream(f, len);
    int e = errno;
    fclose(f);
    errno = e;
    return buf;
}
