#!/usr/bin/env python3
"""Reference logits from llama.cpp (llama-cpp-python) for tests/runtime/test_forward.c.

Usage: make_logits_golden.py MODEL.gguf OUT.bin [--full last-of-first]
       (run with the AVX2 reference environment, scripts/golden/reference-venv.sh)

Goldens made with it: tests/runtime/data/logits_golden.bin (the default model)
and tests/runtime/data/gemma3_golden.bin (Gemma 3 270M Q4_K_M, --full
last-of-first: its 262144-token vocabulary makes a full row 1 MB).

For each prompt in prompts.json (next to this script) it stores llama.cpp's own
tokenization (add_bos=False, special=True), and for every position: the argmax,
the gap between the two largest logits, and the top-10 (id, logit); full-vocab
logits for a few positions; and llama.cpp's greedy continuation of N_CONT tokens
(eval + argmax loop, with each step's top-2 gap).

Binary layout (little-endian), magic "LLMLGLD1", u32 version 1:
  u32 n_prompts, u32 n_vocab, u32 topk, u32 n_cont
  per prompt:
    u32 name_len, name bytes
    u32 n_tokens, i32 tokens[n_tokens]
    per position: i32 argmax, f32 gap, i32 top_ids[topk], f32 top_logits[topk]
    u32 n_full, per full: i32 position, f32 logits[n_vocab]
    u32 n_cont, per step: i32 token, f32 gap
"""
import json
import os
import struct
import sys

import numpy as np
from llama_cpp import Llama

TOPK = 10
N_CONT = 64


def make_golden(model, prompts, n_cont=N_CONT, full_rows="last+middle", n_ctx=1024, **llama_kwargs):
    """The golden blob for `prompts` (dicts: name, text or file, max_tokens).
    full_rows: "last+middle" (the last position, and the middle one of prompts
    of 100+ tokens), "last-of-first" (only the first prompt's last
    position: for large vocabularies) or "none". n_ctx: the context llama.cpp
    runs with (phi3's LongRoPE factors depend on it). llama_kwargs go to
    Llama() (e.g. type_k, type_v, flash_attn for a quantized KV cache)."""
    llm = Llama(model_path=model, logits_all=True, n_ctx=n_ctx, n_batch=1024, n_threads=2,
                seed=0, verbose=False, **llama_kwargs)
    n_vocab = llm.n_vocab()
    blob = bytearray(b"LLMLGLD1")
    blob += struct.pack("<IIIII", 1, len(prompts), n_vocab, TOPK, n_cont)
    for pi, p in enumerate(prompts):
        if "file" in p:
            text = open(p["file"], encoding="utf-8").read()
        else:
            text = p["text"]
        toks = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if "max_tokens" in p:
            toks = toks[: p["max_tokens"]]
        llm.reset()
        llm.eval(toks)
        scores = np.array(llm.scores[: len(toks)], dtype=np.float32)  # [n][vocab]
        name = p["name"].encode()
        blob += struct.pack("<I", len(name)) + name
        blob += struct.pack("<I", len(toks)) + struct.pack("<%di" % len(toks), *toks)
        for row in scores:
            order = np.argsort(-row, kind="stable")[:TOPK]
            gap = float(row[order[0]] - row[order[1]])
            blob += struct.pack("<if", int(order[0]), gap)
            blob += struct.pack("<%di" % TOPK, *[int(i) for i in order])
            blob += struct.pack("<%df" % TOPK, *[float(row[i]) for i in order])
        if full_rows == "none":
            full = []
        elif full_rows == "last-of-first":
            full = [len(toks) - 1] if pi == 0 else []
        else:
            full = sorted({len(toks) - 1} | ({len(toks) // 2} if len(toks) >= 100 else set()))
        blob += struct.pack("<I", len(full))
        for pos in full:
            blob += struct.pack("<i", pos) + scores[pos].astype("<f4").tobytes()
        # Greedy continuation: argmax of the last logits, fed back one token at a time.
        blob += struct.pack("<I", n_cont)
        last = scores[-1]
        for _ in range(n_cont):
            order = np.argsort(-last, kind="stable")[:2]
            tok = int(order[0])
            blob += struct.pack("<if", tok, float(last[order[0]] - last[order[1]]))
            llm.eval([tok])
            last = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        print(f"{p['name']}: {len(toks)} tokens, full logits at {full}", file=sys.stderr)
    return blob


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--full", default="last+middle", choices=["last+middle", "last-of-first"],
                    help="which positions keep full-vocabulary rows (last-of-first for large vocabularies)")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    prompts = json.load(open(os.path.join(here, "prompts.json"), encoding="utf-8"))
    blob = make_golden(a.model, prompts, full_rows=a.full)
    with open(a.out, "wb") as f:
        f.write(blob)
    print(f"wrote {a.out}: {len(blob)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
