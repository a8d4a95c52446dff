#!/usr/bin/env python3
"""A small seeded nomic-bert GGUF (no weights of that family are on PyPI):
nomic-embed-text's layout (fused Q/K/V, NEOX RoPE, SwiGLU, post-norm
LayerNorms with biases, token types, mean pooling) at toy size, with a
WordPiece vocabulary in llama.cpp's "phantom space" encoding. Written at
test time (CTest fixture) with numpy and the gguf package; the file's
SHA-256 is checked so that a generator change cannot go unnoticed.

    python3 scripts/golden/embed/make_nomic_synthetic.py OUT.gguf [--no-check]
"""
import hashlib
import sys

import numpy as np

import gguf

EXPECTED_SHA256 = "5e41302494706c0e8c81ab62aee0dc9967c430e398f89982db63563f010d57d8"

WORDS = ("the a of and to in is cat dog sat on mat river bank money water bridge city music play plays played "
         "run runs running fast slow quick brown fox jumps over lazy model data energy light sound red blue green "
         "house tree bird song sings sleeps eats fish").split()
PIECES = ["##s", "##ed", "##ing", "##er", "##ly", "##es"]
PUNCT = [".", ",", "!", "?", "'"]
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)]


def vocab():
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    normal = list(dict.fromkeys(WORDS + PUNCT + LETTERS + ["##" + c for c in LETTERS] + PIECES))  # no duplicates
    toks, types = [], []
    for t in special:
        toks.append(t)
        types.append(gguf.TokenType.CONTROL)
    for t in normal:
        toks.append(t[2:] if t.startswith("##") else "\u2581" + t)
        types.append(gguf.TokenType.NORMAL)
    return toks, types


def main():
    out = sys.argv[1]
    check = "--no-check" not in sys.argv
    E, H, L, F, CTX = 64, 4, 2, 96, 128
    rng = np.random.RandomState(20261123)
    toks, types = vocab()
    V = len(toks)

    def mat(rows, cols, s=0.08):
        return (rng.standard_normal((rows, cols)) * s).astype(np.float32)

    def vec(n, mean=0.0, s=0.05):
        return (mean + rng.standard_normal(n) * s).astype(np.float32)

    w = gguf.GGUFWriter(out, "nomic-bert")
    w.add_name("synthetic-nomic-bert")
    w.add_block_count(L)
    w.add_context_length(CTX)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_layer_norm_eps(1e-12)
    w.add_rope_freq_base(1000.0)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    w.add_token_type_count(2)
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("jina-v2-en")
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_bos_token_id(2)
    w.add_eos_token_id(3)
    w.add_unk_token_id(1)
    w.add_sep_token_id(3)
    w.add_pad_token_id(0)
    w.add_mask_token_id(4)
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)
    w.add_bool("tokenizer.ggml.normalizer.lowercase", True)
    w.add_tensor("token_embd.weight", mat(V, E, 0.5))
    w.add_tensor("token_types.weight", mat(2, E, 0.1))
    w.add_tensor("token_embd_norm.weight", vec(E, 1.0, 0.1))
    w.add_tensor("token_embd_norm.bias", vec(E))
    for l in range(L):
        p = f"blk.{l}."
        w.add_tensor(p + "attn_qkv.weight", mat(3 * E, E, 0.15))
        w.add_tensor(p + "attn_output.weight", mat(E, E, 0.1))
        w.add_tensor(p + "attn_output_norm.weight", vec(E, 1.0, 0.1))
        w.add_tensor(p + "attn_output_norm.bias", vec(E))
        w.add_tensor(p + "ffn_up.weight", mat(F, E, 0.1))
        w.add_tensor(p + "ffn_gate.weight", mat(F, E, 0.1))
        w.add_tensor(p + "ffn_down.weight", mat(E, F, 0.1))
        w.add_tensor(p + "layer_output_norm.weight", vec(E, 1.0, 0.1))
        w.add_tensor(p + "layer_output_norm.bias", vec(E))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    h = hashlib.sha256(open(out, "rb").read()).hexdigest()
    if check and h != EXPECTED_SHA256:
        sys.exit(f"make_nomic_synthetic: {out}: sha256 {h}, expected {EXPECTED_SHA256} (generator or gguf changed)")
    print(out, h)


if __name__ == "__main__":
    main()
