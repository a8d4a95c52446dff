#!/usr/bin/env python3
"""llama.cpp's logits for Gemma 3 270M over 4,096 positions, for
tests/engine/test_engine_gemma3_window.c (the sliding-window KV release).

Usage (the AVX2 reference environment, scripts/golden/reference-venv.sh):
  make_gemma3_window_golden.py MODEL.gguf OUT.bin [TEXT]
  (MODEL: gemma-3-270m-q4_k_m.gguf; TEXT: /usr/share/common-licenses/GPL-3)

What it runs: the first N_PROMPT tokens of TEXT (llama.cpp's tokenization,
with BOS), evaluated in chunks of N_CHUNK tokens, then N_GEN greedy steps
(argmax, one token per eval), so that 4,096 positions are computed in all
and the last logits are those of position 4095.

llama.cpp runs with swa_full=True: its window layers' cache then has n_ctx
cells filled in position order, as ours is read (without it, the window
cache holds 512 + n_ubatch cells padded to 256 and wraps after ~1024
tokens: the cells, and so the order of the attention sums, are no longer in
position order and the last bits of the logits can differ). The window
itself (what each query sees) is the same either way.

Binary layout (little-endian), magic "LLMGSWA1", u32 version 1:
  u32 n_ctx, u32 n_chunk, u32 n_prompt, i32 tokens[n_prompt]
  u32 topk_ck, u32 n_ck, per checkpoint (the last token of each chunk):
      i32 position, i32 top_ids[topk_ck], f32 top_logits[topk_ck]
  u32 n_gen, per step: i32 token, f32 gap (top1 - top2 of the logits it came from)
  u32 topk_final, i32 position, i32 top_ids[topk_final], f32 top_logits[topk_final]
      (the logits after the last generated token, position n_prompt + n_gen - 1)
"""
import struct
import sys

import numpy as np
from llama_cpp import Llama

N_CTX = 4096
N_CHUNK = 256
N_GEN = 64
N_PROMPT = N_CTX - N_GEN
TOPK_CK = 8
TOPK_FINAL = 64


def top(row, k):
    order = np.argsort(-row, kind="stable")[:k]
    return [int(i) for i in order], [float(row[i]) for i in order]


def main():
    model, out = sys.argv[1], sys.argv[2]
    text_path = sys.argv[3] if len(sys.argv) > 3 else "/usr/share/common-licenses/GPL-3"
    llm = Llama(model_path=model, n_ctx=N_CTX, n_batch=N_CHUNK, n_ubatch=N_CHUNK, n_threads=2, seed=0,
                swa_full=True, verbose=False)
    n_vocab = llm.n_vocab()
    text = open(text_path, encoding="utf-8").read()
    toks = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    assert len(toks) >= N_PROMPT, f"{text_path}: only {len(toks)} tokens"
    toks = toks[:N_PROMPT]

    def last_logits():
        return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).astype(np.float32).copy()

    blob = bytearray(b"LLMGSWA1") + struct.pack("<IIII", 1, N_CTX, N_CHUNK, N_PROMPT)
    blob += struct.pack("<%di" % N_PROMPT, *toks)
    cks = []
    llm.reset()
    for i in range(0, N_PROMPT, N_CHUNK):
        chunk = toks[i:i + N_CHUNK]
        llm.eval(chunk)
        cks.append((i + len(chunk) - 1, *top(last_logits(), TOPK_CK)))
    blob += struct.pack("<II", TOPK_CK, len(cks))
    for pos, ids, vals in cks:
        blob += struct.pack("<i", pos) + struct.pack("<%di" % TOPK_CK, *ids) + struct.pack("<%df" % TOPK_CK, *vals)
    row = last_logits()
    blob += struct.pack("<I", N_GEN)
    for _ in range(N_GEN):
        ids, vals = top(row, 2)
        blob += struct.pack("<if", ids[0], vals[0] - vals[1])
        llm.eval([ids[0]])
        row = last_logits()
    assert llm.n_tokens == N_CTX
    ids, vals = top(row, TOPK_FINAL)
    blob += struct.pack("<Ii", TOPK_FINAL, N_CTX - 1) + struct.pack("<%di" % TOPK_FINAL, *ids)
    blob += struct.pack("<%df" % TOPK_FINAL, *vals)
    with open(out, "wb") as f:
        f.write(blob)
    print(f"wrote {out}: {len(blob)} bytes; final argmax {ids[0]} gap {vals[0] - vals[1]:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
