/* Line input: libedit (editing, history) on a terminal, fgets otherwise.
 * Ctrl-C during a read must end the read (so the caller can count it) rather
 * than be swallowed, so the read function returns EOF when a SIGINT arrived. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "chat.h"

static bool use_edit;
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
    }
}

void line_shutdown(void) {
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
    return buf;
}

void line_add_history(const char *line) {
    if (use_edit && line && *line) add_history(line);
}
