/* llm-embed input records and output files.
 *
 * Output files go through app_file (apps/common): written beside the target
 * and renamed over it only when complete, so an interrupted run never leaves
 * a half-written file under the final name, and a device, FIFO or directory
 * is refused before anything is created. The .npy writer follows the NumPy format version 1.0: magic,
 * version, little-endian header length, a Python-dict header padded with
 * spaces to a multiple of 64 bytes, then raw little-endian float32 rows. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "app_common.h"
#include "embed.h"

/* Fixed header size so the row count can be patched in place at the end. */
#define NPY_HEADER_BYTES 128

/* One line with its newline, malloc'd; NULL at the end of the input or on a
 * read error (ferror(f) tells which). */
static char *read_line(FILE *f, size_t *len_out) {
    size_t cap = 256, n = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (n + 2 > cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return NULL;
            }
            b = nb;
            cap *= 2;
        }
        b[n++] = (char)c;
        if (c == '\n') break;
    }
    if (n == 0) {
        free(b);
        return NULL;
    }
    b[n] = '\0';
    *len_out = n;
    return b;
}

static bool is_blank(const char *s) {
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return false;
    return true;
}

void embed_rec_free(embed_rec *r) {
    free(r->id_json);
    free(r->text);
    r->id_json = r->text = NULL;
}

int embed_input_next(embed_input *in, embed_rec *r) {
    memset(r, 0, sizeof *r);
    for (;;) {
        size_t len;
        char *l = read_line(in->f, &len);
        if (!l) {
            if (ferror(in->f)) {
                fprintf(stderr, "llm-embed: cannot read %s: %s\n", in->name, strerror(errno));
                return -1;
            }
            return 0;
        }
        in->line++;
        in->bytes_read += len;
        char where[512];
        snprintf(where, sizeof where, "%.400s line %ld", in->name, in->line);
        if (app_check_no_nul("llm-embed", where, l, len)) {
            free(l);
            return -1;
        }
        while (len && (l[len - 1] == '\n' || l[len - 1] == '\r')) l[--len] = '\0';
        if (!in->jsonl) {
            int64_t idx = in->next_index++;
            if (is_blank(l)) {
                free(l);
                continue; /* the index still advances: ids are input line numbers */
            }
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)idx);
            r->id_json = strdup(id);
            r->text = l;
            r->line = in->line;
            if (!r->id_json) {
                embed_rec_free(r);
                return -1;
            }
            return 1;
        }
        if (is_blank(l)) {
            free(l);
            continue;
        }
        json_error_t err;
        json_t *j = json_loads(l, 0, &err);
        free(l);
        if (!j || !json_is_object(j)) {
            fprintf(stderr, "llm-embed: %s:%ld: not a JSON object%s%s\n", in->name, in->line,
                    j ? "" : ": ", j ? "" : err.text);
            json_decref(j);
            return -1;
        }
        json_t *id = json_object_get(j, "id");
        json_t *text = json_object_get(j, "text");
        if (!id || !(json_is_string(id) || json_is_integer(id))) {
            fprintf(stderr, "llm-embed: %s:%ld: record needs an \"id\" (string or integer)\n",
                    in->name, in->line);
            json_decref(j);
            return -1;
        }
        if (!text || !json_is_string(text)) {
            fprintf(stderr, "llm-embed: %s:%ld: record needs a \"text\" string\n", in->name, in->line);
            json_decref(j);
            return -1;
        }
        r->id_json = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
        r->text = strdup(json_string_value(text));
        r->line = in->line;
        json_decref(j);
        if (!r->id_json || !r->text) {
            embed_rec_free(r);
            fprintf(stderr, "llm-embed: out of memory\n");
            return -1;
        }
        if (is_blank(r->text)) {
            fprintf(stderr, "llm-embed: %s:%ld: empty \"text\"\n", in->name, in->line);
            embed_rec_free(r);
            return -1;
        }
        return 1;
    }
}

/* ---- output ------------------------------------------------------------- */

char *embed_ids_path(const char *npy_path) {
    size_t n = strlen(npy_path);
    if (n >= 4 && strcmp(npy_path + n - 4, ".npy") == 0) n -= 4;
    char *p = malloc(n + 9);
    if (!p) return NULL;
    memcpy(p, npy_path, n);
    memcpy(p + n, ".ids.txt", 9);
    return p;
}

static int write_npy_header(FILE *f, uint64_t rows, size_t cols) {
    char hdr[NPY_HEADER_BYTES];
    memset(hdr, ' ', sizeof hdr);
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    uint16_t hl = NPY_HEADER_BYTES - 10;
    hdr[8] = (char)(hl & 0xff);
    hdr[9] = (char)(hl >> 8);
    char dict[NPY_HEADER_BYTES];
    int k = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%llu, %zu), }",
                     (unsigned long long)rows, cols);
    if (k < 0 || k > NPY_HEADER_BYTES - 11) return -1;
    memcpy(hdr + 10, dict, (size_t)k);
    hdr[NPY_HEADER_BYTES - 1] = '\n';
    if (fseek(f, 0, SEEK_SET) != 0) return -1;
    return fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr ? 0 : -1;
}

