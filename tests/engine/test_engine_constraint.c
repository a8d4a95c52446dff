/* Constrained generation (llm_session_set_constraint, llm_sched_request's
 * constraint) on the default model:
 * - greedy output under a grammar and under a JSON schema is text a fresh
 *   matcher of the same grammar accepts (complete when the answer ended);
 * - a second session on the same prompt (prefix cache, cached grammar)
 *   gives the same answer;
 * - a fork continues the structure exactly as the original does;
 * - truncate inside the answer rolls the grammar back, truncate to the
 *   answer's start restarts it: regenerating gives the same answer;
 * - bad grammars and unsupported schemas fail with the grammar library's
 *   message, and leave the previous constraint in place;
 * - scheduler: concurrent requests with different constraints each follow
 *   their own, and an unconstrained request beside them samples the same
 *   tokens as alone. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"
#include "llama/engine_sched.h"
#include "llama/grammar.h"
#include "llama/json_schema.h"

static llm_model *M;

static void load(void) {
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || !*p || access(p, R_OK) != 0)
        cr_skip_test("default model not found (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    mp.n_ctx = 512;
    mp.kv_tokens = 4096;
    cr_assert_eq(llm_load_model(p, &mp, &M), LLM_OK, "load: %s", llm_last_error());
}

static void unload(void) {
    llm_model_free(M);
    M = NULL;
}

static const char *YESNO = "root ::= \"yes\" | \"no\"\n";
static const char *PERSON = "{\"type\": \"object\", \"properties\": {"
                            "\"name\": {\"type\": \"string\", \"maxLength\": 12},"
                            "\"age\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 150},"
                            "\"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"a\", \"b\"]}, \"maxItems\": 2}},"
                            "\"required\": [\"name\", \"age\"]}";
static const char *COLOR = "{\"type\": \"object\", \"properties\": {"
                           "\"color\": {\"enum\": [\"red\", \"green\", \"blue\"]}}, \"required\": [\"color\"]}";

/* The chat prompt for one user message. */
static int32_t prompt(const char *user, llm_token *toks, int32_t cap) {
    llm_chat_message msg = {"user", user};
    char text[2048];
    int32_t n = 0;
    cr_assert_eq(llm_chat_apply(M, &msg, 1, true, text, sizeof text, &n), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(llm_tokenize(M, text, (size_t)n, LLM_ENCODE_PARSE_SPECIAL, toks, cap, &n), LLM_OK);
    return n;
}

/* 1 when a fresh matcher of `gbnf` accepts text[0..len) (and can end
 * there, when `complete`). */
static int accepts(const char *gbnf, const char *text, size_t len, int complete) {
    llm_grammar *g = NULL;
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_parse(gbnf, strlen(gbnf), NULL, &g), LLM_OK, "%s", llm_grammar_last_error());
    cr_assert_eq(llm_grammar_matcher_create(g, NULL, NULL, &m), LLM_OK);
    int ok = llm_grammar_matcher_accept_bytes(m, text, len) == LLM_OK && (!complete || llm_grammar_matcher_can_end(m));
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    return ok;
}

static char *schema_gbnf(const char *schema) {
    char *gbnf = NULL;
    cr_assert_eq(llm_json_schema_to_gbnf_alloc(schema, strlen(schema), NULL, &gbnf, NULL), LLM_OK, "%s",
                 llm_grammar_last_error());
    return gbnf;
}

/* What a decode produced. */
typedef struct out {
    char text[4096];
    size_t n_text;
    llm_token toks[512];
    int32_t n_toks;
} out;

static bool collect(const char *text, size_t len, llm_token tok, void *user) {
    out *o = user;
    if (o->n_text + len < sizeof o->text) {
        memcpy(o->text + o->n_text, text, len);
        o->n_text += len;
        o->text[o->n_text] = '\0';
    }
    if (o->n_toks < 512 && !llm_token_is_eog(M, tok)) o->toks[o->n_toks++] = tok;
    return true;
}

static llm_session *greedy_session(void) {
    llm_session_params sp = llm_session_default_params();
    sp.sampling.temperature = 0;
    llm_session *s = NULL;
    cr_assert_eq(llm_session_new(M, &sp, &s), LLM_OK, "%s", llm_last_error());
    return s;
}

TestSuite(constraint, .init = load, .fini = unload, .timeout = 240);

