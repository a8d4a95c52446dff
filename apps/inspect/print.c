/*
 * print.c -- llm-inspect output, modelled on gguf-py's gguf-dump: numbered
 * key/value lines with type and element count, long arrays abbreviated,
 * then the tensor table (elements, shape innermost first, type, name).
 */
#include <inttypes.h>
#include <string.h>

#include "inspect.h"

static void print_str(FILE *out, const char *s, size_t len) {
    fputc('\'', out);
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (c == '\'' || c == '\\') fprintf(out, "\\%c", c);
        else if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c < 0x20 || c == 0x7f) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
    }
    fputc('\'', out);
}

static void print_value(FILE *out, const llm_gguf_value *v, const inspect_opts *o, int depth) {
    switch (v->type) {
    case LLM_GGUF_STRING: {
        const char *s;
        size_t len;
        llm_gguf_value_str(v, &s, &len);
        print_str(out, s, len > 120 && depth == 0 ? 120 : len);
        if (len > 120 && depth == 0) fprintf(out, "... (%zu bytes)", len);
        break;
    }
    case LLM_GGUF_BOOL: {
        int b = 0;
        llm_gguf_value_bool(v, &b);
        fputs(b ? "True" : "False", out);
        break;
    }
    case LLM_GGUF_FLOAT32: case LLM_GGUF_FLOAT64: {
        double d = 0;
        llm_gguf_value_f64(v, &d);
        fprintf(out, "%.9g", d);
        break;
    }
    case LLM_GGUF_UINT64: {
        uint64_t u = 0;
        llm_gguf_value_u64(v, &u);
        fprintf(out, "%" PRIu64, u);
        break;
    }
    case LLM_GGUF_ARRAY: {
        fputc('[', out);
        const uint64_t n = v->count < o->max_array ? v->count : o->max_array;
        for (uint64_t i = 0; i < n; i++) {
            llm_gguf_value e;
            if (llm_gguf_array_get(v, i, &e) != LLM_OK) break;
            if (i) fputs(", ", out);
            print_value(out, &e, o, depth + 1);
        }
        if (v->count > n) fputs(", ...", out);
        fputc(']', out);
        break;
    }
    default: {
        int64_t i = 0;
        llm_gguf_value_i64(v, &i);
        fprintf(out, "%" PRId64, i);
        break;
    }
    }
}

static void upper(char *dst, const char *src, size_t cap) {
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) dst[i] = (char)(src[i] >= 'a' && src[i] <= 'z' ? src[i] - 32 : src[i]);
    dst[i] = '\0';
}

void inspect_print_gguf(FILE *out, const llm_gguf *g, const inspect_opts *o) {
    fprintf(out, "* GGUF version %u, %" PRIu64 " bytes, alignment %u, data section at byte %" PRIu64 "\n",
            llm_gguf_version(g), llm_gguf_file_size(g), llm_gguf_alignment(g), llm_gguf_data_offset(g));
    fprintf(out, "* Dumping %" PRId64 " key/value pair(s)\n", llm_gguf_kv_count(g));
    for (int64_t i = 0; i < llm_gguf_kv_count(g); i++) {
        llm_gguf_value v;
        llm_gguf_kv_value(g, i, &v);
        char tname[32], ename[16];
        upper(tname, llm_gguf_type_name(v.type), sizeof tname);
        if (v.type == LLM_GGUF_ARRAY) {
            upper(ename, llm_gguf_type_name(v.elem_type), sizeof ename);
            snprintf(tname, sizeof tname, "[%s]", ename);
        }
        fprintf(out, "%7" PRId64 ": %-10s | %8" PRIu64 " | %s = ", i + 1, tname,
                v.type == LLM_GGUF_ARRAY ? v.count : (uint64_t)1, llm_gguf_kv_key(g, i));
        print_value(out, &v, o, 0);
        fputc('\n', out);
    }
    if (!o->show_tensors) return;
    fprintf(out, "* Dumping %" PRId64 " tensor(s)\n", llm_gguf_tensor_count(g));
    for (int64_t i = 0; i < llm_gguf_tensor_count(g); i++) {
        const llm_gguf_tensor *t = llm_gguf_tensor_at(g, i);
        const char *tn = llm_gguf_tensor_type_name(t->type);
        uint64_t nel = 1;
        for (int d = 0; d < 4; d++) nel *= (uint64_t)t->ne[d];
        fprintf(out, "%7" PRId64 ": %10" PRIu64 " | %6" PRId64 ", %6" PRId64 ", %6" PRId64 ", %6" PRId64 " | %-7s | %s\n",
                i + 1, nel, t->ne[0], t->ne[1], t->ne[2], t->ne[3], tn ? tn : "?", t->name);
    }
}

