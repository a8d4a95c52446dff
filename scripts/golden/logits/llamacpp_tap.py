#!/usr/bin/env python3
"""Dump llama.cpp's per-layer intermediate tensors (llama-cpp-python, eval callback).

Usage (project venv, /root/.cache/llm/venv/bin/python):
  llamacpp_tap.py MODEL.gguf OUTDIR (--prompt NAME | --text TEXT | --tokens FILE)
                  [--decode-from K] [--layers 0,3,28-29] [--kv f16|f32] [--threads 2]
                  [--logits] [--no-attn-probs] [--check-untapped]

Tokens: --prompt NAME takes the text of that entry of prompts.json (next to this
script) and tokenizes it as llama.cpp does (llama_tokenize with add_special=False,
parse_special=True, i.e. llm.tokenize(text, add_bos=False, special=True));
--tokens FILE reads ids (any separators, e.g. the tokens.txt this script
writes). The ids used are written to OUTDIR/tokens.txt, to give to
llm-tap-dump (tests/runtime/tools/llm_tap_dump.c) for the same run on our side.

Context as in make_logits_golden.py: n_ctx = n_batch = n_ubatch = 1024, flash
attention disabled, F16 K/V (--kv), 2 threads, every token an output (so the
last layer keeps all rows). Step 0 decodes tokens [0, K) in one llama_decode;
each remaining token is then one llama_decode (a negative K counts from the
end); default K = all tokens.

Captured per layer l, by llama.cpp's callback names "<name>-<l>": attn_norm,
Qcur and Kcur (the last tensor of that name in the graph: after RoPE), Vcur,
kqv_out (attention output before Wo), attn_out, ffn_inp, ffn_norm, ffn_gate_b and
ffn_up_b (only in models with FFN biases), ffn_swiglu,
ffn_out, l_out; plus kq and kq_soft_max (unless --no-attn-probs), and
result_norm (layer -1). --logits adds result_output [rows][n_vocab] (from
llama_get_logits). Views and F16 tensors are read through their strides and
written as contiguous float32 [token][features] (kq, kq_soft_max, which ggml
holds as [n_head][n_tokens][n_kv], become [n_tokens][n_head][n_kv], n_kv being
llama.cpp's padded cache length: entries past the positions attended are
masked, so kq_soft_max is 0 there and kq is whatever the cache cell holds).

Output format: the one llm-tap-dump writes (see compare_taps.py):
OUTDIR/index.json {"source": "llama.cpp", "tokens": [...], "entries": [{"step",
"layer", "name", "shape", "file"}, ...]} and one raw float32 file per entry.

--check-untapped decodes the same steps in a second context without the
callback and checks that the logits are bit-identical, i.e. that computing the
graph in pieces for the callback did not change llama.cpp's numerics.
"""
import argparse
import ctypes
import json
import os
import re
import sys

import numpy as np
import llama_cpp as L

# Kept alive for the process: llama.cpp keeps the pointer.
_QUIET = L.llama_log_callback(lambda level, text, user: None)
HERE = os.path.dirname(os.path.abspath(__file__))

STAGES = ["attn_norm", "Qcur", "Kcur", "Vcur", "kq", "kq_soft_max", "kqv_out", "attn_out",
          "ffn_inp", "ffn_norm", "ffn_gate_b", "ffn_up_b", "ffn_swiglu", "ffn_out", "l_out",
          # qwen35 (Gated DeltaNet and gated attention layers)
          "linear_attn_qkv_mixed", "z", "beta_sigmoid", "alpha", "a_softplus", "gate", "conv_output_raw",
          "conv_output_silu", "q_conv_predelta", "k_conv_predelta", "v_conv_predelta", "attn_output",
          "final_output", "linear_attn_out", "attn_residual", "attn_post_norm", "Qcur_normed", "Kcur_normed",
          "attn_pregate", "attn_gated"]
GGML_TYPE_F32, GGML_TYPE_F16 = 0, 1


class GgmlTensor(ctypes.Structure):
    """struct ggml_tensor of the vendored ggml (ggml/include/ggml.h)."""
    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