Test(constraint, yes_no_grammar) {
    llm_session *s = greedy_session();
    llm_constraint c = {0};
    c.grammar = YESNO;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_OK, "%s", llm_session_last_error(s));
    llm_token toks[512];
    int32_t n = prompt("Is the sky green? Answer in one word.", toks, 512);
    for (int turn = 0; turn < 2; turn++) { /* the constraint applies to every answer */
        cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
        out o = {0};
        cr_assert_eq(llm_decode(s, 16, collect, &o), LLM_END_OF_STREAM, "%s", llm_session_last_error(s));
        cr_assert(!strcmp(o.text, "yes") || !strcmp(o.text, "no"), "answer '%s'", o.text);
        cr_assert(accepts(YESNO, o.text, o.n_text, 1));
    }
    /* Cleared: the same prompt may now say anything. */
    cr_assert_eq(llm_session_set_constraint(s, NULL), LLM_OK);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
    out o = {0};
    llm_status st = llm_decode(s, 24, collect, &o);
    cr_assert(st == LLM_OK || st == LLM_END_OF_STREAM);
    llm_session_free(s);
}

/* Greedy answer of `schema` to `question` from a fresh session. */
static llm_session *json_answer(const char *schema, const char *question, int32_t max, out *o, int32_t *p_len,
                                llm_status *end) {
    llm_session *s = greedy_session();
    llm_constraint c = {0};
    c.json_schema = schema;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_OK, "%s", llm_session_last_error(s));
    llm_token toks[512];
    int32_t n = prompt(question, toks, 512);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
    *p_len = n;
    *end = llm_decode(s, max, collect, o);
    cr_assert(*end == LLM_OK || *end == LLM_END_OF_STREAM, "%s", llm_session_last_error(s));
    return s;
}

Test(constraint, json_schema_output_accepted) {
    char *gbnf = schema_gbnf(PERSON);
    out o = {0};
    int32_t p;
    llm_status end;
    llm_session *s = json_answer(PERSON, "Describe a person as JSON.", 128, &o, &p, &end);
    cr_log_info("json: %s (%s)", o.text, end == LLM_END_OF_STREAM ? "complete" : "length");
    cr_assert(o.n_text > 0 && o.text[0] == '{', "'%s'", o.text);
    cr_assert(accepts(gbnf, o.text, o.n_text, end == LLM_END_OF_STREAM), "grammar refuses '%s'", o.text);
    /* A second session takes the prompt's full blocks from the prefix cache
     * and the compiled grammar from the model's cache: the same answer. */
    out o2 = {0};
    llm_status end2;
    llm_session *s2 = json_answer(PERSON, "Describe a person as JSON.", 128, &o2, &p, &end2);
    llm_telemetry t;
    cr_assert_eq(llm_session_telemetry(s2, &t), LLM_OK);
    cr_assert_gt(t.reused_tokens, 0);
    cr_assert_eq(end2, end);
    cr_assert_str_eq(o2.text, o.text);
    llm_session_free(s2);
    llm_session_free(s);
    llm_json_schema_free(gbnf);
}

Test(constraint, fork_continues_the_structure) {
    llm_session *s = greedy_session();
    llm_constraint c = {0};
    c.json_schema = COLOR;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_OK, "%s", llm_session_last_error(s));
    llm_token toks[512];
    int32_t n = prompt("What colour is grass? Reply in JSON.", toks, 512);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
    out head = {0}, a = {0}, b = {0};
    cr_assert_eq(llm_decode(s, 3, collect, &head), LLM_OK);
    llm_session *f = NULL;
    cr_assert_eq(llm_session_fork(s, &f), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(llm_decode(s, 64, collect, &a), LLM_END_OF_STREAM, "%s", llm_session_last_error(s));
    cr_assert_eq(llm_decode(f, 64, collect, &b), LLM_END_OF_STREAM, "%s", llm_session_last_error(f));
    cr_assert_str_eq(a.text, b.text);
    char full[8192];
    snprintf(full, sizeof full, "%s%s", head.text, b.text);
    char *gbnf = schema_gbnf(COLOR);
    cr_assert(accepts(gbnf, full, strlen(full), 1), "grammar refuses '%s'", full);
    llm_json_schema_free(gbnf);
    llm_session_free(f);
    llm_session_free(s);
}

