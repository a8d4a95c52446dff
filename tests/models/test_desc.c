/*
 * test_desc.c -- the model descriptor: the default model's hyper-parameters
 * and tensor map; synthetic GGUF and Hugging Face folders (single file and
 * sharded) including every rejection path (unsupported architecture and
 * weight types named, missing/misshapen tensors, lying shards).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "llama/arch.h"
#include "llama/models.h"
#include "st_writer.h"

Test(desc, default_model) {
    const char *model = getenv("LLM_DEFAULT_MODEL");
    cr_assert_not_null(model, "LLM_DEFAULT_MODEL is not set");
    llm_model_desc *d = NULL;
    cr_assert_eq(llm_model_desc_load(model, &d), LLM_OK, "%s", llm_models_last_error());
    cr_expect_eq(llm_model_desc_source(d), LLM_MODEL_SOURCE_GGUF);
    cr_expect_str_eq(llm_model_desc_arch(d), "llama");
    cr_expect_not_null(llm_model_desc_gguf(d));
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    /* Values as read by gguf-py (tests/models/golden/smollm2_dump.json). */
    cr_expect_eq(hp->n_vocab, 49152u);
    cr_expect_eq(hp->n_embd, 576u);
    cr_expect_eq(hp->n_layer, 30u);
    cr_expect_eq(hp->n_head, 9u);
    cr_expect_eq(hp->n_head_kv, 3u);
    cr_expect_eq(hp->head_dim, 64u);
    cr_expect_eq(hp->n_rot, 64u);
    cr_expect_eq(hp->n_ff, 1536u);
    cr_expect_eq(hp->n_ctx_train, 8192u);
    cr_expect_eq(hp->rope_type, LLM_ROPE_MODE_NORMAL);
    cr_expect_eq(hp->rope_freq_base, 100000.0f);
    cr_expect_eq(hp->rope_scaling, LLM_ROPE_SCALE_NONE);
    cr_expect_eq(hp->norm_eps, 9.999999747378752e-06f);
    cr_expect_eq(hp->tied_embeddings, 1);
    cr_expect_eq(hp->bos_id, 1);
    cr_expect_eq(hp->eos_id, 2);
    cr_expect_eq(hp->pad_id, 2);
    cr_expect_eq(hp->unk_id, 0);
    cr_expect_eq(llm_model_desc_tensor_count(d), 272);
    int n_q41 = 0, n_f32 = 0, n_q80 = 0;
    for (int64_t i = 0; i < llm_model_desc_tensor_count(d); i++) {
        const llm_model_tensor *t = llm_model_desc_tensor_at(d, i);
        n_q41 += t->type == LLM_DTYPE_Q4_1;
        n_f32 += t->type == LLM_DTYPE_F32;
        n_q80 += t->type == LLM_DTYPE_Q8_0;
        cr_expect_eq(t->file_index, 0u);
    }
    cr_expect(n_q41 == 210 && n_f32 == 61 && n_q80 == 1, "%d %d %d", n_q41, n_f32, n_q80);
    const llm_model_tensor *wq = llm_model_desc_find_tensorf(d, "blk.%d.attn_q.weight", 29);
    cr_assert_not_null(wq);
    cr_expect(wq->ne[0] == 576 && wq->ne[1] == 576 && wq->type == LLM_DTYPE_Q4_1);
    const llm_model_tensor *wk = llm_model_desc_find_tensor(d, "blk.0.attn_k.weight");
    cr_expect(wk && wk->ne[0] == 576 && wk->ne[1] == 192);
    cr_expect_null(llm_model_desc_find_tensor(d, "output.weight"));
    cr_expect_null(llm_model_desc_find_tensorf(d, "blk.%d.attn_q.weight", 30));
    cr_expect_eq(llm_model_desc_file_count(d), 1u);
    cr_expect_str_eq(llm_model_desc_file_path(d, 0), model);
    llm_model_desc_free(d);
    llm_model_desc_free(NULL);
}

/* ---- a tiny llama, as GGUF ---- */

enum { E = 32, NH = 2, NKV = 1, HD = 16, FF = 64, NV = 8 };

typedef struct tspec {
    const char *name;
    int64_t ne0, ne1; /* ne1 = 0: 1-D */
} tspec;

