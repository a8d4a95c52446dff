#!/usr/bin/env python3
"""Synthetic GGUF models of the decoder families that have no weights on PyPI.

Usage: make_synthetic.py FAMILY OUT.gguf      (FAMILY: see FAMILIES below, or --list)
       make_synthetic.py --check FAMILY OUT.gguf   also compare the file's SHA-256 with
                                                  synthetic.sha256 next to this script
       make_synthetic.py [--check] --hf DIR FAMILY OUT.gguf
                                 a family marked `hf` also as a Hugging Face folder
                                 DIR (config.json, model.safetensors written with the
                                 `safetensors` package, tokenizer.json) holding the
                                 same weights; --check also checks model.safetensors

Each file has the real head layout of a small released model of the family
(query heads, KV heads, head size, so the real GQA ratio), the family's
GGUF metadata keys as llama.cpp's converter writes them, and the real
tokenizer and chat template (from llama.cpp's vocabulary GGUFs and chat
templates in ../shared/testdata), but only a few layers and a narrow residual
stream, so that the files stay small enough to generate in CI (a few seconds,
tens of MB). Weights are random at a realistic scale (normal, std
1/sqrt(fan_in); norms 1 + small noise), drawn from a PCG64 stream seeded per
tensor name, so the output is deterministic: the same numpy and gguf versions
give the same bytes (the SHA-256 check says when they do not).

The files are generated, never committed. The reference outputs on them come
from llama.cpp (make_family_golden.py); tests regenerate the file and check
its hash before comparing (tests/models/families).
"""
import argparse
import functools
import hashlib
import os
import sys
import zlib

try:
    import numpy as np
    import gguf