Test(constraint, truncate_rolls_back_and_restarts) {
    out a = {0};
    int32_t p;
    llm_status end;
    llm_session *s = json_answer(COLOR, "What colour is the sea? Reply in JSON.", 64, &a, &p, &end);
    cr_assert_eq(end, LLM_END_OF_STREAM);
    cr_assert_gt(a.n_toks, 3);
    /* Inside the answer: the grammar rolls back to token 2. */
    cr_assert_eq(llm_session_truncate(s, p + 2), LLM_OK);
    cr_assert_eq(llm_prefill(s, NULL, 0), LLM_OK); /* logits of token p + 1; the answer continues */
    out b = {0};
    cr_assert_eq(llm_decode(s, 64, collect, &b), LLM_END_OF_STREAM, "%s", llm_session_last_error(s));
    cr_assert_eq(b.n_toks, a.n_toks - 2);
    cr_assert_arr_eq(b.toks, a.toks + 2, (size_t)b.n_toks * sizeof(llm_token));
    /* To the answer's start: the grammar restarts. */
    cr_assert_eq(llm_session_truncate(s, p), LLM_OK);
    cr_assert_eq(llm_prefill(s, NULL, 0), LLM_OK);
    out d = {0};
    cr_assert_eq(llm_decode(s, 64, collect, &d), LLM_END_OF_STREAM, "%s", llm_session_last_error(s));
    cr_assert_str_eq(d.text, a.text);
    cr_assert_eq(d.n_toks, a.n_toks);
    cr_assert_arr_eq(d.toks, a.toks, (size_t)d.n_toks * sizeof(llm_token));
    llm_session_free(s);
}

Test(constraint, errors_name_the_problem) {
    llm_session *s = greedy_session();
    llm_constraint c = {0};
    c.grammar = YESNO;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_OK);
    c.grammar = "root ::= \"a\" | (\n";
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_ERR_BAD_FORMAT);
    cr_assert(strstr(llm_session_last_error(s), "grammar: line "), "%s", llm_session_last_error(s));
    c.grammar = "root ::= item\n";
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_ERR_BAD_FORMAT);
    cr_assert(strstr(llm_session_last_error(s), "item"), "%s", llm_session_last_error(s));
    c.grammar = NULL;
    c.json_schema = "{\"type\": \"array\", \"uniqueItems\": true}";
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_ERR_UNSUPPORTED);
    cr_assert(strstr(llm_session_last_error(s), "uniqueItems"), "%s", llm_session_last_error(s));
    c.json_schema = "{\"type\": ";
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_ERR_BAD_FORMAT);
    c.grammar = YESNO;
    c.json_schema = COLOR;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_ERR_INVALID_ARG);
    c.json_schema = NULL;
    c.lazy = true;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_ERR_INVALID_ARG);
    /* The yes/no grammar survived the failures. */
    llm_token toks[512];
    int32_t n = prompt("Is water wet?", toks, 512);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
    out o = {0};
    cr_assert_eq(llm_decode(s, 16, collect, &o), LLM_END_OF_STREAM);
    cr_assert(!strcmp(o.text, "yes") || !strcmp(o.text, "no"), "answer '%s'", o.text);
    llm_session_free(s);
}

Test(constraint, lazy_trigger_word) {
    llm_session *s = greedy_session();
    const char *words[] = {"{"};
    llm_constraint c = {0};
    c.grammar = "root ::= \"{\\\"ok\\\": true}\"\n";
    c.lazy = true;
    c.trigger_words = words;
    c.n_trigger_words = 1;
    cr_assert_eq(llm_session_set_constraint(s, &c), LLM_OK, "%s", llm_session_last_error(s));
    llm_token toks[512];
    int32_t n = prompt("Write the JSON object {\"ok\": true} and nothing else.", toks, 512);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
    out o = {0};
    llm_status st = llm_decode(s, 48, collect, &o);
    cr_assert(st == LLM_OK || st == LLM_END_OF_STREAM);
    const char *brace = strchr(o.text, '{');
    if (brace && st == LLM_END_OF_STREAM) cr_assert_str_eq(brace, "{\"ok\": true}", "'%s'", o.text);
    llm_session_free(s);
}

/* ---- the scheduler ------------------------------------------------------ */

typedef struct result {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    out o;
    llm_sched_event last;
} result;

