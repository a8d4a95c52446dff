/* Output files written beside their target and renamed when complete, and
 * the signal handler that removes unfinished ones; checked stdout. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_common.h"

/* ---- signal cleanup ---------------------------------------------------- */

/* Temporary files to remove when a signal ends the program. Slots are
 * written before the file exists and cleared after it is renamed or removed;
 * the handler only reads them and calls unlink(), which is async-signal-safe. */
#define CLEANUP_SLOTS 8
static char *volatile g_cleanup[CLEANUP_SLOTS];
static bool g_handlers_set;

static void on_fatal_signal(int sig) {
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        char *p = g_cleanup[i];
        if (p) unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void set_handlers(void) {
    if (g_handlers_set) return;
    g_handlers_set = true;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0) continue;
        /* Keep an ignored signal ignored (nohup) and a program's own handler. */
        if (old.sa_handler != SIG_DFL) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static int slot_take(char *path) {
    for (int i = 0; i < CLEANUP_SLOTS; i++)
        if (!g_cleanup[i]) {
            g_cleanup[i] = path;
            return i;
        }
    return -1;
}

static void slot_release(int slot) {
    if (slot >= 0 && slot < CLEANUP_SLOTS) g_cleanup[slot] = NULL;
}

/* ---- output files ------------------------------------------------------- */

/* The path the data will finally live at: path itself, or the target of a
 * symlink. NULL after printing why the path cannot be written. */
static char *resolve_target(const char *prog, const char *path) {
    if (!*path) {
        fprintf(stderr, "%s: the output path is empty\n", prog);
        return NULL;
    }
    struct stat ls;
    if (lstat(path, &ls) != 0) {
        if (errno == ENOENT) return strdup(path);
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return NULL;
    }
    char *target;
    if (S_ISLNK(ls.st_mode)) {
        target = realpath(path, NULL);
        if (!target) {
            fprintf(stderr, "%s: cannot write %s: it is a symbolic link to a missing file (%s)\n",
                    prog, path, strerror(errno));
            return NULL;
        }
    } else {
        target = strdup(path);
        if (!target) return NULL;
    }
    struct stat ts;
    if (stat(target, &ts) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        free(target);
        return NULL;
    }
    if (!S_ISREG(ts.st_mode)) {
        const char *what = S_ISDIR(ts.st_mode)    ? "a directory"
                           : S_ISCHR(ts.st_mode)  ? "a character device"
                           : S_ISBLK(ts.st_mode)  ? "a block device"
                           : S_ISFIFO(ts.st_mode) ? "a FIFO"
                           : S_ISSOCK(ts.st_mode) ? "a socket"
                                                  : "not a regular file";
        fprintf(stderr,
                "%s: refusing to write %s: it is %s, not a regular file "
                "(to write a stream, give '-' for stdout and redirect it)\n",
                prog, path, what);
        free(target);
        return NULL;
    }
    return target;
}

int app_file_check(const char *prog, const char *path) {
    if (!path || strcmp(path, "-") == 0) return 0;
    char *t = resolve_target(prog, path);
    free(t);
    return t ? 0 : -1;
}

int app_file_open(app_file *o, const char *prog, const char *path) {
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    o->target = resolve_target(prog, path);
    if (!o->target) return -1;
    /* "<dir>/.<base>.XXXXXX" in the target's directory, so rename() is atomic. */
    const char *slash = strrchr(o->target, '/');
    size_t dlen = slash ? (size_t)(slash - o->target) + 1 : 0;
    const char *base = o->target + dlen;
    size_t n = dlen + 1 + strlen(base) + 8 + 1;
    o->tmp = malloc(n);
    if (!o->tmp) {
        fprintf(stderr, "%s: out of memory\n", prog);
        app_file_abort(o);
        return -1;
    }
    snprintf(o->tmp, n, "%.*s.%s.XXXXXX", (int)dlen, o->target, base);
    set_handlers();
    o->slot = slot_take(o->tmp);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot create a file beside %s: %s\n", prog, o->target, strerror(errno));
        slot_release(o->slot);
        o->slot = -1;
        free(o->tmp);
        o->tmp = NULL;
        app_file_abort(o);
        return -1;
    }
    /* The mode of the file being replaced, else what open(0666) would give. */
    struct stat ts;
    mode_t mode;
    if (stat(o->target, &ts) == 0) {
        mode = ts.st_mode & 07777;
    } else {
        mode_t um = umask(0);
        umask(um);
        mode = 0666 & ~um;
    }
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, o->tmp, strerror(errno));
        close(fd);
        app_file_abort(o);
        return -1;
    }
    return 0;
}

int app_file_commit(app_file *o, const char *prog) {
    if (o->f == stdout) {
        o->f = NULL;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "%s: cannot write the output: %s\n", prog, strerror(errno ? errno : EIO));
            return -1;
        }
        return 0;
    }
    if (!o->f) return -1;
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int err = errno;
    if (!bad && fsync(fileno(o->f)) != 0) {
        bad = 1;
        err = errno;
    }
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->target) != 0) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, o->target, strerror(err ? err : EIO));
        app_file_abort(o);
        return -1;
    }
    slot_release(o->slot);
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return 0;
}

void app_file_abort(app_file *o) {
    if (o->f && o->f != stdout) fclose(o->f);
    o->f = NULL;
    if (o->tmp) unlink(o->tmp);
    slot_release(o->slot);
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
}

int app_finish_stdout(const char *prog) {
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        fprintf(stderr, "%s: cannot write the output: %s\n", prog, strerror(err ? err : EIO));
        return APP_EXIT_FAIL;
    }
    return APP_EXIT_OK;
}
