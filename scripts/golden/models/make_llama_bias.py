#!/usr/bin/env python3
"""A small llama GGUF WITH biases, and llama.cpp's results on it.

  make_llama_bias.py gguf OUT.gguf      writes the model (needs numpy + gguf);
                                        exits 77 (CTest's "skipped") if either
                                        is missing, 1 if the bytes written do
                                        not hash to GGUF_SHA256 below
  make_llama_bias.py golden GGUF OUT    llama.cpp's (llama-cpp-python) results
                                        on it -> OUT (project venv)

The model has SmolLM2-135M's head layout (n_embd 576, 9 query heads and 3 KV
heads of 64, n_ff 1536, rope base 100000, rms eps 1e-5) with 2 layers and a
320-token SentencePiece-style vocabulary (3 specials + 256 byte tokens + 61
words), untied output. Weights are seeded random at a trained-like scale:
projections N(0, 1/sqrt(in)) quantized to Q5_0, token_embd F16, norms
1 + N(0, 0.1) in F32, and every optional bias llama.cpp's llama loads, in F32:
attn_q/k/v/output.bias (q and k large, as in Qwen-style checkpoints) and
ffn_gate/up/down.bias.

Why Q5_0: on the x86 host that made the golden (Xeon, AVX-512 + AMX),
llama.cpp is built -march=native and sends F16, Q4_0/Q4_1/Q8_0 and K-quant
matmuls to its AMX code (F32 activations for F16; Q8_0/Q4_1 crash in
ldtilecfg here), which no AVX2 build does. Q5_0 takes its plain path, whose
per-output order ours reproduces.

What llama.cpp gives (golden mode): for each prompt of token ids, the logits of
every position (Llama(logits_all=True)); and, for prompt TAP_PROMPT (9 tokens),
the FNV-1a 64 hash of the float bits of each layer-0 stage up to the FFN's
projections (Qcur, Kcur, Vcur, kqv_out, attn_out, ffn_inp, ffn_norm,
ffn_gate_b, ffn_up_b: everything the q/k/v/output and gate/up biases touch
before the first SwiGLU), captured by ../logits/llamacpp_tap.py. Stages after
the SwiGLU are left out: under that script's eval callback (2 threads)
llama.cpp's SwiGLU output differed from ours by 1-3 ulp on this host, while
the plain run's logits above equal ours bit for bit.

The generator is deterministic (numpy's PCG64 with a fixed seed, gguf's
quantizer and writer); tests/runtime regenerates the GGUF at test time and
checks its SHA-256 against GGUF_SHA256, so the committed golden (tests/runtime/
data/llama_bias_golden.bin) always belongs to the bytes under test. If a new
gguf package writes other bytes, the check fails: rerun both modes and update
GGUF_SHA256 and the golden together.

Golden layout (little-endian): magic "LLMBIAS1", u32 version 1, u32 n_vocab,
u32 n_prompts; per prompt: u32 n, i32 tokens[n], f32 logits[n][n_vocab]; then
u32 tap_prompt, u32 n_taps; per tap: u32 name_len, name, i32 layer,
u32 n_floats, u64 fnv1a64 of the floats' bytes, f32 first value.
"""
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

SEED = 20261123
GGUF_SHA256 = "832d8ab5948ac4a5a4e273442b451e0c70958d1690c5fd14968b97ba844d4510"  # gguf 0.19.0

N_EMBD, N_LAYER, N_HEAD, N_HEAD_KV, HEAD_DIM, N_FF = 576, 2, 9, 3, 64, 1536
N_VOCAB = 320
# Token id prompts (BOS = 1 first): lengths 1, 9 and 40 (the last spans
# llama.cpp's larger-batch matmul paths). Stages of prompt TAP_PROMPT, layer 0,
# whose float bits the golden pins by hash.
PROMPT_LENS = (1, 9, 40)
TAP_PROMPT = 1
TAP_STAGES = ("Qcur", "Kcur", "Vcur", "kqv_out", "attn_out", "ffn_inp", "ffn_norm", "ffn_gate_b", "ffn_up_b")


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for c in data:
        h ^= c
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def prompts():
    import numpy as np

    rng = np.random.default_rng(SEED + 1)
    return [[1] + [int(t) for t in rng.integers(3, N_VOCAB, n - 1)] for n in PROMPT_LENS]


def vocab():
    toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    toks += ["\u2581" + c for c in letters[:N_VOCAB - len(toks)]]
    toks += ["\u2581w%d" % i for i in range(N_VOCAB - len(toks))]
    types = [2, 3, 3] + [6] * 256 + [1] * (N_VOCAB - 259)  # unknown, control, byte, normal
    scores = [0.0] * 259 + [-float(i) for i in range(N_VOCAB - 259)]
    return toks, scores, types


def gguf_version():
    try:
        from importlib.metadata import version
        return version("gguf")
    except Exception:  # noqa: BLE001 -- only for the message
        return "?"