static void on_event(const llm_sched_event *ev, void *user) {
    result *r = user;
    pthread_mutex_lock(&r->mu);
    if (ev->kind == LLM_SCHED_TEXT) {
        out *o = &r->o;
        if (o->n_text + ev->len < sizeof o->text) {
            memcpy(o->text + o->n_text, ev->text, ev->len);
            o->n_text += ev->len;
            o->text[o->n_text] = '\0';
        }
        if (ev->token != LLM_TOKEN_NULL && o->n_toks < 512) o->toks[o->n_toks++] = ev->token;
    } else {
        r->last = *ev;
        r->last.text = r->last.message = NULL;
        r->done = true;
        pthread_cond_signal(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
}

static void result_wait(result *r) {
    pthread_mutex_lock(&r->mu);
    while (!r->done) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

static void submit(llm_sched *sc, const char *question, const llm_constraint *c, float temp, result *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    llm_token toks[512];
    int32_t n = prompt(question, toks, 512);
    llm_sched_request q = llm_sched_default_request();
    q.prompt = toks;
    q.n_prompt = n;
    q.max_tokens = 48;
    q.sampling.temperature = temp;
    q.sampling.seed = 1234;
    q.constraint = c;
    q.callback = on_event;
    q.user = r;
    cr_assert_eq(llm_sched_submit(sc, &q, NULL), LLM_OK, "%s", llm_last_error());
}

Test(constraint, scheduler_mixed_requests) {
    llm_sched_params pp = llm_sched_default_params();
    pp.max_running = 4;
    llm_sched *sc = NULL;
    cr_assert_eq(llm_sched_new(M, &pp, &sc), LLM_OK, "%s", llm_last_error());
    const char *free_q = "Tell me about the moon.";
    result alone;
    submit(sc, free_q, NULL, 0.8f, &alone);
    result_wait(&alone);

    llm_constraint yn = {0}, person = {0}, color = {0};
    yn.grammar = YESNO;
    person.json_schema = PERSON;
    color.json_schema = COLOR;
    result r[4];
    submit(sc, "Is fire cold? One word.", &yn, 0.8f, &r[0]);
    submit(sc, free_q, NULL, 0.8f, &r[1]);
    submit(sc, "Describe a person as JSON.", &person, 0.8f, &r[2]);
    submit(sc, "Favourite colour? JSON.", &color, 0, &r[3]);
    for (int i = 0; i < 4; i++) result_wait(&r[i]);

    /* The unconstrained request is untouched by its constrained neighbours. */
    cr_assert_eq(r[1].o.n_toks, alone.o.n_toks);
    cr_assert_arr_eq(r[1].o.toks, alone.o.toks, (size_t)alone.o.n_toks * sizeof(llm_token));
    cr_assert_str_eq(r[1].o.text, alone.o.text);

    cr_assert_eq(r[0].last.finish, LLM_FINISH_STOP);
    cr_assert(!strcmp(r[0].o.text, "yes") || !strcmp(r[0].o.text, "no"), "'%s'", r[0].o.text);
    const char *schemas[2] = {PERSON, COLOR};
    for (int i = 2; i < 4; i++) {
        char *gbnf = schema_gbnf(schemas[i - 2]);
        cr_assert(r[i].last.finish == LLM_FINISH_STOP || r[i].last.finish == LLM_FINISH_LENGTH);
        cr_log_info("request %d: %s", i, r[i].o.text);
        cr_assert(accepts(gbnf, r[i].o.text, r[i].o.n_text, r[i].last.finish == LLM_FINISH_STOP),
                  "request %d: grammar refuses '%s'", i, r[i].o.text);
        llm_json_schema_free(gbnf);
    }
    cr_assert_eq(r[3].last.finish, LLM_FINISH_STOP, "the color answer is short");

    /* A bad constraint is refused at submit, with the grammar's message. */
    llm_constraint bad = {0};
    bad.grammar = "root ::= [a-\n";
    llm_token t[4] = {1, 2, 3, 4};
    llm_sched_request q = llm_sched_default_request();
    q.prompt = t;
    q.n_prompt = 4;
    q.constraint = &bad;
    q.callback = on_event;
    cr_assert_eq(llm_sched_submit(sc, &q, NULL), LLM_ERR_BAD_FORMAT);
    cr_assert(strstr(llm_last_error(), "grammar: line 1"), "%s", llm_last_error());
    llm_sched_free(sc);
}
