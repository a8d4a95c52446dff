/* llm-template [-m MODEL | --template FILE.jinja] [REQUEST.json | -]
 *
 * Renders an OpenAI-style chat request (a JSON object: messages, tools,
 * add_generation_prompt (default true), bos_token/eos_token overriding the
 * model's, any other key passed to the template as a variable) with the
 * model's chat template or a template file, as transformers'
 * apply_chat_template does with jinja2, and prints exactly the rendered
 * text, nothing added. The request is read from REQUEST.json, or stdin when
 * it is "-" or absent. A template error exits 1 with the message (and the
 * template line where known) on stderr; bad usage exits 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"
#include "llama/engine.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: llm-template [-m MODEL | --template FILE.jinja] [REQUEST.json | -]\n"
            "  -m, --model MODEL      use the chat template of this model (GGUF or HF folder)\n"
            "  -t, --template FILE    use this Jinja template file instead\n"
            "  REQUEST.json           an OpenAI-style chat request; '-' or nothing: stdin\n"
            "  -h, --help             this help\n"
            "Prints exactly the rendered text. Exit 1 on a template or request error.\n");
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *tmpl_path = NULL, *req_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && i + 1 < argc) {
            model_path = argv[++i];
        } else if ((!strcmp(a, "-t") || !strcmp(a, "--template")) && i + 1 < argc) {
            tmpl_path = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "llm-template: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!req_path) {
            req_path = a;
        } else {
            fprintf(stderr, "llm-template: more than one request file\n");
            return 2;
        }
    }
    if (!!model_path == !!tmpl_path) {
        fprintf(stderr, "llm-template: give exactly one of -m MODEL and --template FILE\n");
        usage(stderr);
        return 2;
    }

    int rc = 1;
    char *tmpl = NULL, *req = NULL, *out = NULL;
    llm_model *model = NULL;
    size_t req_len = 0;
    if (tmpl_path && !(tmpl = app_read_file(tmpl_path, NULL))) {
        fprintf(stderr, "llm-template: cannot read template %s\n", tmpl_path);
        goto done;
    }
    req = (!req_path || !strcmp(req_path, "-")) ? app_read_stream(stdin, &req_len) : app_read_file(req_path, &req_len);
    if (!req) {
        fprintf(stderr, "llm-template: cannot read the request %s\n", req_path ? req_path : "(stdin)");
        goto done;
    }
    if (strlen(req) != req_len) {
        fprintf(stderr, "llm-template: the request contains a NUL byte\n");
        goto done;
    }
    if (model_path) {
        llm_model_params mp = llm_model_default_params();
        llm_status st = llm_load_model(model_path, &mp, &model);
        if (st != LLM_OK) {
            fprintf(stderr, "llm-template: cannot load %s: %s\n", model_path, llm_last_error());
            goto done;
        }
    }
    char err[1024];
    size_t out_len = 0;
    llm_status st = llm_chat_apply_json(model, tmpl, req, &out, &out_len, err, sizeof err);
    if (st != LLM_OK) {
        fprintf(stderr, "llm-template: %s: %s\n", llm_status_str(st), err);
        goto done;
    }
    if (fwrite(out, 1, out_len, stdout) != out_len || fflush(stdout) != 0) {
        fprintf(stderr, "llm-template: write error\n");
        goto done;
    }
    rc = 0;
done:
    free(out);
    free(req);
    free(tmpl);
    llm_model_free(model);
    return rc;
}
