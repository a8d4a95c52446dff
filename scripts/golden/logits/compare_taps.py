#!/usr/bin/env python3
"""Compare two tensor dumps op by op: ours (llm-tap-dump) against llama.cpp (llamacpp_tap.py).

Usage (any python with numpy, e.g. /root/.cache/llm/venv/bin/python):
  compare_taps.py OURS_DIR THEIRS_DIR [--steps 0,2] [--layers 0-3] [--names Qcur,kqv_out]
                  [--after N] [--rows]

Walks OURS_DIR's entries in forward order (step, then layer, then stage) and,
for every (step, layer, name) both dumps have, prints max|diff|, the number of
differing elements and whether the two are bit-identical. The FIRST tensor
that is not bit-identical is marked '>>>' and detailed: which token rows
differ, the first differing elements (index, both values, their float hex and
bits, distance in ulps). --after N stops N tensors after it (default: all).
--rows prints per-row max|diff| for every non-identical tensor. Runs of
bit-identical tensors are collapsed into one line unless --all.

A whole run, e.g. the "short" prompt, prefill then the last 3 tokens decoded:
  PY=/root/.cache/llm/venv/bin/python; M=/root/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf
  $PY scripts/golden/logits/llamacpp_tap.py $M /tmp/lc --prompt short --decode-from -3
  build/bin/llm-tap-dump $M /tmp/lc/tokens.txt /tmp/ours --decode-from -3
  $PY scripts/golden/logits/compare_taps.py /tmp/ours /tmp/lc
llamacpp_tap.py tokenizes with llama.cpp (add_bos=False, special=True; any
prompt of prompts.json by name, or --text) and writes the ids to tokens.txt,
so both sides run the same tokens; --tokens FILE feeds it a given list.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np


def load(d):
    idx = json.load(open(os.path.join(d, "index.json"), encoding="utf-8"))
    ents = {(e["step"], e["layer"], e["name"]): e for e in idx["entries"]}
    return idx, ents


def arr(d, e):
    a = np.fromfile(os.path.join(d, e["file"]), dtype="<f4")
    return a.reshape(e["shape"])


def parse_set(spec):
    if not spec:
        return None
    out = set()
    for part in spec.split(","):
        a, _, b = part.lstrip().partition("-") if not part.startswith("-") else (part, "", "")
        out.update(range(int(a), int(b or a) + 1))
    return out


def fhex(x):
    x = np.float32(x)
    return "%s (0x%08x)" % (float(x).hex(), struct.unpack("<I", struct.pack("<f", x))[0])


def ulps(a, b):
    """Distance in units in the last place between float32 arrays (ordered-integer trick)."""
    ia = a.view(np.int32).astype(np.int64)
    ib = b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def detail(key, a, b, shape, n_show=8):
    rows = a.shape[0]
    diff_rows = [r for r in range(rows) if not np.array_equal(a[r].view(np.uint32), b[r].view(np.uint32))]
    print("    rows (tokens of this step) that differ: %s of %d" % (diff_rows, rows))
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    bad = np.nonzero(flat_a.view(np.uint32) != flat_b.view(np.uint32))[0]
    u = ulps(flat_a[bad], flat_b[bad])
    print("    differing elements: %d; ulps: median %d, max %d" % (len(bad), int(np.median(u)), int(u.max())))
    for i in bad[:n_show]:
        ix = np.unravel_index(i, shape)
        print("    [%s] ours %-13.9g %s  llama.cpp %-13.9g %s  (%d ulp)"
              % (",".join(map(str, ix)), flat_a[i], fhex(flat_a[i]), flat_b[i], fhex(flat_b[i]),
                 int(ulps(flat_a[i:i + 1], flat_b[i:i + 1])[0])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ours")
    ap.add_argument("theirs")
    ap.add_argument("--steps", default="")
    ap.add_argument("--layers", default="")
    ap.add_argument("--names", default="")
    ap.add_argument("--after", type=int, default=-1)
    ap.add_argument("--rows", action="store_true")
    ap.add_argument("--all", action="store_true", help="one line per tensor, identical ones too")
    args = ap.parse_args()
    oi, oe = load(args.ours)
    ti, te = load(args.theirs)
    if oi["tokens"] != ti["tokens"] or oi.get("decode_from") != ti.get("decode_from"):
        sys.exit("the dumps ran different tokens or steps: %s/%s vs %s/%s"
                 % (oi["tokens"], oi.get("decode_from"), ti["tokens"], ti.get("decode_from")))
    steps, layers = parse_set(args.steps), parse_set(args.layers)
    names = set(args.names.split(",")) if args.names else None
    print("ours: %s (kv %s, kernels %s)   theirs: %s (kv %s)   %d tokens, decode from %s"
          % (args.ours, oi.get("kv"), oi.get("kernels"), args.theirs, ti.get("kv"),
             len(oi["tokens"]), oi.get("decode_from")))
    print("%-5s %-5s %-12s %-14s %12s %9s  %s" % ("step", "layer", "name", "shape", "max|diff|",
                                                  "n_diff", "identical"))
    first, since, n_cmp = None, 0, 0
    run = []  # consecutive bit-identical keys not printed yet (collapsed unless --all)

    def flush():
        if run:
            print("      ... %d bit-identical: s%d l%d %s .. s%d l%d %s" % ((len(run),) + run[0] + run[-1]))
            run.clear()

    missing = [k for k in oe if k not in te]
    for key, e in oe.items():
        step, layer, name = key
        if key not in te or (steps and step not in steps) or (layers and layer not in layers) \
                or (names and name not in names):
            continue
        a, b = arr(args.ours, e), arr(args.theirs, te[key])
        if a.shape != b.shape:
            print("%-5d %-5d %-12s shape mismatch: ours %s, llama.cpp %s" % (step, layer, name, a.shape, b.shape))
            continue
        n_cmp += 1
        same = np.array_equal(a.view(np.uint32), b.view(np.uint32))
        nd = int(np.count_nonzero(a.view(np.uint32) != b.view(np.uint32)))
        md = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
        if same and not args.all:
            run.append(key)
            continue
        flush()
        mark = ">>> " if (not same and first is None) else ""
        print("%s%-5d %-5d %-12s %-14s %12.4g %9d  %s" % (mark, step, layer, name, "x".join(map(str, a.shape)),
                                                          md, nd, "yes" if same else "NO"))
        if not same and args.rows:
            r2 = a.reshape(a.shape[0], -1).astype(np.float64) - b.reshape(b.shape[0], -1)
            print("      per-row max|diff|: " + " ".join("%.3g" % v for v in np.abs(r2).max(axis=1)))
        if not same and first is None:
            first = key
            detail(key, a, b, a.shape)
        elif first is not None:
            since += 1
            if 0 <= args.after <= since:
                break
    flush()
    if missing:
        print("(in ours only: %d entries, e.g. %s)" % (len(missing), missing[:3]))
    if n_cmp == 0:
        sys.exit("no tensor in common: nothing compared")
    if first is None:
        print("all %d compared tensors are bit-identical" % n_cmp)
    else:
        print("first non-identical tensor: step %d, layer %d, %s" % first)


if __name__ == "__main__":
    main()