static const tspec k_llama[] = {
    {"token_embd.weight", E, NV},        {"output_norm.weight", E, 0},
    {"blk.0.attn_norm.weight", E, 0},    {"blk.0.attn_q.weight", E, NH * HD},
    {"blk.0.attn_k.weight", E, NKV * HD}, {"blk.0.attn_v.weight", E, NKV * HD},
    {"blk.0.attn_output.weight", NH * HD, E}, {"blk.0.ffn_norm.weight", E, 0},
    {"blk.0.ffn_gate.weight", E, FF},    {"blk.0.ffn_up.weight", E, FF},
    {"blk.0.ffn_down.weight", FF, E},
};
#define N_LLAMA (sizeof k_llama / sizeof k_llama[0])

/* Writes the tiny llama as GGUF (all F32) with tweaks: arch tag, one tensor
 * renamed/reshaped/retyped (index `which`, or -1), and an optional extra
 * F32 [E] tensor named `extra` at the end. */
static void tiny_gguf_x(gw *w, const char *arch, int which, const char *rename, int64_t ne1_override,
                        uint32_t type_override, const char *extra) {
    gw_init(w);
    size_t nt = N_LLAMA + (extra ? 1 : 0);
    gw_header(w, 3, nt, 7);
    gw_kv_str(w, "general.architecture", arch);
    gw_kv_u32(w, "llama.embedding_length", E);
    gw_kv_u32(w, "llama.block_count", 1);
    gw_kv_u32(w, "llama.attention.head_count", NH);
    gw_kv_u32(w, "llama.attention.head_count_kv", NKV);
    gw_kv_u32(w, "llama.feed_forward_length", FF);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    uint64_t off = 0;
    uint64_t sizes[N_LLAMA + 1];
    for (size_t i = 0; i < nt; i++) {
        const tspec xt = {extra, E, 0};
        const tspec *t = i < N_LLAMA ? &k_llama[i] : &xt;
        int64_t ne[2] = {t->ne0, t->ne1};
        uint32_t type = 0;
        const char *name = t->name;
        if ((int)i == which) {
            if (rename) name = rename;
            if (ne1_override) ne[1] = ne1_override;
            if (type_override) type = type_override, ne[0] = 256;
        }
        const uint32_t nd = ne[1] ? 2 : 1;
        gw_tensor(w, name, nd, ne, type, off);
        uint64_t nel = (uint64_t)ne[0] * (uint64_t)(ne[1] ? ne[1] : 1);
        sizes[i] = type == 16 ? nel / 256 * 66 : nel * 4; /* IQ2_XXS or F32 */
        off += (sizes[i] + 31) / 32 * 32;
    }
    gw_pad(w, 32);
    for (size_t i = 0; i < nt; i++) {
        for (uint64_t k = 0; k < sizes[i]; k++) gw_u8(w, 0);
        gw_pad(w, 32);
    }
}

static void tiny_gguf(gw *w, const char *arch, int which, const char *rename, int64_t ne1_override,
                      uint32_t type_override) {
    tiny_gguf_x(w, arch, which, rename, ne1_override, type_override, NULL);
}

static llm_status desc_from_gw(const gw *w, llm_model_desc **d) {
    char path[] = "/tmp/llm_test_desc_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(gw_save(w, path), 0);
    llm_status st = llm_model_desc_from_gguf(path, d);
    unlink(path);
    return st;
}