assert ctypes.sizeof(GgmlTensor) == 336, ctypes.sizeof(GgmlTensor)


def parse_layers(spec):
    if not spec:
        return None
    out = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def read_tokens(path):
    return [int(x) for x in re.findall(r"\d+", open(path, encoding="utf-8").read())]


def tensor_to_numpy(t):
    """Copy of a (possibly strided, F32 or F16) host tensor as float32, ggml order reversed."""
    dtype = {GGML_TYPE_F32: np.float32, GGML_TYPE_F16: np.float16}.get(t.type)
    if dtype is None:
        raise ValueError("tensor %s has ggml type %d" % (t.name.decode(), t.type))
    ne = [int(x) for x in t.ne]
    nb = [int(x) for x in t.nb]
    span = sum((n - 1) * s for n, s in zip(ne, nb)) + np.dtype(dtype).itemsize
    raw = (ctypes.c_char * span).from_address(t.data)
    arr = np.ndarray(shape=tuple(reversed(ne)), dtype=dtype, buffer=raw, offset=0,
                     strides=tuple(reversed(nb)))
    return np.array(arr, dtype=np.float32)  # [ne3][ne2][ne1][ne0], contiguous copy


class Tap:
    def __init__(self, layers, attn_probs):
        self.layers = layers
        self.want = set(STAGES if attn_probs else [s for s in STAGES if s not in ("kq", "kq_soft_max")])
        self.got = {}    # (name, layer) -> array of this step (last in graph order wins)
        self.order = []  # first-seen order of (name, layer) in this step
        self.error = None

    def wanted(self, full):
        if full == "result_norm":
            return "result_norm", -1
        name, sep, layer = full.rpartition("-")
        if not sep or not layer.isdigit() or name not in self.want:
            return None
        layer = int(layer)
        if self.layers is not None and layer not in self.layers:
            return None
        return name, layer

    def __call__(self, tp, ask, _user):
        try:
            t = ctypes.cast(tp, ctypes.POINTER(GgmlTensor)).contents
            key = self.wanted(t.name.decode("utf-8", "replace"))
            if key is None:
                return False
            if ask:
                return True
            if key not in self.got:
                self.order.append(key)
            self.got[key] = tensor_to_numpy(t)
        except Exception as e:  # never let an exception cross into C
            self.error = e
        return True


def to_rows(name, arr):
    """Our layout: [rows][...] with rows = this step's tokens."""
    assert arr.shape[0] == 1, (name, arr.shape)
    a = arr[0]                                 # [ne2][ne1][ne0]
    if name in ("kq", "kq_soft_max"):          # [n_head][n_tokens][n_kv] -> [n_tokens][n_head][n_kv]
        return np.ascontiguousarray(a.transpose(1, 0, 2))
    if name in ("Qcur", "Kcur", "Vcur"):       # after the reshape: 3-D
        return a                               # [n_tokens][n_head][head_dim]
    return a.reshape(-1, a.shape[-1])          # [n_tokens][features]


def make_context(model, args, cb):
    cp = L.llama_context_default_params()
    cp.n_ctx = 1024
    cp.n_batch = 1024
    cp.n_ubatch = 1024
    cp.n_seq_max = 1
    cp.n_threads = args.threads
    cp.n_threads_batch = args.threads
    cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_DISABLED
    kv = GGML_TYPE_F16 if args.kv == "f16" else GGML_TYPE_F32
    cp.type_k = kv
    cp.type_v = kv
    cp.no_perf = True
    if cb is not None:
        cp.cb_eval = cb
        cp.cb_eval_user_data = None
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        sys.exit("llama_init_from_model failed")
    return ctx


def steps_of(n, k):
    out = [(0, k)]
    out += [(i, i + 1) for i in range(k, n)]
    return out