int embed_output_open(embed_output *o, out_kind kind, const char *path, size_t dim) {
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->dim = dim;
    o->out.slot = o->ids.slot = -1;
    char *ids_path = NULL;
    if (kind == OUT_NPY) {
        ids_path = embed_ids_path(path);
        if (!ids_path) {
            fprintf(stderr, "llm-embed: out of memory\n");
            return -1;
        }
        /* Both targets are checked before either file is created. */
        if (app_file_check("llm-embed", path) || app_file_check("llm-embed", ids_path)) {
            free(ids_path);
            return -1;
        }
    }
    int bad = app_file_open(&o->out, "llm-embed", path);
    if (!bad && kind == OUT_NPY) {
        bad = app_file_open(&o->ids, "llm-embed", ids_path) || write_npy_header(o->out.f, 0, dim);
        if (bad) embed_output_abort(o);
    }
    free(ids_path);
    if (bad) return -1;
    o->f = o->out.f;
    return 0;
}

int embed_output_write(embed_output *o, const char *id_json, const float *v) {
    for (size_t i = 0; i < o->dim; i++) {
        if (v[i] != v[i] || v[i] > 3.4e38f || v[i] < -3.4e38f) {
            fprintf(stderr, "llm-embed: the model produced a non-finite value for id %s\n", id_json);
            return -1;
        }
    }
    if (o->kind == OUT_JSONL) {
        fprintf(o->f, "{\"id\":%s,\"embedding\":[", id_json);
        for (size_t i = 0; i < o->dim; i++) fprintf(o->f, i ? ",%.8g" : "%.8g", (double)v[i]);
        fputs("]}\n", o->f);
    } else {
        /* float32 little-endian: this machine's order (x86-64, aarch64 LE). */
        if (fwrite(v, sizeof *v, o->dim, o->f) != o->dim) return -1;
        /* ids.txt: a string id without its JSON quotes, one per line. */
        json_error_t err;
        json_t *j = json_loads(id_json, JSON_DECODE_ANY, &err);
        if (j && json_is_string(j)) {
            const char *s = json_string_value(j);
            for (; *s; s++) fputc(*s == '\n' || *s == '\r' ? ' ' : *s, o->ids.f);
            fputc('\n', o->ids.f);
        } else {
            fprintf(o->ids.f, "%s\n", id_json);
        }
        json_decref(j);
    }
    if (ferror(o->f) || (o->ids.f && ferror(o->ids.f))) {
        /* errno may be stale after the calls since the failed write: flushing
         * again repeats the failure and gives its reason. */
        FILE *bad = ferror(o->f) ? o->f : o->ids.f;
        errno = 0;
        int e = fflush(bad) != 0 ? errno : 0;
        fprintf(stderr, "llm-embed: cannot write %s: %s\n", o->out.target ? o->out.target : "the output",
                strerror(e ? e : EIO));
        return -1;
    }
    o->rows++;
    return 0;
}

int embed_output_commit(embed_output *o) {
    if (o->kind == OUT_NPY && write_npy_header(o->f, o->rows, o->dim)) {
        fprintf(stderr, "llm-embed: cannot write the .npy header: %s\n", strerror(errno));
        embed_output_abort(o);
        return -1;
    }
    if (o->kind == OUT_NPY && app_file_commit(&o->ids, "llm-embed")) {
        embed_output_abort(o);
        return -1;
    }
    o->f = NULL;
    return app_file_commit(&o->out, "llm-embed");
}

void embed_output_abort(embed_output *o) {
    app_file_abort(&o->out);
    app_file_abort(&o->ids);
    o->f = NULL;
}

/* ---- .npy reader -------------------------------------------------------- */

int embed_npy_load(const char *path, float **data, size_t *rows, size_t *cols) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "llm-embed: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    unsigned char pre[10];
    char hdr[4096];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
        fprintf(stderr, "llm-embed: %s is not a version-1 .npy file\n", path);
        fclose(f);
        return -1;
    }
    size_t hl = (size_t)pre[8] | ((size_t)pre[9] << 8);
    if (hl >= sizeof hdr || fread(hdr, 1, hl, f) != hl) {
        fprintf(stderr, "llm-embed: %s: bad .npy header\n", path);
        fclose(f);
        return -1;
    }
    hdr[hl] = '\0';
    const char *shape = strstr(hdr, "'shape': (");
    unsigned long long r = 0, c = 0;
    if (!strstr(hdr, "'descr': '<f4'") || !strstr(hdr, "'fortran_order': False") || !shape ||
        sscanf(shape, "'shape': (%llu, %llu)", &r, &c) != 2 || c == 0 || c > (1u << 20)) {
        fprintf(stderr, "llm-embed: %s: expected a 2-D little-endian float32 C-order array\n", path);
        fclose(f);
        return -1;
    }
    float *d = malloc((size_t)(r ? r : 1) * (size_t)c * sizeof *d);
    if (!d || fread(d, sizeof *d, (size_t)(r * c), f) != (size_t)(r * c)) {
        fprintf(stderr, "llm-embed: %s: truncated data (%llu x %llu expected)\n", path, r, c);
        free(d);
        fclose(f);
        return -1;
    }
    fclose(f);
    *data = d;
    *rows = (size_t)r;
    *cols = (size_t)c;
    return 0;
}
