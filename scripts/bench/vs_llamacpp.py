#!/usr/bin/env python3
"""Prefill and decode tokens/s of llm (bench/runtime: llm-bench-runtime) and of
llama.cpp (llama-cpp-python) on the same model file and thread count, in the
same run, with ratios. Both use the same synthetic token ids.

Usage: vs_llamacpp.py [--bench BUILD/bin/llm-bench-runtime] [-m MODEL] [-t THREADS]
                      [-p PROMPT_TOKENS] [-n DECODE_TOKENS] [-r REPEATS]
Each figure is the best of REPEATS runs (the machine may be shared).
"""
import argparse
import os
import re
import subprocess
import time

from llama_cpp import Llama


def llamacpp(model, threads, n_prompt, n_decode):
    llm = Llama(model_path=model, n_ctx=n_prompt + n_decode + 8, n_batch=max(n_prompt, 32),
                n_threads=threads, n_threads_batch=threads, seed=0, verbose=False)
    toks = [100 + (i * 37) % 1000 for i in range(n_prompt + n_decode)]
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(toks[:n_prompt])
    tp = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(n_decode):
        llm.eval([toks[n_prompt + i]])
    td = time.perf_counter() - t0
    del llm
    return n_prompt / tp, n_decode / td


def ours(bench, model, threads, n_prompt, n_decode):
    out = subprocess.run([bench, "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_decode)],
                         check=True, capture_output=True, text=True).stdout
    pre = float(re.search(r"prefill \d+ tokens: ([\d.]+) tok/s", out).group(1))
    dec = float(re.search(r"decode \d+ tokens: ([\d.]+) tok/s", out).group(1))
    return pre, dec, out


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--bench", default=os.path.join(here, "../../build/bin/llm-bench-runtime"))
    ap.add_argument("-m", default=os.environ.get("LLM_DEFAULT_MODEL",
                    os.path.expanduser("~/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("-p", type=int, default=128)
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("-r", type=int, default=3)
    a = ap.parse_args()
    best_l = [0.0, 0.0]
    best_o = [0.0, 0.0]
    detail = ""
    for _ in range(a.r):
        lp, ld = llamacpp(a.m, a.t, a.p, a.n)
        op, od, detail = ours(a.bench, a.m, a.t, a.p, a.n)
        best_l = [max(best_l[0], lp), max(best_l[1], ld)]
        best_o = [max(best_o[0], op), max(best_o[1], od)]
    print(detail)
    print(f"model {a.m}, {a.t} threads, prompt {a.p}, decode {a.n}, best of {a.r}")
    print(f"{'':10s} {'llm':>10s} {'llama.cpp':>10s} {'ratio':>7s}")
    print(f"{'prefill':10s} {best_o[0]:10.1f} {best_l[0]:10.1f} {best_o[0] / best_l[0]:7.2f}  tok/s")
    print(f"{'decode':10s} {best_o[1]:10.1f} {best_l[1]:10.1f} {best_o[1] / best_l[1]:7.2f}  tok/s")


if __name__ == "__main__":
    main()