void inspect_print_safetensors(FILE *out, const llm_safetensors *st, const inspect_opts *o) {
    fprintf(out, "* SafeTensors: %" PRId64 " metadata entr%s\n", llm_safetensors_meta_count(st),
            llm_safetensors_meta_count(st) == 1 ? "y" : "ies");
    for (int64_t i = 0; i < llm_safetensors_meta_count(st); i++) {
        const char *val = llm_safetensors_meta_value(st, i);
        fprintf(out, "%7" PRId64 ": %s = ", i + 1, llm_safetensors_meta_key(st, i));
        print_str(out, val, strlen(val));
        fputc('\n', out);
    }
    if (!o->show_tensors) return;
    fprintf(out, "* Dumping %" PRId64 " tensor(s) (shape outermost first, as stored)\n", llm_safetensors_tensor_count(st));
    for (int64_t i = 0; i < llm_safetensors_tensor_count(st); i++) {
        const llm_st_tensor *t = llm_safetensors_tensor_at(st, i);
        fprintf(out, "%7" PRId64 ": %-7s [", i + 1, t->dtype);
        for (uint32_t d = 0; d < t->n_dims; d++) fprintf(out, "%s%" PRId64, d ? ", " : "", t->shape[d]);
        fprintf(out, "] @ %" PRIu64 " (%" PRIu64 " bytes) %s\n", t->offset, t->size, t->name);
    }
}

void inspect_print_desc(FILE *out, const llm_model_desc *d, const inspect_opts *o) {
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    static const char *const scaling[] = {"none", "linear", "yarn", "llama3"};
    fprintf(out, "* Model: architecture %s, from %s (%u file%s)\n", llm_model_desc_arch(d),
            llm_model_desc_source(d) == LLM_MODEL_SOURCE_GGUF ? "GGUF" : "SafeTensors",
            llm_model_desc_file_count(d), llm_model_desc_file_count(d) == 1 ? "" : "s");
    fprintf(out, "  n_vocab %u, n_embd %u, n_layer %u, n_head %u, n_head_kv %u, head_dim %u, n_ff %u, n_ctx_train %u\n",
            hp->n_vocab, hp->n_embd, hp->n_layer, hp->n_head, hp->n_head_kv, hp->head_dim, hp->n_ff, hp->n_ctx_train);
    fprintf(out, "  rope %s, n_rot %u, freq_base %g, scaling %s (factor %g), norm_eps %g, tied embeddings %s\n",
            hp->rope_type == LLM_ROPE_MODE_NEOX ? "neox" : "normal", hp->n_rot, (double)hp->rope_freq_base,
            scaling[hp->rope_scaling & 3], (double)hp->rope_scaling_factor, (double)hp->norm_eps,
            hp->tied_embeddings ? "yes" : "no");
    if (hp->rope_orig_ctx || hp->rope_attn_factor != 1.0f || hp->n_swa)
        fprintf(out, "  rope original context %u, rope attn_factor %g, sliding window %u (pattern %u)\n",
                hp->rope_orig_ctx, (double)hp->rope_attn_factor, hp->n_swa, hp->swa_pattern);
    fprintf(out, "  bos %d, eos %d, pad %d, unk %d\n", hp->bos_id, hp->eos_id, hp->pad_id, hp->unk_id);
    if (!o->show_tensors || llm_model_desc_source(d) == LLM_MODEL_SOURCE_GGUF) return; /* GGUF table printed above */
    fprintf(out, "* Dumping %" PRId64 " mapped tensor(s)\n", llm_model_desc_tensor_count(d));
    for (int64_t i = 0; i < llm_model_desc_tensor_count(d); i++) {
        const llm_model_tensor *t = llm_model_desc_tensor_at(d, i);
        fprintf(out, "%7" PRId64 ": %6" PRId64 ", %6" PRId64 ", %6" PRId64 ", %6" PRId64 " | %-7s | file %u | %s\n", i + 1,
                t->ne[0], t->ne[1], t->ne[2], t->ne[3], llm_dtype_name(t->type), t->file_index, t->name);
    }
}