def build(path):
    try:
        import numpy as np
        import gguf
    except ImportError as e:
        print("make_llama_bias: %s: skipped (pip install numpy gguf)" % e, file=sys.stderr)
        sys.exit(77)
    rng = np.random.default_rng(SEED)

    def mat(n_out, n_in):  # GGUF ne = [n_in, n_out]
        f = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
        return gguf.quants.quantize(f, Q5_0), Q5_0

    Q5_0 = gguf.GGMLQuantizationType.Q5_0

    def vec(n, mean, std):
        return (mean + std * rng.standard_normal(n)).astype(np.float32)

    q, kv = N_HEAD * HEAD_DIM, N_HEAD_KV * HEAD_DIM
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(2048)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_rope_freq_base(100000.0)
    w.add_layer_norm_rms_eps(1e-5)
    toks, scores, types = vocab()
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_tensor("token_embd.weight", (0.5 * rng.standard_normal((N_VOCAB, N_EMBD))).astype(np.float16))
    add_mat = lambda name, m: w.add_tensor(name, m[0], raw_dtype=m[1])  # noqa: E731
    w.add_tensor("output_norm.weight", vec(N_EMBD, 1.0, 0.1))
    add_mat("output.weight", mat(N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        b = "blk.%d." % i
        w.add_tensor(b + "attn_norm.weight", vec(N_EMBD, 1.0, 0.1))
        add_mat(b + "attn_q.weight", mat(q, N_EMBD))
        add_mat(b + "attn_k.weight", mat(kv, N_EMBD))
        add_mat(b + "attn_v.weight", mat(kv, N_EMBD))
        add_mat(b + "attn_output.weight", mat(N_EMBD, q))
        w.add_tensor(b + "attn_q.bias", vec(q, 0.0, 1.0))
        w.add_tensor(b + "attn_k.bias", vec(kv, 0.0, 2.0))
        w.add_tensor(b + "attn_v.bias", vec(kv, 0.0, 0.2))
        w.add_tensor(b + "attn_output.bias", vec(N_EMBD, 0.0, 0.2))
        w.add_tensor(b + "ffn_norm.weight", vec(N_EMBD, 1.0, 0.1))
        add_mat(b + "ffn_gate.weight", mat(N_FF, N_EMBD))
        add_mat(b + "ffn_up.weight", mat(N_FF, N_EMBD))
        add_mat(b + "ffn_down.weight", mat(N_EMBD, N_FF))
        w.add_tensor(b + "ffn_gate.bias", vec(N_FF, 0.0, 0.2))
        w.add_tensor(b + "ffn_up.bias", vec(N_FF, 0.0, 0.2))
        w.add_tensor(b + "ffn_down.bias", vec(N_EMBD, 0.0, 0.2))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    if digest != GGUF_SHA256:
        print("make_llama_bias: %s has SHA-256 %s, expected %s: this gguf package (%s) writes other "
              "bytes; regenerate the golden (see the docstring)" % (path, digest, GGUF_SHA256,
                                                                    gguf_version()),
              file=sys.stderr)
        sys.exit(1)


def golden(model, out):
    import numpy as np
    from llama_cpp import Llama

    llm = Llama(model_path=model, logits_all=True, n_ctx=128, n_batch=128, n_threads=2, seed=0,
                verbose=False)
    assert llm.n_vocab() == N_VOCAB
    ps = prompts()
    blob = bytearray(b"LLMBIAS1") + struct.pack("<III", 1, N_VOCAB, len(ps))
    for toks in ps:
        llm.reset()
        llm.eval(toks)
        scores = np.array(llm.scores[: len(toks)], dtype="<f4")
        blob += struct.pack("<I", len(toks)) + struct.pack("<%di" % len(toks), *toks)
        blob += scores.tobytes()
    # Layer-0 stages of one prompt through llama.cpp's eval callback.
    here = os.path.dirname(os.path.abspath(__file__))
    tap = os.path.join(here, "..", "logits", "llamacpp_tap.py")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "tokens.txt"), "w") as f:
            f.write(" ".join(str(t) for t in ps[TAP_PROMPT]))
        subprocess.run([sys.executable, tap, model, os.path.join(d, "out"), "--tokens",
                        os.path.join(d, "tokens.txt"), "--layers", "0", "--no-attn-probs"], check=True)
        blob += struct.pack("<II", TAP_PROMPT, len(TAP_STAGES))
        for name in TAP_STAGES:
            raw = open(os.path.join(d, "out", "s0_l0_%s.f32" % name), "rb").read()
            nb = name.encode()
            blob += struct.pack("<I", len(nb)) + nb
            blob += struct.pack("<iIQf", 0, len(raw) // 4, fnv1a64(raw), struct.unpack_from("<f", raw)[0])
    open(out, "wb").write(blob)
    print("wrote %s: %d bytes" % (out, len(blob)), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "gguf":
        build(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "golden":
        golden(sys.argv[2], sys.argv[3])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
