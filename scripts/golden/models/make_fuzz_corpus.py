#!/usr/bin/env python3
"""Seed corpora for the GGUF and SafeTensors fuzzers (fuzz/corpus/<parser>/),
written with the reference writers (gguf.GGUFWriter, safetensors.numpy) so
the seeds are well-formed files the fuzzer mutates from. Kept tiny (< 4 KB).
Files have no extension (the repo ignores *.gguf / *.safetensors).

Usage: /root/.cache/llm/venv/bin/python scripts/golden/models/make_fuzz_corpus.py
"""
import json
import os
import struct
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from safetensors.numpy import save

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fuzz", "corpus")


def write_gguf(name, build):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.gguf")
        w = gguf.GGUFWriter(p, "llama")
        build(w)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with open(p, "rb") as f:
            data = f.read()
    with open(os.path.join(ROOT, "gguf", name), "wb") as f:
        f.write(data)


def tiny_llama(w):
    # A whole (tiny) llama: hparams, tokenizer arrays, every tensor.
    n_embd, n_ff, n_vocab, n_head, n_kv = 32, 64, 8, 2, 1
    w.add_block_count(1)
    w.add_context_length(64)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(["<s>", "</s>", "a", "b", "ab", " ", "\u00e9", "<unk>"])
    w.add_token_types([3, 3, 1, 1, 1, 1, 1, 2])
    w.add_token_merges(["a b"])
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)
    rng = np.random.default_rng(1)
    hd = n_embd // n_head
    def t(name, shape, qt=None):
        x = rng.standard_normal(shape).astype(np.float32)
        if qt is None:
            w.add_tensor(name, x)
        else:
            q = gguf.quants.quantize(x, qt)
            w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qt)
    t("token_embd.weight", (n_vocab, n_embd), T.Q8_0)
    t("output_norm.weight", (n_embd,))
    t("blk.0.attn_norm.weight", (n_embd,))
    t("blk.0.attn_q.weight", (n_head * hd, n_embd), T.Q4_1)
    t("blk.0.attn_k.weight", (n_kv * hd, n_embd), T.Q4_1)
    t("blk.0.attn_v.weight", (n_kv * hd, n_embd), T.Q4_0)
    t("blk.0.attn_output.weight", (n_embd, n_head * hd), T.Q8_0)
    t("blk.0.ffn_norm.weight", (n_embd,))
    t("blk.0.ffn_gate.weight", (n_ff, n_embd), T.Q4_1)
    t("blk.0.ffn_up.weight", (n_ff, n_embd), T.Q4_1)
    t("blk.0.ffn_down.weight", (n_embd, n_ff), T.Q4_1)


def all_types(w):
    w.add_uint8("t.u8", 7)
    w.add_int8("t.i8", -7)
    w.add_uint16("t.u16", 700)
    w.add_int16("t.i16", -700)
    w.add_uint32("t.u32", 70000)
    w.add_int32("t.i32", -70000)
    w.add_float32("t.f32", 0.5)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "h\u00e9llo")
    w.add_uint64("t.u64", 1 << 40)
    w.add_int64("t.i64", -(1 << 40))
    w.add_float64("t.f64", 1.25)
    w.add_array("t.arr_i32", [1, 2, 3])
    w.add_array("t.arr_str", ["x", "yy", ""])
    w.add_array("t.arr_nested", [[1, 2], [3]])
    w.add_array("t.arr_nested_str", [["a"], ["b", "c"]])
    w.add_tensor("f16", np.arange(8, dtype=np.float16))
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 256)
    w.add_tensor("bf16", gguf.quants.quantize(x, T.BF16), raw_shape=(1, 256), raw_dtype=T.BF16)


def empty(w):
    pass


def write_st(name, tensors, meta=None):
    data = save(tensors, metadata=meta)
    with open(os.path.join(ROOT, "safetensors", name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(os.path.join(ROOT, "gguf"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "safetensors"), exist_ok=True)
    write_gguf("tiny_llama", tiny_llama)
    write_gguf("all_types", all_types)
    write_gguf("empty", empty)
    # Deterministic content: tests/models/test_safetensors.c checks these values.
    write_st("two_tensors", {"model.embed_tokens.weight": np.arange(32, dtype=np.float16).reshape(4, 8),
                             "model.norm.weight": np.full(8, 0.5, dtype=np.float32)},
             {"format": "pt"})
    write_st("bf16_like", {"a": np.arange(6, dtype=np.uint16).reshape(2, 3),
                           "b": np.zeros((1, 1, 2, 2), dtype=np.float32),
                           "s": np.array(3.0, dtype=np.float32)})
    write_st("empty", {})


if __name__ == "__main__":
    main()
