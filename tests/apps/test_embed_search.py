#!/usr/bin/env python3
"""llm-embed with its default embedding model (no -m): retrieval on the 50
query/passage pairs of scripts/golden/embed/retrieval.jsonl through
`llm-embed -o X.npy` (a .jsonl input, read as JSONL without --jsonl) and
`llm-embed search`; recall@1 and every query's first passage must equal
sentence-transformers' (st_retrieval.json, from make_retrieval_golden.py).

usage: test_embed_search.py LLM_EMBED SOURCE_DIR
Exit 77 (skipped) when the default embedding model is absent.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    exe, src = sys.argv[1], sys.argv[2]
    models = os.environ.get("LLM_MODELS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ.get("HOME", "."), ".cache"), "llm", "models")
    if not os.path.isfile(os.path.join(models, "all-MiniLM-L6-v2", "config.json")):
        print("SKIP: all-MiniLM-L6-v2 not in %s (scripts/setup.sh)" % models)
        return 77
    env = dict(os.environ, LLM_MODELS_DIR=models)
    env.pop("LLM_EMBED_MODEL", None)
    gold = os.path.join(src, "scripts", "golden", "embed")
    recs = [json.loads(l) for l in open(os.path.join(gold, "retrieval.jsonl"), encoding="utf-8")]
    st = json.load(open(os.path.join(gold, "st_retrieval.json")))
    fails = 0
    with tempfile.TemporaryDirectory() as d:
        inp = os.path.join(d, "passages.jsonl")
        with open(inp, "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps({"id": r["id"], "text": r["passage"]}) + "\n")
        idx = os.path.join(d, "passages.npy")
        p = subprocess.run([exe, "-q", "-t", "2", "-o", idx, inp], env=env, capture_output=True, text=True)
        if p.returncode != 0 or "all-MiniLM-L6-v2 (bert" not in p.stderr:
            print("FAIL: index build:", p.returncode, p.stderr)
            return 1
        print("PASS: llm-embed without -m used all-MiniLM-L6-v2 and read the .jsonl as JSONL")
        top = []
        for r in recs:
            p = subprocess.run([exe, "search", "-t", "2", "--index", idx, "--query", r["query"], "-k", "1"], env=env,
                               capture_output=True, text=True)
            if p.returncode != 0 or "\t" not in p.stdout:
                print("FAIL: search:", r["query"], p.returncode, p.stderr)
                return 1
            top.append(int(p.stdout.split("\t")[1].strip().strip('"')))
        recall = sum(int(t == r["id"]) for t, r in zip(top, recs)) / len(recs)
        for q, (a, b) in enumerate(zip(top, st["top1"])):
            if a != b:
                fails += 1
                print("FAIL: query %d: first passage %d, sentence-transformers %d" % (q, a, b))
        ok = abs(recall - st["recall_at_1"]) < 1e-12
        print("%s: recall@1 %.3f, sentence-transformers %.3f" % ("PASS" if ok else "FAIL", recall, st["recall_at_1"]))
        fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
