#!/usr/bin/env python3
"""Sentence-embedding throughput: llm-embed against sentence-transformers on
the same model folder, the same CPU and thread count, in the same run
(interleaved, best of REPEATS each; the machine may be shared). Never in CI.

    HF_HUB_OFFLINE=1 /root/.cache/llm/venv-st/bin/python scripts/bench/embed_vs_st.py \\
        [--embed build/bin/llm-embed] [-m ~/.cache/llm/models/all-MiniLM-L6-v2] [-n 10000] [-t 2] [-r 2]

The N sentences are generated from a fixed seed (5 to 40 words each, like
short documents and queries). sentence-transformers encodes them with
batch_size 32 (its default; it sorts by length, so padding is small) and
torch limited to T threads; llm-embed reads them as a .jsonl file and writes
a .npy. Reports sentences/s for both, the ratio, and the largest cosine gap
between the two sets of vectors.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import tempfile
import time

import numpy as np

WORDS = ("the a of and to in is was for on with as by at from that this it be are river market engine garden "
         "patient library village network protocol theorem harvest satellite orchestra bridge mountain algorithm "
         "city model data system water energy music history science children weather food travel health money "
         "language computer software hardware memory light sound colour animal plant ocean forest desert "
         "running quickly slowly bright dark ancient modern small large important difficult simple").split()


def sentences(n, seed=1234):
    r = random.Random(seed)
    out = []
    for _ in range(n):
        k = r.randint(5, 40)
        s = " ".join(r.choice(WORDS) for _ in range(k))
        out.append(s[0].upper() + s[1:] + ".")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embed", default="build/bin/llm-embed")
    ap.add_argument("-m", "--model", default=os.path.expanduser("~/.cache/llm/models/all-MiniLM-L6-v2"))
    ap.add_argument("-n", type=int, default=10000)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-r", "--repeats", type=int, default=2)
    ap.add_argument("-b", "--batch", type=int, default=256, help="llm-embed texts per engine call")
    a = ap.parse_args()

    import torch
    torch.set_num_threads(a.threads)
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(a.model, device="cpu")
    texts = sentences(a.n)
    best_st = best_llm = cpu_st = cpu_llm = float("inf")

    def cpu(who):
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime
    with tempfile.TemporaryDirectory() as d:
        inp, out = os.path.join(d, "in.jsonl"), os.path.join(d, "out.npy")
        with open(inp, "w") as f:
            for i, t in enumerate(texts):
                f.write(json.dumps({"id": i, "text": t}) + "\n")
        for rep in range(a.repeats):
            t0, c0 = time.perf_counter(), cpu(resource.RUSAGE_SELF)
            ref = st.encode(texts, batch_size=32, convert_to_numpy=True)
            best_st = min(best_st, time.perf_counter() - t0)
            cpu_st = min(cpu_st, cpu(resource.RUSAGE_SELF) - c0)
            t0, c0 = time.perf_counter(), cpu(resource.RUSAGE_CHILDREN)
            p = subprocess.run([a.embed, "-q", "-t", str(a.threads), "-b", str(a.batch), "-m", a.model, "-o", out,
                                inp], capture_output=True, text=True)
            best_llm = min(best_llm, time.perf_counter() - t0)
            cpu_llm = min(cpu_llm, cpu(resource.RUSAGE_CHILDREN) - c0)
            if p.returncode != 0:
                raise SystemExit(p.stderr)
            print(f"round {rep + 1}: sentence-transformers {a.n / best_st:.0f}/s, llm-embed {a.n / best_llm:.0f}/s "
                  "(best so far)", flush=True)
        ours = np.load(out)
    cos = (ours * ref).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(ref, axis=1)
    print(f"{a.n} sentences, {a.threads} threads: sentence-transformers {best_st:.2f} s ({a.n / best_st:.0f}/s), "
          f"llm-embed {best_llm:.2f} s ({a.n / best_llm:.0f}/s, model load included): "
          f"{best_st / best_llm:.2f}x; CPU seconds {cpu_st:.1f} vs {cpu_llm:.1f} ({cpu_st / cpu_llm:.2f}x); "
          f"min cosine between them {cos.min():.7f}")


if __name__ == "__main__":
    main()