Test(desc, tiny_gguf_ok_and_rejections) {
    gw w;
    llm_model_desc *d = NULL;
    tiny_gguf(&w, "llama", -1, NULL, 0, 0);
    cr_assert_eq(desc_from_gw(&w, &d), LLM_OK, "%s", llm_models_last_error());
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    cr_expect(hp->n_vocab == NV && hp->head_dim == HD && hp->n_head_kv == NKV && hp->tied_embeddings == 1);
    cr_expect(hp->bos_id == 1 && hp->eos_id == -1 && hp->norm_eps == 1e-5f && hp->rope_freq_base == 10000.0f);
    llm_model_desc_free(d);
    gw_free(&w);

    tiny_gguf(&w, "qwen9", -1, NULL, 0, 0);
    cr_expect_eq(desc_from_gw(&w, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "'qwen9'") != NULL, "%s", llm_models_last_error());
    cr_expect(strstr(llm_models_last_error(), "(supported: llama, qwen2, qwen3, gemma3") != NULL, "the message lists the "
              "supported architectures: %s", llm_models_last_error());
    cr_expect_null(d);
    gw_free(&w);

    tiny_gguf(&w, "llama", 3, "blk.0.attn_qq.weight", 0, 0);
    cr_expect_eq(desc_from_gw(&w, &d), LLM_ERR_NOT_FOUND);
    cr_expect(strstr(llm_models_last_error(), "blk.0.attn_q.weight") != NULL, "%s", llm_models_last_error());
    gw_free(&w);

    tiny_gguf(&w, "llama", 4, NULL, 2 * HD, 0);
    cr_expect_eq(desc_from_gw(&w, &d), LLM_ERR_BAD_FORMAT);
    cr_expect(strstr(llm_models_last_error(), "blk.0.attn_k.weight") != NULL, "%s", llm_models_last_error());
    gw_free(&w);

    /* A tensor no table entry claims is refused, by name: an unknown variant
     * must not load and silently compute something else. */
    tiny_gguf_x(&w, "llama", -1, NULL, 0, 0, "blk.0.attn_mystery.weight");
    cr_expect_eq(desc_from_gw(&w, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "'blk.0.attn_mystery.weight'") != NULL, "%s",
              llm_models_last_error());
    cr_expect_null(d);
    gw_free(&w);
    /* A layer beyond block_count is unclaimed too. */
    tiny_gguf_x(&w, "llama", -1, NULL, 0, 0, "blk.1.attn_norm.weight");
    cr_expect_eq(desc_from_gw(&w, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "'blk.1.attn_norm.weight'") != NULL, "%s", llm_models_last_error());
    gw_free(&w);
    /* An optional tensor the table knows (a bias) is accepted. */
    tiny_gguf_x(&w, "llama", -1, NULL, 0, 0, "blk.0.attn_output.bias");
    cr_expect_eq(desc_from_gw(&w, &d), LLM_OK, "%s", llm_models_last_error());
    cr_expect_not_null(llm_model_desc_find_tensor(d, "blk.0.attn_output.bias"));
    llm_model_desc_free(d);
    d = NULL;
    gw_free(&w);

    /* IQ2_XXS: valid GGUF, readable, but not a type llm computes with. */
    tiny_gguf(&w, "llama", 9, NULL, 4, 16);
    cr_expect_eq(desc_from_gw(&w, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "IQ2_XXS") != NULL, "%s", llm_models_last_error());
    gw_free(&w);
}

/* ---- a tiny llama, as a Hugging Face folder ---- */

