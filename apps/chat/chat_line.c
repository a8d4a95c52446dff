/* Line input: libedit (editing, history) on a terminal, fgets otherwise.
 * Ctrl-C during a read must end the read (so the caller can count it) rather
 * than be swallowed, so the read function returns EOF when a SIGINT arrived. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <editline/readline.h>

#include "app_common.h"
#include "chat.h"

static bool use_edit;
static char history_path[4096]; /* "" = no history file */

/* ${XDG_STATE_HOME:-$HOME/.local/state}/llm/chat_history, if its folder exists
 * or can be made. History is a convenience: any failure just disables it. */
static void find_history_path(void) {
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    char dir[3800];
    if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/llm", xdg);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.local/state/llm", home);
    else return;
    /* mkdir -p of the last two levels */
    char parent[3800];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = '\0';
        mkdir(parent, 0700);
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return;
    snprintf(history_path, sizeof history_path, "%s/chat_history", dir);
}
static int seen_sigint; /* g_sigint_count when the read started */

/* libedit calls this for every input byte. Returning EOF on an interrupted
 * read makes readline() give up on the line. */
static int getc_interruptible(FILE *f) {
    unsigned char c;
    for (;;) {
        ssize_t r = read(fileno(f), &c, 1);
        if (r == 1) return c;
        if (r < 0 && errno == EINTR) {
            if (g_sigint_count != seen_sigint) return EOF;
            continue;
        }
        return EOF;
    }
}

void line_init(bool tty) {
    use_edit = tty;
    if (use_edit) {
        rl_catch_signals = 0; /* our SIGINT handler decides */
        rl_getc_function = getc_interruptible;
        stifle_history(500);
        find_history_path();
        if (*history_path) read_history(history_path);
    }
}

void line_shutdown(void) {
    if (use_edit && *history_path) write_history(history_path);
    if (use_edit) clear_history();
}

char *line_read(const char *prompt, bool *interrupted) {
    *interrupted = false;
    seen_sigint = g_sigint_count;
    if (use_edit) {
        char *l = readline(prompt);
        if (g_sigint_count != seen_sigint) {
            free(l);
            *interrupted = true;
            return NULL;
        }
        return l;
    }
    /* Plain input: read a whole line of any length. */
    size_t cap = 256, n = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    int c;
    while ((c = fgetc(stdin)) != EOF && c != '\n') {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        buf[n++] = (char)c;
    }
    if (g_sigint_count != seen_sigint) {
        free(buf);
        *interrupted = true;
        clearerr(stdin);
        return NULL;
    }
    if (c == EOF && n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (app_check_no_nul("llm-chat", "the input line", buf, n)) {
        buf[0] = '\0'; /* refused with a message; the caller skips an empty line */
    }
    return buf;
}

void line_add_history(const char *line) {
    if (use_edit && line && *line) add_history(line);
}
