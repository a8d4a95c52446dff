#!/usr/bin/env python3
"""llama.cpp's own difference between splits of the same tokens on the synthetic
qwen3moe model: a 40-token prompt then greedy decode steps, against one cold
prefill of the prompt and the decoded tokens (the check of
tests/engine/test_engine_kv_identity.c qwen3moe_prefill_then_decode_vs_longer_prefill,
which prints our figures: they are the same). A measurement, not a golden.

Usage: ~/.cache/llm/venv-avx2/bin/python moe_split_check.py [MODEL.gguf]
(default ~/.cache/llm/models/synthetic/qwen3moe.gguf, as make_family_golden.py writes it).
Output with llama-cpp-python 0.3.36 (AVX2): max|diff| 0, 0.524889, 0.477499, 0.142738,
0.131664, 0.122141 for 1..6 decode steps.
"""
import os
import sys

import numpy as np
from llama_cpp import Llama
text = ("The quick brown fox jumps over the lazy dog while the cat watches from the "
        "window, thinking about dinner, the weather, and whether the mail will arrive "
        "before noon or after the long walk through the park near the river bank.")
path = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/llm/models/synthetic/qwen3moe.gguf")
def mk():
    return Llama(model_path=path, n_ctx=256, n_batch=256, n_threads=2, verbose=False, logits_all=False)
llm = mk()
p = llm.tokenize(text.encode(), add_bos=False)[:40]
llm.eval(p)
steps = []
for i in range(6):
    lg = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()
    tok = int(np.argmax(lg))
    p.append(tok)
    llm.eval([tok])
    steps.append(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy())
del llm
for i in range(6):
    l2 = mk()
    l2.eval(p[:40 + i + 1])
    lb = np.ctypeslib.as_array(l2._ctx.get_logits(), shape=(l2.n_vocab(),)).copy()
    print(f"llama.cpp: prompt + {i+1} decode steps vs one prefill of {40+i+1}: max|diff| {np.abs(steps[i]-lb).max():g}")
    del l2
