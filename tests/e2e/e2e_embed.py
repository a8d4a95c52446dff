#!/usr/bin/env python3
"""End-to-end checks of llm-embed (driver: stdlib only; numpy checks run in
the first interpreter found that has numpy: $LLM_PYTHON, this python, the
project venv; without numpy they are skipped with a visible message).

usage: e2e_embed.py LLM_EMBED MODEL
Prints PASS/FAIL per check; exit 0 / 1, or 77 (skip) without the model.

- lines -> JSONL: one record per non-blank line, ids = line numbers, dim 576,
  unit norm;
- lines -> .npy + .ids.txt: numpy loads a float32 [n][576] C-order matrix
  equal to the JSONL vectors; no temporary file is left behind;
- JSONL input keeps string ids; bad JSONL is an error and writes no output;
- search ranks a small labelled set: each query's nearest text is the one
  it paraphrases.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

FAILS = []
DIM = 576

TEXTS = [
    ("cat", "The cat is sleeping on the warm windowsill in the sun."),
    ("bank", "The central bank raised interest rates to fight inflation."),
    ("python", "Python is a programming language used to write software."),
    ("soup", "Tomato soup is cooked with onions, garlic and fresh basil."),
    ("football", "The football team won the championship match on Sunday."),
    ("rain", "Heavy rain and strong winds are expected in the city tomorrow."),
]
QUERIES = [
    ("A cat sleeps on a sunny windowsill.", "cat"),
    ("Interest rates were raised by the central bank.", "bank"),
    ("Tomorrow the city expects strong winds and heavy rain.", "rain"),
]


def check(name, cond, detail=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:1500]))
    if not cond:
        FAILS.append(name)


def run(args, stdin=b""):
    p = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def numpy_python():
    cands = [os.environ.get("LLM_PYTHON"), sys.executable,
             os.path.expanduser("~/.cache/llm/venv/bin/python")]
    for c in cands:
        if c and os.path.exists(c) and subprocess.run([c, "-c", "import numpy"], stdout=subprocess.DEVNULL,
                                                      stderr=subprocess.DEVNULL).returncode == 0:
            return c
    return None


NUMPY_CHECK = r"""
import json, sys
import numpy as np
npy, ids_path, jsonl, n, dim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
a = np.load(npy)
assert a.dtype == np.float32, a.dtype
assert a.shape == (n, dim), a.shape
assert a.flags['C_CONTIGUOUS']
norms = np.linalg.norm(a, axis=1)
assert np.allclose(norms, 1.0, atol=1e-5), norms
ids = open(ids_path).read().split("\n")[:-1]
assert len(ids) == n, ids
recs = [json.loads(l) for l in open(jsonl)]
b = np.array([r["embedding"] for r in recs], dtype=np.float32)
assert [str(r["id"]) for r in recs] == ids, (ids, [r["id"] for r in recs])
assert np.allclose(a, b, atol=1e-6), np.abs(a - b).max()
print("numpy: shape %s dtype %s norms ok, equals JSONL" % (a.shape, a.dtype))
"""


def main():
    exe, model = sys.argv[1], sys.argv[2]
    if not os.path.exists(model):
        print("SKIP: model not found: " + model)
        return 77
    base = [exe, "-m", model, "-t", "1", "-q"]
    d = tempfile.mkdtemp(prefix="llm_embed_e2e_")
    lines = os.path.join(d, "texts.txt")
    with open(lines, "w", encoding="utf-8") as f:
        for i, (_, t) in enumerate(TEXTS):
            f.write(t + "\n")
            if i == 2:
                f.write("\n")  # blank line: skipped, but its number is kept
    # JSONL on stdout
    rc, out, err = run(base + [lines])
    recs = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
    check("JSONL: exit 0", rc == 0, err)
    check("JSONL: one record per non-blank line", len(recs) == len(TEXTS), len(recs))
    check("JSONL: ids are line numbers", [r["id"] for r in recs] == [0, 1, 2, 4, 5, 6], [r.get("id") for r in recs])
    check("JSONL: dim", all(len(r["embedding"]) == DIM for r in recs))
    check("JSONL: unit norm", all(abs(math.sqrt(sum(x * x for x in r["embedding"])) - 1) < 1e-4 for r in recs))
    # .npy + ids and JSONL file
    npy = os.path.join(d, "index.npy")
    jl = os.path.join(d, "index.jsonl")
    rc, out, err = run(base + ["-o", npy, lines])
    check("npy: exit 0", rc == 0, err)
    rc2, _, err2 = run(base + ["-o", jl, lines])
    check("jsonl file: exit 0", rc2 == 0, err2)
    check("npy: ids file written", os.path.exists(os.path.join(d, "index.ids.txt")))
    check("no temporary files left", sorted(os.listdir(d)) == ["index.ids.txt", "index.jsonl", "index.npy",
                                                               "texts.txt"], os.listdir(d))
    with open(npy, "rb") as f:
        head = f.read(128)
    check("npy: header", head.startswith(b"\x93NUMPY\x01\x00") and b"'shape': (6, 576)" in head, head)
    py = numpy_python()
    if py:
        p = subprocess.run([py, "-c", NUMPY_CHECK, npy, os.path.join(d, "index.ids.txt"), jl, str(len(TEXTS)),
                            str(DIM)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        print(p.stdout.decode().strip())
        check("numpy reads the .npy with the right shape and values", p.returncode == 0)
    else:
        print("SKIP numpy check: no python with numpy found (set LLM_PYTHON or pip install numpy)")
    # JSONL input with string ids, and a bad record
    jin = os.path.join(d, "in.jsonl")
    with open(jin, "w", encoding="utf-8") as f:
        for tag, t in TEXTS:
            f.write(json.dumps({"id": tag, "text": t}) + "\n")
    rc, out, err = run(base + ["--jsonl", jin])
    ids = [json.loads(l)["id"] for l in out.splitlines()] if rc == 0 else []
    check("--jsonl keeps string ids", ids == [t for t, _ in TEXTS], err + str(ids))
    bad = os.path.join(d, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"id": 1, "text": "ok"}\n{"id": 2}\n')
    out_bad = os.path.join(d, "bad.npy")
    rc, out, err = run(base + ["--jsonl", "-o", out_bad, bad])
    check("bad JSONL: error, no output file", rc != 0 and "text" in err and not os.path.exists(out_bad) and
          not [f for f in os.listdir(d) if f.startswith(".")], err + str(os.listdir(d)))
    rc, out, err = run(base + ["--pooling", "median", lines])
    check("bad --pooling", rc != 0 and "pooling" in err, err)
    # search on a labelled set (ids are tags)
    tagged = os.path.join(d, "tagged.npy")
    rc, out, err = run(base + ["--jsonl", "-o", tagged, jin])
    check("tagged index: exit 0", rc == 0, err)
    for q, want in QUERIES:
        rc, out, err = run([exe, "search", "-m", model, "-t", "1", "--index", tagged, "--query", q, "-k", "3"])
        rows = [l.split("\t") for l in out.splitlines()]
        top = rows[0][1] if rows else None
        check("search '%s' -> %s" % (q, want), rc == 0 and top == want and len(rows) == 3, out + err)
    print("%d checks failed" % len(FAILS) if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