static const char *hf_name(const char *gguf_name, char *buf, size_t cap) {
    static const char *const map[][2] = {
        {"token_embd.weight", "model.embed_tokens.weight"}, {"output_norm.weight", "model.norm.weight"},
        {"blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"},
        {"blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"},
        {"blk.0.attn_k.weight", "model.layers.0.self_attn.k_proj.weight"},
        {"blk.0.attn_v.weight", "model.layers.0.self_attn.v_proj.weight"},
        {"blk.0.attn_output.weight", "model.layers.0.self_attn.o_proj.weight"},
        {"blk.0.ffn_norm.weight", "model.layers.0.post_attention_layernorm.weight"},
        {"blk.0.ffn_gate.weight", "model.layers.0.mlp.gate_proj.weight"},
        {"blk.0.ffn_up.weight", "model.layers.0.mlp.up_proj.weight"},
        {"blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], gguf_name)) return snprintf(buf, cap, "%s", map[i][1]), buf;
    return NULL;
}

/* Writes tensors [from, to) of k_llama as BF16 into dir/file, with an extra
 * extra tensor (see below). */
static void write_shard(const char *dir, const char *file, size_t from, size_t to, int extra) {
    char header[8192];
    size_t hl = 0;
    uint64_t off = 0;
    hl += (size_t)snprintf(header + hl, sizeof header - hl, "{");
    for (size_t i = from; i < to; i++) {
        const tspec *t = &k_llama[i];
        char name[128];
        hf_name(t->name, name, sizeof name);
        const uint64_t bytes = (uint64_t)t->ne0 * (uint64_t)(t->ne1 ? t->ne1 : 1) * 2;
        if (t->ne1)
            hl += (size_t)snprintf(header + hl, sizeof header - hl, "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%lld,%lld],\"data_offsets\":[%llu,%llu]}",
                                   i > from ? "," : "", name, (long long)t->ne1, (long long)t->ne0,
                                   (unsigned long long)off, (unsigned long long)(off + bytes));
        else
            hl += (size_t)snprintf(header + hl, sizeof header - hl, "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%lld],\"data_offsets\":[%llu,%llu]}",
                                   i > from ? "," : "", name, (long long)t->ne0, (unsigned long long)off,
                                   (unsigned long long)(off + bytes));
        off += bytes;
    }
    if (extra) {
        /* 1: a known harmless tensor (skipped); 2: one no table entry knows. */
        const char *xn = extra == 1 ? "model.layers.0.self_attn.rotary_emb.inv_freq" : "model.layers.0.mlp.mystery.weight";
        hl += (size_t)snprintf(header + hl, sizeof header - hl, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[%llu,%llu]}",
                               xn, (unsigned long long)off, (unsigned long long)(off + 32));
        off += 32;
    }
    snprintf(header + hl, sizeof header - hl, "}");
    uint8_t *data = calloc(1, off + 1);
    data[0] = 0x80; /* first bf16 of the first tensor = 1.0 (0x3f80) */
    data[1] = 0x3f;
    size_t len;
    uint8_t *buf = st_build(header, data, off, &len);
    cr_assert_eq(st_write_file(dir, file, buf, len), 0);
    free(buf);
    free(data);
}

static const char *k_config =
    "{\"model_type\": \"llama\", \"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 32,"
    " \"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 1,"
    " \"intermediate_size\": 64, \"vocab_size\": 8, \"max_position_embeddings\": 128,"
    " \"rope_theta\": 500000.0, \"rms_norm_eps\": 1e-05, \"bos_token_id\": 1, \"eos_token_id\": [2, 3],"
    " \"pad_token_id\": null, \"tie_word_embeddings\": true,"
    " \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0,"
    " \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}}";

Test(desc, hf_single_file) {
    char *dir = st_tmpdir();
    cr_assert_not_null(dir);
    cr_assert_eq(st_write_text(dir, "config.json", k_config), 0);
    write_shard(dir, "model.safetensors", 0, N_LLAMA, 1);
    llm_model_desc *d = NULL;
    cr_assert_eq(llm_model_desc_load(dir, &d), LLM_OK, "%s", llm_models_last_error());
    cr_expect_eq(llm_model_desc_source(d), LLM_MODEL_SOURCE_SAFETENSORS);
    cr_expect_null(llm_model_desc_gguf(d));
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    cr_expect(hp->n_embd == E && hp->n_head == NH && hp->n_head_kv == NKV && hp->head_dim == HD && hp->n_ff == FF);
    cr_expect_eq(hp->n_vocab, (uint32_t)NV);
    cr_expect_eq(hp->rope_type, LLM_ROPE_MODE_NEOX);
    cr_expect_eq(hp->rope_freq_base, 500000.0f);
    cr_expect_eq(hp->rope_scaling, LLM_ROPE_SCALE_LLAMA3);
    cr_expect(hp->rope_scaling_factor == 8.0f && hp->rope_high_freq_factor == 4.0f && hp->rope_orig_ctx == 8192);
    cr_expect(hp->bos_id == 1 && hp->eos_id == 2 && hp->pad_id == -1);
    cr_expect_eq(hp->tied_embeddings, 1);
    cr_expect_eq(llm_model_desc_tensor_count(d), (int64_t)N_LLAMA, "inv_freq is skipped");
    const llm_model_tensor *t = llm_model_desc_find_tensor(d, "blk.0.ffn_down.weight");
    cr_assert_not_null(t);
    cr_expect(t->type == LLM_DTYPE_BF16 && t->ne[0] == FF && t->ne[1] == E && t->size == FF * E * 2);
    t = llm_model_desc_find_tensor(d, "token_embd.weight");
    cr_assert_not_null(t);
    float f;
    llm_dtype_dequantize_row(LLM_DTYPE_BF16, t->data, &f, 1);
    cr_expect_eq(f, 1.0f);
    llm_model_desc_free(d);
    st_rm_rf(dir);
    free(dir);
}

Test(desc, hf_unknown_tensor_named) {
    char *dir = st_tmpdir();
    cr_assert_not_null(dir);
    cr_assert_eq(st_write_text(dir, "config.json", k_config), 0);
    write_shard(dir, "model.safetensors", 0, N_LLAMA, 2);
    llm_model_desc *d = NULL;
    cr_expect_eq(llm_model_desc_load(dir, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "'model.layers.0.mlp.mystery.weight'") != NULL, "%s",
              llm_models_last_error());
    cr_expect_null(d);
    st_rm_rf(dir);
    free(dir);
}

Test(desc, hf_sharded_and_lies) {
    char *dir = st_tmpdir();
    cr_assert_not_null(dir);
    cr_assert_eq(st_write_text(dir, "config.json", k_config), 0);
    write_shard(dir, "model-00001-of-00002.safetensors", 0, 5, 0);
    write_shard(dir, "model-00002-of-00002.safetensors", 5, N_LLAMA, 0);
    char index[4096];
    size_t il = (size_t)snprintf(index, sizeof index, "{\"metadata\": {}, \"weight_map\": {");
    for (size_t i = 0; i < N_LLAMA; i++) {
        char name[128];
        hf_name(k_llama[i].name, name, sizeof name);
        il += (size_t)snprintf(index + il, sizeof index - il, "%s\"%s\": \"model-0000%d-of-00002.safetensors\"",
                               i ? "," : "", name, i < 5 ? 1 : 2);
    }
    snprintf(index + il, sizeof index - il, "}}");
    cr_assert_eq(st_write_text(dir, "model.safetensors.index.json", index), 0);
    llm_model_desc *d = NULL;
    cr_assert_eq(llm_model_desc_from_dir(dir, &d), LLM_OK, "%s", llm_models_last_error());
    cr_expect_eq(llm_model_desc_file_count(d), 2u);
    const llm_model_tensor *t = llm_model_desc_find_tensor(d, "blk.0.ffn_up.weight");
    cr_assert_not_null(t);
    cr_expect_eq(t->file_index, 1u);
    cr_expect(strstr(llm_model_desc_file_path(d, 1), "00002") != NULL);
    llm_model_desc_free(d);

    /* The index lies about which shard holds a tensor. */
    char *lie = strstr(index, "model-00001-of-00002");
    cr_assert_not_null(lie);
    lie[10] = '2';
    cr_assert_eq(st_write_text(dir, "model.safetensors.index.json", index), 0);
    cr_expect_eq(llm_model_desc_from_dir(dir, &d), LLM_ERR_BAD_FORMAT);
    cr_expect(strstr(llm_models_last_error(), "does not hold") != NULL, "%s", llm_models_last_error());

    /* A shard name that escapes the folder. */
    cr_assert_eq(st_write_text(dir, "model.safetensors.index.json",
                               "{\"weight_map\": {\"model.norm.weight\": \"../x.safetensors\"}}"), 0);
    cr_expect_eq(llm_model_desc_from_dir(dir, &d), LLM_ERR_BAD_FORMAT);
    cr_expect(strstr(llm_models_last_error(), "plain file name") != NULL, "%s", llm_models_last_error());

    /* Missing shard file. */
    cr_assert_eq(st_write_text(dir, "model.safetensors.index.json",
                               "{\"weight_map\": {\"model.norm.weight\": \"nope.safetensors\"}}"), 0);
    cr_expect_eq(llm_model_desc_from_dir(dir, &d), LLM_ERR_IO);

    /* Unsupported architecture named. */
    cr_assert_eq(st_write_text(dir, "config.json", "{\"model_type\": \"mamba\"}"), 0);
    cr_expect_eq(llm_model_desc_from_dir(dir, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "mamba") != NULL, "%s", llm_models_last_error());
    cr_assert_eq(st_write_text(dir, "config.json", "{\"model_type\": "), 0);
    cr_expect_eq(llm_model_desc_from_dir(dir, &d), LLM_ERR_BAD_FORMAT);
    cr_expect_null(d);
    st_rm_rf(dir);
    free(dir);
    cr_expect_eq(llm_model_desc_from_dir("/nonexistent_dir_llm", &d), LLM_ERR_IO);
}

Test(desc, hf_unsupported_dtype_named) {
    char *dir = st_tmpdir();
    cr_assert_eq(st_write_text(dir, "config.json", k_config), 0);
    size_t len;
    uint8_t data[8] = {0};
    uint8_t *buf = st_build("{\"model.norm.weight\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", data, 8, &len);
    cr_assert_eq(st_write_file(dir, "model.safetensors", buf, len), 0);
    free(buf);
    llm_model_desc *d = NULL;
    cr_expect_eq(llm_model_desc_from_dir(dir, &d), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_models_last_error(), "I64") != NULL && strstr(llm_models_last_error(), "model.norm.weight"),
              "%s", llm_models_last_error());
    st_rm_rf(dir);
    free(dir);
}

/* The registry comes from one list (arch/archs.def): each listed tag finds
 * an architecture whose own tag is that name, and the list has no repeat. */
Test(desc, arch_list_matches_registry) {
    const char *const *names = llm_model_arch_list();
    cr_assert_not_null(names);
    size_t n = 0;
    for (; names[n]; n++) {
        cr_expect(llm_net_supports_arch(names[n]), "%s is listed but not found by its tag", names[n]);
        for (size_t j = 0; j < n; j++) cr_expect_str_neq(names[j], names[n]);
    }
    cr_expect_geq(n, 9u);
    cr_expect_not(llm_net_supports_arch("no-such-arch"));
}
