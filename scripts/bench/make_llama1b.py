#!/usr/bin/env python3
"""A synthetic model with Llama 3.2 1B's shapes, for benchmarks that must not fit in cache.

Usage: make_llama1b.py [--out-dir DIR] [--types Q4_0,Q4_K_M,Q8_0,Q4_1]
                       [--quantize PATH/llama-quantize] [--layers N]

Writes DIR/llama1b-f16.gguf (F16 weights, ~2.5 GB) and one file per type,
DIR/llama1b-<type>.gguf, quantized by llama.cpp's own llama-quantize (default
/root/.cache/llm/llamacpp-tools/avx2/bin/llama-quantize), so the quantized
blocks are what llama.cpp would make of a released F16 model (its default
mix: with the tied embedding the LM head gets Q6_K for Q4_0/Q4_1/Q4_K_M).
Default DIR: ~/.cache/llm/models/synthetic. Existing files are kept; never
commit them.

Shapes (Llama-3.2-1B-Instruct): 16 layers, n_embd 2048, n_ff 8192, 32 query
heads and 8 KV heads of 64, vocabulary 128256 (the real Llama 3 BPE
vocabulary from ggml-vocab-llama-bpe.gguf), tied embeddings, rope base 500000
with llama3 rope scaling. Weights are random at a realistic scale (normal,
std 1/sqrt(fan_in), drawn from a PCG64 stream seeded per tensor name, as
scripts/golden/families/make_synthetic.py draws them), so the output is
deterministic for one numpy and gguf version. The text such a model writes
is noise; speed does not depend on it (decode length is fixed by the
benchmark, not by an end-of-text token).
"""
import argparse
import os
import subprocess
import sys

try:
    import numpy as np
    import gguf
except ImportError as e:
    print(f"skipped: {e} (pip install numpy gguf)", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden", "families"))
import make_synthetic as ms  # noqa: E402  (rng_for, norm_weight, copy_vocab, llama3 rope)

Q = gguf.GGMLQuantizationType
SHAPE = dict(n_embd=2048, n_ff=8192, n_layer=16, n_head=32, n_head_kv=8, head_dim=64,
             rope_base=500000.0, eps=1e-5, ctx=131072,
             llama3_rope=dict(factor=32.0, low=1.0, high=4.0, orig=8192))


def f16_matrix(name, rows, cols, scale=1.0):
    """[rows][cols] float16, std scale/sqrt(cols), drawn in float32 (half the memory of float64)."""
    g = ms.rng_for(name)
    out = np.empty((rows, cols), dtype=np.float16)
    step = max(1, (1 << 24) // cols)
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        out[r0:r1] = g.standard_normal((r1 - r0, cols), dtype=np.float32) * np.float32(scale / np.sqrt(cols))
    return out


def rope_factors(D, base, r):
    freqs = 1.0 / (base ** (np.arange(0, D, 2, dtype=np.float32) / D))
    low_wl, high_wl = r["orig"] / r["low"], r["orig"] / r["high"]
    out = []
    for f in freqs:
        wl = 2 * np.pi / f
        if wl < high_wl:
            out.append(1.0)
        elif wl > low_wl:
            out.append(r["factor"])
        else:
            sm = (r["orig"] / wl - r["low"]) / (r["high"] - r["low"])
            out.append(1.0 / ((1 - sm) / r["factor"] + sm))
    return np.array(out, dtype=np.float32)


def build_f16(out, n_layer):
    s = SHAPE
    E, F, H, KV, D = s["n_embd"], s["n_ff"], s["n_head"], s["n_head_kv"], s["head_dim"]
    w = gguf.GGUFWriter(out, "llama")
    w.add_name("synthetic-llama-3.2-1b-shape")
    w.add_context_length(s["ctx"])
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_key_length(D)
    w.add_value_length(D)
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(s["eps"])
    w.add_rope_dimension_count(D)
    w.add_file_type(1)  # MOSTLY_F16
    n_vocab = ms.copy_vocab(w, "llama-bpe")
    # Output rows of std 3/sqrt(E): logits of std ~3, as in released models (tied).
    w.add_tensor("token_embd.weight", f16_matrix("token_embd", n_vocab, E, 3.0))
    w.add_tensor("output_norm.weight", ms.norm_weight("output_norm", E))
    w.add_tensor("rope_freqs.weight", rope_factors(D, s["rope_base"], s["llama3_rope"]))
    for il in range(n_layer):
        p = f"blk.{il}."
        w.add_tensor(p + "attn_norm.weight", ms.norm_weight(p + "attn_norm", E))
        w.add_tensor(p + "attn_q.weight", f16_matrix(p + "attn_q", H * D, E))
        w.add_tensor(p + "attn_k.weight", f16_matrix(p + "attn_k", KV * D, E))
        w.add_tensor(p + "attn_v.weight", f16_matrix(p + "attn_v", KV * D, E))
        w.add_tensor(p + "attn_output.weight", f16_matrix(p + "attn_output", E, H * D))
        w.add_tensor(p + "ffn_norm.weight", ms.norm_weight(p + "ffn_norm", E))
        w.add_tensor(p + "ffn_gate.weight", f16_matrix(p + "ffn_gate", F, E))
        w.add_tensor(p + "ffn_up.weight", f16_matrix(p + "ffn_up", F, E))
        w.add_tensor(p + "ffn_down.weight", f16_matrix(p + "ffn_down", E, F))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=os.path.expanduser("~/.cache/llm/models/synthetic"))
    ap.add_argument("--types", default="Q4_0,Q4_K_M,Q8_0,Q4_1")
    ap.add_argument("--quantize", default="/root/.cache/llm/llamacpp-tools/avx2/bin/llama-quantize")
    ap.add_argument("--layers", type=int, default=SHAPE["n_layer"])
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    tag = "llama1b" if a.layers == SHAPE["n_layer"] else f"llama1b-{a.layers}l"
    f16 = os.path.join(a.out_dir, f"{tag}-f16.gguf")
    if not os.path.exists(f16):
        build_f16(f16 + ".tmp", a.layers)
        os.replace(f16 + ".tmp", f16)
        print(f"{f16}: {os.path.getsize(f16)} bytes", file=sys.stderr)
    for t in [t for t in a.types.split(",") if t]:
        out = os.path.join(a.out_dir, f"{tag}-{t.lower()}.gguf")
        if os.path.exists(out):
            continue
        subprocess.run([a.quantize, f16, out + ".tmp", t, str(a.threads)], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(out + ".tmp", out)
        print(f"{out}: {os.path.getsize(out)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
