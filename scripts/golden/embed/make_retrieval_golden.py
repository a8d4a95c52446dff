#!/usr/bin/env python3
"""sentence-transformers' retrieval on the 50 query/passage pairs of
retrieval.jsonl (written for this test), for tests/apps/test_embed_search.py.
Run in the sentence-transformers venv (never in CI):

    HF_HUB_OFFLINE=1 /root/.cache/llm/venv-st/bin/python \\
        scripts/golden/embed/make_retrieval_golden.py ~/.cache/llm/models/all-MiniLM-L6-v2

Writes st_retrieval.json: for each query the id of the passage
sentence-transformers ranks first (cosine similarity of its normalized
embeddings) and its recall@1 (the fraction of queries whose own passage is
first).
"""
import json
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/llm/models/all-MiniLM-L6-v2")
    from sentence_transformers import SentenceTransformer
    recs = [json.loads(l) for l in open(os.path.join(here, "retrieval.jsonl"), encoding="utf-8")]
    m = SentenceTransformer(folder, device="cpu")
    q = m.encode([r["query"] for r in recs], convert_to_numpy=True)
    p = m.encode([r["passage"] for r in recs], convert_to_numpy=True)
    sim = q @ p.T
    top = [int(recs[j]["id"]) for j in sim.argmax(axis=1)]
    recall = sum(int(t == r["id"]) for t, r in zip(top, recs)) / len(recs)
    json.dump({"top1": top, "recall_at_1": recall}, open(os.path.join(here, "st_retrieval.json"), "w"))
    print("recall@1", recall)


if __name__ == "__main__":
    main()
