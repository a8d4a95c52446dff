#!/usr/bin/env python3
"""Golden candidate sets from llama.cpp's own samplers (via llama-cpp-python).

For each case: deterministic logits over a small vocabulary, an optional
accepted-token history (for penalties), a sampler chain, and the candidate
set llama.cpp leaves after llama_sampler_apply() of each sampler in order
(ids and logits). tests/sampling/test_llama_golden.c runs our chain on the
same input and compares. Regenerate with:

    /root/.cache/llm/venv/bin/python tests/sampling/golden/make_llama_golden.py \
        > tests/sampling/golden/llama_samplers.txt

Line format (fields separated by ';'):
    name; spec[, spec...]; history ids; logits; out ids; out logits
spec is one of: top_k K | top_p P MIN_KEEP | min_p P MIN_KEEP |
typical P MIN_KEEP | temp T | penalties LAST_N REPEAT FREQ PRESENT |
bias TOKEN BIAS [TOKEN BIAS ...]
"""
import ctypes
import math
import random

import llama_cpp as L


def make(spec):
    f = spec.split()
    k = f[0]
    if k == "top_k":
        return L.llama_sampler_init_top_k(int(f[1]))
    if k == "top_p":
        return L.llama_sampler_init_top_p(float(f[1]), int(f[2]))
    if k == "min_p":
        return L.llama_sampler_init_min_p(float(f[1]), int(f[2]))
    if k == "typical":
        return L.llama_sampler_init_typical(float(f[1]), int(f[2]))
    if k == "temp":
        return L.llama_sampler_init_temp(float(f[1]))
    if k == "penalties":
        return L.llama_sampler_init_penalties(N_VOCAB, int(f[1]), float(f[2]), float(f[3]), float(f[4]))
    if k == "bias":
        pairs = [(int(f[i]), float(f[i + 1])) for i in range(1, len(f), 2)]
        arr = (L.llama_logit_bias * len(pairs))(*[L.llama_logit_bias(t, b) for t, b in pairs])
        return L.llama_sampler_init_logit_bias(N_VOCAB, len(pairs), arr)
    raise ValueError(spec)


def run(specs, logits, history):
    n = len(logits)
    data = (L.llama_token_data * n)(*[L.llama_token_data(i, logits[i], 0.0) for i in range(n)])
    arr = L.llama_token_data_array(data, n, -1, False)
    for spec in specs:
        smpl = make(spec)
        for t in history:
            L.llama_sampler_accept(smpl, t)
        L.llama_sampler_apply(smpl, ctypes.byref(arr))
        L.llama_sampler_free(smpl)
    return [(arr.data[i].id, arr.data[i].logit) for i in range(arr.size)]


N_VOCAB = 64


def f32(x):
    return ctypes.c_float(x).value


def logits_for(seed, scale=2.0):
    r = random.Random(seed)
    return [f32(r.gauss(0.0, scale)) for _ in range(N_VOCAB)]


CASES = [
    ("top_k_5", ["top_k 5"], [], 1),
    ("top_k_20", ["top_k 20"], [], 2),
    ("top_p_0.9", ["top_p 0.9 1"], [], 3),
    ("top_p_0.5", ["top_p 0.5 1"], [], 4),
    ("top_p_0.3_keep4", ["top_p 0.3 4"], [], 5),
    ("min_p_0.05", ["min_p 0.05 1"], [], 6),
    ("min_p_0.3", ["min_p 0.3 1"], [], 7),
    ("typical_0.9", ["typical 0.9 1"], [], 8),
    ("typical_0.5", ["typical 0.5 1"], [], 9),
    ("typical_0.2", ["typical 0.2 1"], [], 10),
    ("temp_0.7", ["temp 0.7"], [], 11),
    ("temp_1.6", ["temp 1.6"], [], 12),
    ("penalties", ["penalties 16 1.3 0.2 0.4"], [3, 5, 5, 7, 9, 9, 9, 11, 40, 63], 13),
    ("penalties_window", ["penalties 4 1.5 0.1 0.3"], [1, 2, 2, 3, 4, 4, 5, 6], 14),
    ("bias", ["bias 3 2.5 7 -inf 10 -1.25"], [], 15),
    ("usual_chain", ["penalties 64 1.1 0.1 0.1", "top_k 40", "top_p 0.95 1", "min_p 0.05 1",
                     "temp 0.8"], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 2, 3], 16),
    ("topk_then_typical", ["top_k 30", "typical 0.7 1"], [], 17),
]


def main():
    print("# llama.cpp sampler golden, llama-cpp-python %s; see make_llama_golden.py" % L.__version__)
    for name, specs, hist, seed in CASES:
        logits = logits_for(seed)
        out = run(specs, logits, hist)
        print("%s; %s; %s; %s; %s; %s" % (
            name, ", ".join(specs), " ".join(map(str, hist)),
            " ".join("%.9g" % x for x in logits),
            " ".join(str(i) for i, _ in out),
            " ".join("%.9g" % v for _, v in out)))


if __name__ == "__main__":
    main()