except ImportError as e:  # the tests treat 77 as "skipped"
    print(f"skipped: {e} (pip install numpy gguf)", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TESTDATA = os.environ.get("LLM_SHARED_TESTDATA", os.path.join(ROOT, "..", "shared", "testdata"))
Q = gguf.GGMLQuantizationType

# Head layout and hyper-parameters of a real small model per family; n_embd,
# n_ff and n_layer shrunk (llama.cpp reads the head size from key_length, so
# n_head * head_dim need not equal n_embd). wtype: the type of the layer
# matrices; etype: token_embd (tied output unless `untied`).
FAMILIES = {
    # Qwen2.5-0.5B-Instruct: heads of 64 with 7 query heads per KV head (there 14 / 2; here
    # 7 / 1, since llama.cpp's qwen2 ties n_embd to n_head * head_dim); Q/K/V biases; NEOX rope.
    "qwen2": dict(arch="qwen2", vocab="qwen2", template="Qwen-Qwen2.5-7B-Instruct.jinja",
                  n_head=7, n_head_kv=1, head_dim=64, n_embd=448, n_ff=1216, n_layer=3,
                  rope_base=1000000.0, eps=1e-6, ctx=32768, qkv_bias=True,
                  wtype=Q.F16, etype=Q.Q4_0),
    # Qwen3-0.6B: 16 / 8 heads of 128, per-head RMSNorm on Q and K, no biases.
    "qwen3": dict(arch="qwen3", vocab="qwen2", template="Qwen-Qwen3-0.6B.jinja",
                  n_head=16, n_head_kv=8, head_dim=128, n_embd=256, n_ff=768, n_layer=3,
                  rope_base=1000000.0, eps=1e-6, ctx=40960, qk_norm=True,
                  wtype=Q.Q8_0, etype=Q.Q8_0),
    # Llama-3.2-1B-Instruct: 32 / 8 heads of 64, llama3 rope scaling (rope_freqs), tied.
    "llama3": dict(arch="llama", vocab="llama-bpe", template="meta-llama-Llama-3.2-3B-Instruct.jinja",
                   n_head=32, n_head_kv=8, head_dim=64, n_embd=256, n_ff=768, n_layer=3,
                   rope_base=500000.0, eps=1e-5, ctx=131072,
                   llama3_rope=dict(factor=32.0, low=1.0, high=4.0, orig=8192),
                   wtype=Q.Q4_0, etype=Q.Q8_0),
    # Mistral-7B-Instruct-v0.2 head layout (32 / 8 of 128) with a SentencePiece vocabulary.
    "mistral": dict(arch="llama", vocab="llama-spm", template="mistralai-Mistral-Nemo-Instruct-2407.jinja",
                    n_head=32, n_head_kv=8, head_dim=128, n_embd=256, n_ff=768, n_layer=3,
                    rope_base=1000000.0, eps=1e-5, ctx=32768, untied=True,
                    wtype=Q.F16, etype=Q.F16),
    # Phi-3.5-mini-instruct: heads of 96, as many KV heads as query heads (there 32, here 8,
    # since llama.cpp's phi3 ties n_embd to n_head * head_dim), fused QKV and gate/up,
    # long/short rope factors.
    # qwen2 again, as the GGUF llama.cpp's converter writes from an F16 Hugging Face
    # checkpoint (F16 matrices, F32 norms and biases holding F16 values, no q/k permutation
    # for qwen2), and that checkpoint itself (--hf DIR): both must give the same logits.
    "qwen2_hf": dict(arch="qwen2", vocab="qwen2", template="Qwen-Qwen2.5-7B-Instruct.jinja",
                     n_head=7, n_head_kv=1, head_dim=64, n_embd=448, n_ff=1216, n_layer=3,
                     rope_base=1000000.0, eps=1e-6, ctx=32768, qkv_bias=True,
                     wtype=Q.F16, etype=Q.F16, hf="qwen2"),
    # Gemma 3 270M's heads (4 / 1 of 256), 5 window layers then a global one (a window of
    # 64 here, so that the long prompt leaves it), Q/K norms, post-norms, GEGLU; as the GGUF
    # llama.cpp's converter writes from an F16 checkpoint (norms 1 + w rounded to F16, then
    # F32) and as that checkpoint (--hf DIR, norms w). A SentencePiece vocabulary: the
    # folder gets no tokenizer.json (only byte-level BPE ones are written).
    "gemma3_hf": dict(arch="gemma3", vocab="llama-spm", template="google-gemma-2-2b-it.jinja",
                      n_head=4, n_head_kv=1, head_dim=256, n_embd=640, n_ff=2048, n_layer=6,
                      rope_base=1000000.0, eps=1e-6, ctx=32768, qk_norm=True,
                      gemma=dict(swa=64, base_swa=10000.0), wtype=Q.F16, etype=Q.F16, hf="gemma3_text"),
    "phi3": dict(arch="phi3", vocab="phi-3", template="microsoft-Phi-3.5-mini-instruct.jinja",
                 n_head=8, n_head_kv=8, head_dim=96, n_embd=768, n_ff=1024, n_layer=3,
                 rope_base=10000.0, eps=1e-5, ctx=131072, fused=True, untied=True,
                 longrope=dict(orig=4096), wtype=Q.Q8_0, etype=Q.Q8_0),
    # Qwen3.5-0.8B: gated full attention 8 / 2 heads of 256 (query and output gate from one
    # projection, Q/K norms, partial NEOX-like rope over 64 dims, IMROPE sections 11/11/10),
    # Gated DeltaNet layers with 16 key and 16 value heads of 128 and a causal conv of 4,
    # one full-attention layer every 4 (here 4 layers: 3 recurrent, then 1 full).
    "qwen35": dict(arch="qwen35", vocab="qwen35", template="Qwen3.5-4B.jinja",
                   n_head=8, n_head_kv=2, head_dim=256, n_embd=256, n_ff=768, n_layer=4,
                   rope_base=10000000.0, eps=1e-6, ctx=262144, n_rot=64,
                   qwen35=dict(d_conv=4, d_state=128, n_k=16, n_v=16, interval=4, sections=[11, 11, 10, 0]),
                   wtype=Q.Q8_0, etype=Q.Q8_0),
    # Qwen3-30B-A3B: 32 / 4 heads of 128, per-head Q/K norms, and in place of the dense
    # feed-forward a mixture of experts (there 128 experts of 768, 8 used; here 32 of 128,
    # 8 used), softmax router with normalised top-k weights (norm_topk_prob), no shared
    # expert. The router stays F32 as llama.cpp's converter and quantizer keep it.
    "qwen3moe": dict(arch="qwen3moe", vocab="qwen2", template="Qwen-Qwen3-0.6B.jinja",
                     n_head=32, n_head_kv=4, head_dim=128, n_embd=256, n_ff=1024, n_layer=3,
                     rope_base=1000000.0, eps=1e-6, ctx=40960, qk_norm=True,
                     moe=dict(n_expert=32, n_used=8, n_ff_exp=128),
                     wtype=Q.Q8_0, etype=Q.Q8_0),
}


def rng_for(name):
    return np.random.Generator(np.random.PCG64(zlib.crc32(name.encode())))


def matrix(name, rows, cols):
    """[rows][cols] float32, std 1/sqrt(cols) (cols = fan-in)."""
    return (rng_for(name).standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)


def norm_weight(name, n):
    return (1.0 + 0.1 * rng_for(name).standard_normal(n)).astype(np.float32)


def add(w, name, data, qtype, rec=None, gemma_norm=False):
    """Adds a tensor to the GGUF; rec (a dict) also keeps it for the HF folder.
    gemma_norm: data is the checkpoint's w (F16); the GGUF gets 1 + w computed
    in float, rounded to F16 and stored as F32, as llama.cpp's converter does."""
    if rec is not None:
        if qtype == Q.F32:  # vectors: F16 in the checkpoint, their exact F32 value in the GGUF
            data = data.astype(np.float16).astype(np.float32)
        rec[name] = data
    if gemma_norm:
        data = (data.astype(np.float32) + np.float32(1.0)).astype(np.float16).astype(np.float32)
    if qtype == Q.F32:
        w.add_tensor(name, data.astype(np.float32))
    elif qtype == Q.F16:
        w.add_tensor(name, data.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)


def copy_vocab(w, vocab):
    r = gguf.GGUFReader(os.path.join(TESTDATA, "llama-cpp-vocab", f"ggml-vocab-{vocab}.gguf"))
    n_vocab = None
    for key, f in r.fields.items():
        if not key.startswith("tokenizer.") or key == "tokenizer.chat_template":
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            vals = f.contents()
            w.add_key_value(key, vals, t, sub_type=f.types[1])
            if key == "tokenizer.ggml.tokens":
                n_vocab = len(vals)
        else:
            w.add_key_value(key, f.contents(), t)
    return n_vocab


def build(family, out):
    """Writes the GGUF. For a family marked `hf`, returns every tensor's values
    under its GGUF name (for write_hf), else None."""
    s = FAMILIES[family]
    rec = {} if s.get("hf") else None
    gem = "gemma" in s
    add_ = lambda w, name, data, qtype: add(w, name, data, qtype, rec)  # noqa: E731

    def norm_(w, name, n):  # a norm weight (Gemma: the checkpoint's w, small, around 0)
        if gem:
            add(w, name + ".weight", 0.1 * rng_for(name).standard_normal(n).astype(np.float32), Q.F32, rec, True)
        else:
            add_(w, name + ".weight", norm_weight(name, n), Q.F32)
    arch, E, F, L = s["arch"], s["n_embd"], s["n_ff"], s["n_layer"]
    H, KV, D = s["n_head"], s["n_head_kv"], s["head_dim"]
    w = gguf.GGUFWriter(out, arch)
    w.add_name(f"synthetic-{family}")
    w.add_context_length(s["ctx"])
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_key_length(D)
    w.add_value_length(D)
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(s["eps"])
    w.add_rope_dimension_count(s.get("n_rot", D))
    if "longrope" in s:
        w.add_key_value(f"{arch}.rope.scaling.original_context_length", s["longrope"]["orig"],
                        gguf.GGUFValueType.UINT32)
        w.add_key_value(f"{arch}.rope.scaling.attn_factor", 1.190238, gguf.GGUFValueType.FLOAT32)
    if gem:
        w.add_sliding_window(s["gemma"]["swa"])
    if "qwen35" in s:
        q = s["qwen35"]
        w.add_rope_dimension_sections(q["sections"])
        w.add_ssm_conv_kernel(q["d_conv"])
        w.add_ssm_state_size(q["d_state"])
        w.add_ssm_group_count(q["n_k"])
        w.add_ssm_time_step_rank(q["n_v"])
        w.add_ssm_inner_size(q["d_state"] * q["n_v"])
        w.add_full_attention_interval(q["interval"])
    if "moe" in s:
        w.add_expert_count(s["moe"]["n_expert"])
        w.add_expert_used_count(s["moe"]["n_used"])
        w.add_expert_feed_forward_length(s["moe"]["n_ff_exp"])
    w.add_file_type(1)
    n_vocab = copy_vocab(w, s["vocab"])
    with open(os.path.join(TESTDATA, "chat-templates", s["template"]), encoding="utf-8") as f:
        w.add_chat_template(f.read())

    # Output rows of std 3/sqrt(E): logits of std ~3 over the vocabulary, as
    # in released models (the tied token_embd serves as the output).
    add_(w, "token_embd.weight", matrix("token_embd", n_vocab, E) * np.float32(3.0), s["etype"])
    norm_(w, "output_norm", E)
    if s.get("untied"):
        add_(w, "output.weight", matrix("output", n_vocab, E) * np.float32(3.0), s["wtype"])
    if "llama3_rope" in s:
        # What llama.cpp's converter stores for llama3 rope scaling: 1 / the
        # per-frequency factor, in rope_freqs.weight ([head_dim / 2]).
        r = s["llama3_rope"]
        freqs = 1.0 / (s["rope_base"] ** (np.arange(0, D, 2, dtype=np.float32) / D))
        low_wl, high_wl = r["orig"] / r["low"], r["orig"] / r["high"]
        factors = []
        for f in freqs:
            wl = 2 * np.pi / f
            if wl < high_wl:
                factors.append(1.0)
            elif wl > low_wl:
                factors.append(r["factor"])
            else:
                sm = (r["orig"] / wl - r["low"]) / (r["high"] - r["low"])
                factors.append(1.0 / ((1 - sm) / r["factor"] + sm))
        add_(w, "rope_freqs.weight", np.array(factors, dtype=np.float32), Q.F32)
    if "longrope" in s:
        add_(w, "rope_factors_long.weight", 1.0 + np.abs(rng_for("rope_long").standard_normal(D // 2)).astype(np.float32) * 4, Q.F32)
        add_(w, "rope_factors_short.weight", 1.0 + np.abs(rng_for("rope_short").standard_normal(D // 2)).astype(np.float32) * 0.1, Q.F32)
    wt = s["wtype"]
    if "qwen35" in s:
        build_qwen35_layers(w, s, add_, norm_)
        L = 0
    for il in range(L):
        p = f"blk.{il}."
        norm_(w, p + "attn_norm", E)
        if s.get("fused"):
            add_(w, p + "attn_qkv.weight", matrix(p + "attn_qkv", (H + 2 * KV) * D, E), wt)
        else:
            add_(w, p + "attn_q.weight", matrix(p + "attn_q", H * D, E), wt)
            add_(w, p + "attn_k.weight", matrix(p + "attn_k", KV * D, E), wt)
            add_(w, p + "attn_v.weight", matrix(p + "attn_v", KV * D, E), wt)
        if s.get("qkv_bias"):
            for t, n in (("q", H * D), ("k", KV * D), ("v", KV * D)):
                add_(w, p + f"attn_{t}.bias", 0.1 * rng_for(p + t + "b").standard_normal(n).astype(np.float32), Q.F32)
        if s.get("qk_norm"):
            norm_(w, p + "attn_q_norm", D)
            norm_(w, p + "attn_k_norm", D)
        add_(w, p + "attn_output.weight", matrix(p + "attn_output", E, H * D), wt)
        if gem:
            norm_(w, p + "post_attention_norm", E)
        norm_(w, p + "ffn_norm", E)
        if "moe" in s:
            # Router rows of std 2/sqrt(E): logits of std ~2, so a few experts stand out;
            # expert matrices stacked [n_expert][rows][cols] (GGUF ne = cols, rows, n_expert).
            X, FE = s["moe"]["n_expert"], s["moe"]["n_ff_exp"]
            add_(w, p + "ffn_gate_inp.weight", matrix(p + "ffn_gate_inp", X, E) * np.float32(2.0), Q.F32)
            for t, (r, c) in (("gate", (FE, E)), ("up", (FE, E)), ("down", (E, FE))):
                stack = np.stack([matrix(p + f"ffn_{t}_exps.{x}", r, c) for x in range(X)])
                add_(w, p + f"ffn_{t}_exps.weight", stack, wt)
        elif s.get("fused"):
            add_(w, p + "ffn_up.weight", matrix(p + "ffn_up", 2 * F, E), wt)
        else:
            add_(w, p + "ffn_gate.weight", matrix(p + "ffn_gate", F, E), wt)
            add_(w, p + "ffn_up.weight", matrix(p + "ffn_up", F, E), wt)
        if "moe" not in s:
            add_(w, p + "ffn_down.weight", matrix(p + "ffn_down", E, F), wt)
        if gem:
            norm_(w, p + "post_ffw_norm", E)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return rec


def build_qwen35_layers(w, s, add_, norm_):
    """Qwen3.5's layers as llama.cpp's converter writes them: norms 1 + w, a
    recurrent layer's attn_qkv ([q | k | v] of all heads), attn_gate (z),
    ssm_conv1d [channels][d_conv], ssm_a = -exp(A_log), ssm_dt.bias,
    ssm_alpha / ssm_beta projections, ssm_norm (not shifted) and ssm_out; a
    full-attention layer's attn_q holding per head a query and an output gate.
    A_log and dt_bias at their initial range in the released models' code
    (A = exp(A_log) in [1, 16], softplus(dt_bias) in [0.001, 0.1]), so that the
    decay exp(-A softplus(alpha + dt_bias)) stays in a realistic (0, 1)."""
    q = s["qwen35"]
    E, F, L, wt = s["n_embd"], s["n_ff"], s["n_layer"], s["wtype"]
    H, KV, D = s["n_head"], s["n_head_kv"], s["head_dim"]
    DS, NK, NV, K = q["d_state"], q["n_k"], q["n_v"], q["d_conv"]
    VI, CH = DS * NV, 2 * DS * NK + DS * NV
    for il in range(L):
        p = f"blk.{il}."
        norm_(w, p + "attn_norm", E)
        if (il + 1) % q["interval"] != 0:
            add_(w, p + "attn_qkv.weight", matrix(p + "attn_qkv", CH, E), wt)
            add_(w, p + "attn_gate.weight", matrix(p + "attn_gate", VI, E), wt)
            add_(w, p + "ssm_conv1d.weight", matrix(p + "ssm_conv1d", CH, K), Q.F32)
            a_log = np.log(rng_for(p + "A_log").uniform(1.0, 16.0, NV))
            add_(w, p + "ssm_a", (-np.exp(a_log)).astype(np.float32), Q.F32)
            dt = rng_for(p + "dt").uniform(0.001, 0.1, NV)
            add_(w, p + "ssm_dt.bias", np.log(np.expm1(dt)).astype(np.float32), Q.F32)
            add_(w, p + "ssm_beta.weight", matrix(p + "ssm_beta", NV, E), wt)
            add_(w, p + "ssm_alpha.weight", matrix(p + "ssm_alpha", NV, E), wt)
            add_(w, p + "ssm_norm.weight", norm_weight(p + "ssm_norm", DS), Q.F32)
            add_(w, p + "ssm_out.weight", matrix(p + "ssm_out", E, VI), wt)
        else:
            add_(w, p + "attn_q.weight", matrix(p + "attn_q", 2 * H * D, E), wt)
            add_(w, p + "attn_k.weight", matrix(p + "attn_k", KV * D, E), wt)
            add_(w, p + "attn_v.weight", matrix(p + "attn_v", KV * D, E), wt)
            norm_(w, p + "attn_q_norm", D)
            norm_(w, p + "attn_k_norm", D)
            add_(w, p + "attn_output.weight", matrix(p + "attn_output", E, H * D), wt)
        norm_(w, p + "post_attention_norm", E)
        add_(w, p + "ffn_gate.weight", matrix(p + "ffn_gate", F, E), wt)
        add_(w, p + "ffn_up.weight", matrix(p + "ffn_up", F, E), wt)
        add_(w, p + "ffn_down.weight", matrix(p + "ffn_down", E, F), wt)


# GGUF name -> Hugging Face name (Qwen2/Llama checkpoints); per layer after "blk.N.".
HF_GLOBAL = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
             "output.weight": "lm_head.weight"}
HF_LAYER = {"attn_norm.weight": "input_layernorm.weight", "attn_q.weight": "self_attn.q_proj.weight",
            "attn_k.weight": "self_attn.k_proj.weight", "attn_v.weight": "self_attn.v_proj.weight",
            "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
            "attn_v.bias": "self_attn.v_proj.bias", "attn_output.weight": "self_attn.o_proj.weight",
            "ffn_norm.weight": "post_attention_layernorm.weight", "ffn_gate.weight": "mlp.gate_proj.weight",
            "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight"}


HF_LAYER_GEMMA3 = dict(HF_LAYER, **{
    "ffn_norm.weight": "pre_feedforward_layernorm.weight", "post_attention_norm.weight": "post_attention_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight", "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight"})


def hf_name(name, arch):
    if name in HF_GLOBAL:
        return HF_GLOBAL[name]
    _, il, rest = name.split(".", 2)
    return f"model.layers.{il}.{(HF_LAYER_GEMMA3 if arch == 'gemma3' else HF_LAYER)[rest]}"


@functools.lru_cache(maxsize=None)
def gguf_vocab(vocab):
    r = gguf.GGUFReader(os.path.join(TESTDATA, "llama-cpp-vocab", f"ggml-vocab-{vocab}.gguf"))
    get = lambda k: r.fields[k].contents() if k in r.fields else None  # noqa: E731
    return (get("tokenizer.ggml.tokens"), get("tokenizer.ggml.token_type"), get("tokenizer.ggml.merges"),
            get("tokenizer.ggml.bos_token_id"), get("tokenizer.ggml.eos_token_id"))


# The pre-tokenizer regex of each GGUF tokenizer.ggml.pre (as in the model's own tokenizer.json).
HF_SPLIT = {"qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                     r"|\s*[\r\n]+|\s+(?!\S)|\s+"}


def tokenizer_json(vocab, template):
    """A byte-level BPE tokenizer.json from llama.cpp's vocabulary GGUF: model.vocab
    holds the normal tokens, added_tokens the control (special) and user-defined
    ones, the merges as stored, the pre-tokenizer of the vocabulary's family."""
    toks, types, merges, _, _ = gguf_vocab(vocab)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": int(types[i]) == 3}
             for i, t in enumerate(toks) if int(types[i]) in (3, 4)]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": HF_SPLIT[vocab]},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                           "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(toks) if int(types[i]) == 1},
                  "merges": list(merges)},
    }


def write_hf(family, rec, out_dir):
    """The Hugging Face folder of a family marked `hf`: config.json,
    model.safetensors (F16, as the checkpoint the GGUF would be converted from),
    tokenizer.json and tokenizer_config.json (with the chat template)."""
    import json
    from safetensors.numpy import save_file
    s = FAMILIES[family]
    toks, types, merges, bos, eos = gguf_vocab(s["vocab"])
    os.makedirs(out_dir, exist_ok=True)
    cfg = {"architectures": ["Qwen2ForCausalLM"], "model_type": s["hf"], "hidden_size": s["n_embd"],
           "intermediate_size": s["n_ff"], "num_attention_heads": s["n_head"],
           "num_key_value_heads": s["n_head_kv"], "num_hidden_layers": s["n_layer"],
           "rms_norm_eps": s["eps"], "rope_theta": s["rope_base"], "max_position_embeddings": s["ctx"],
           "vocab_size": len(toks), "tie_word_embeddings": not s.get("untied"), "hidden_act": "silu",
           "torch_dtype": "float16", "bos_token_id": int(bos), "eos_token_id": int(eos)}
    if "gemma" in s:  # Gemma3ForCausalLM's keys (transformers 4.5x: layer_types)
        del cfg["hidden_act"]
        cfg.update({"architectures": ["Gemma3ForCausalLM"], "head_dim": s["head_dim"],
                    "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": s["head_dim"],
                    "sliding_window": s["gemma"]["swa"], "rope_local_base_freq": s["gemma"]["base_swa"],
                    "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention"
                                    for i in range(s["n_layer"])],
                    "final_logit_softcapping": None, "attn_logit_softcapping": None, "rope_scaling": None})
    tensors = {hf_name(k, s["arch"]): v.astype(np.float16) for k, v in rec.items()}
    with open(os.path.join(TESTDATA, "chat-templates", s["template"]), encoding="utf-8") as f:
        template = f.read()
    files = {
        "config.json": json.dumps(cfg, indent=1, sort_keys=True),
        **({"tokenizer.json": json.dumps(tokenizer_json(s["vocab"], template), ensure_ascii=False)}
           if s["vocab"] in HF_SPLIT else {}),
        "tokenizer_config.json": json.dumps({"chat_template": template, "bos_token": None,
                                             "eos_token": toks[int(eos)]}, ensure_ascii=False, indent=1),
    }
    for name, text in files.items():
        with open(os.path.join(out_dir, name + ".tmp"), "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(os.path.join(out_dir, name + ".tmp"), os.path.join(out_dir, name))
    tmp = os.path.join(out_dir, "model.safetensors.tmp")
    save_file(dict(sorted(tensors.items())), tmp, metadata={"format": "pt"})
    return tmp


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("family", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--list", action="store_true", help="print the families")
    ap.add_argument("--check", action="store_true", help="compare the SHA-256 with synthetic.sha256")
    ap.add_argument("--hf", metavar="DIR", help="also write the Hugging Face folder (families marked hf)")
    a = ap.parse_args()
    if a.list:
        print("\n".join(FAMILIES))
        return 0
    if a.family not in FAMILIES or not a.out:
        ap.error(f"need FAMILY ({', '.join(FAMILIES)}) and OUT")
    if a.hf and not FAMILIES[a.family].get("hf"):
        ap.error(f"{a.family} has no Hugging Face form")
    if a.hf:
        try:
            import safetensors  # noqa: F401
        except ImportError as e:  # the tests treat 77 as "skipped"
            print(f"skipped: {e} (pip install safetensors)", file=sys.stderr)
            return 77
    tmp = a.out + ".tmp"
    rec = build(a.family, tmp)
    outs = [(a.family, tmp, a.out)]
    if a.hf:
        st_tmp = write_hf(a.family, rec, a.hf)
        outs.append((a.family + ".safetensors", st_tmp, os.path.join(a.hf, "model.safetensors")))
    want = {}
    if a.check:
        with open(os.path.join(HERE, "synthetic.sha256")) as f:
            for line in f:
                if line.strip():
                    h, n = line.split()
                    want[n] = h
    for key, t, final in outs:
        digest = sha256(t)
        print(f"{final}: {os.path.getsize(t)} bytes, sha256 {digest}", file=sys.stderr)
        if a.check and want.get(key) != digest:
            for _, t2, _ in outs:
                os.remove(t2)
            print(f"error: {key}: sha256 {digest}, expected {want.get(key)} (numpy {np.__version__}); "
                  "nothing written: the goldens were made from the expected file", file=sys.stderr)
            return 1
    for _, t, final in outs:
        os.replace(t, final)
    return 0


if __name__ == "__main__":
    sys.exit(main())