def decode(ctx, tokens, a, b, n_vocab):
    m = b - a
    batch = L.llama_batch_init(m, 0, 1)
    try:
        for i in range(m):
            batch.token[i] = tokens[a + i]
            batch.pos[i] = a + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = 1
        batch.n_tokens = m
        rc = L.llama_decode(ctx, batch)
        if rc != 0:
            sys.exit("llama_decode returned %d" % rc)
        lp = L.llama_get_logits(ctx)
        return np.ctypeslib.as_array(lp, shape=(m * n_vocab,)).reshape(m, n_vocab).copy()
    finally:
        L.llama_batch_free(batch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("outdir")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="name of an entry of prompts.json")
    src.add_argument("--text")
    src.add_argument("--tokens", help="file of token ids")
    ap.add_argument("--decode-from", type=int, default=None)
    ap.add_argument("--layers", default="")
    ap.add_argument("--kv", choices=["f16", "f32"], default="f16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--logits", action="store_true")
    ap.add_argument("--no-attn-probs", action="store_true")
    ap.add_argument("--check-untapped", action="store_true")
    args = ap.parse_args()

    L.llama_backend_init()
    L.llama_log_set(_QUIET, None)
    mp = L.llama_model_default_params()
    model = L.llama_model_load_from_file(args.model.encode(), mp)
    if not model:
        sys.exit("cannot load %s" % args.model)
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)

    if args.tokens:
        tokens = read_tokens(args.tokens)
    else:
        text = args.text
        if args.prompt:
            prompts = {p["name"]: p for p in json.load(open(os.path.join(HERE, "prompts.json"),
                                                            encoding="utf-8"))}
            p = prompts[args.prompt]
            text = open(p["file"], encoding="utf-8").read() if "file" in p else p["text"]
        raw = text.encode("utf-8")
        buf = (L.llama_token * (len(raw) + 8))()
        n = L.llama_tokenize(vocab, raw, len(raw), buf, len(buf), False, True)
        if n < 0:
            sys.exit("tokenize failed")
        tokens = list(buf[:n])
        if args.prompt and "max_tokens" in prompts[args.prompt]:
            tokens = tokens[: prompts[args.prompt]["max_tokens"]]
    n = len(tokens)
    if not 1 <= n <= 1024:
        sys.exit("need 1..1024 tokens, have %d" % n)
    k = n if args.decode_from is None else args.decode_from
    if k < 0:
        k += n
    if not 1 <= k <= n:
        sys.exit("--decode-from out of range")

    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "tokens.txt"), "w") as f:
        f.write(" ".join(map(str, tokens)) + "\n")

    tap = Tap(parse_layers(args.layers), not args.no_attn_probs)
    cb = L.ggml_backend_sched_eval_callback(tap)
    ctx = make_context(model, args, cb)
    entries = []
    all_logits = []
    for step, (a, b) in enumerate(steps_of(n, k)):
        tap.got, tap.order = {}, []
        logits = decode(ctx, tokens, a, b, n_vocab)
        if tap.error:
            raise tap.error
        all_logits.append(logits)
        items = [(key, to_rows(key[0], tap.got[key])) for key in tap.order]
        if args.logits:
            items.append((("result_output", -1), logits))
        for (name, layer), arr in items:
            lname = "lm1" if layer < 0 else str(layer)
            fname = "s%d_l%s_%s.f32" % (step, lname, name)
            arr.astype("<f4").tofile(os.path.join(args.outdir, fname))
            entries.append({"step": step, "layer": layer, "name": name,
                            "shape": list(arr.shape), "file": fname})
    L.llama_free(ctx)

    index = {"source": "llama.cpp", "model": args.model, "threads": args.threads, "kv": args.kv,
             "decode_from": k, "tokens": tokens, "entries": entries}
    with open(os.path.join(args.outdir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    print("llamacpp_tap: %d tensors, %d tokens (decode from %d) -> %s"
          % (len(entries), n, k, args.outdir), file=sys.stderr)

    if args.check_untapped:
        ctx = make_context(model, args, None)
        same = all(np.array_equal(decode(ctx, tokens, a, b, n_vocab).view(np.uint32),
                                  lg.view(np.uint32))
                   for (a, b), lg in zip(steps_of(n, k), all_logits))
        L.llama_free(ctx)
        print("llamacpp_tap: logits with and without the callback are %s"
              % ("bit-identical" if same else "DIFFERENT"), file=sys.stderr)
        if not same:
            sys.exit(1)
    L.llama_model_free(model)


if __name__ == "__main__":
    main()
