#!/usr/bin/env python3
"""Goldens for max and mean_sqrt_len pooling on all-MiniLM-L6-v2.

No model at hand ships these pooling modes, so this builds them the way a
sentence-transformers folder states them: a copy of the model folder (files
linked, not copied) whose 1_Pooling/config.json turns on
pooling_mode_max_tokens or pooling_mode_mean_sqrt_len_tokens instead of the
mean, and whose modules.json drops the Normalize module (so the pooled
vectors themselves are compared: after a normalization mean_sqrt_len would
equal mean), loaded by SentenceTransformer itself (Transformer, Pooling).
tests/engine/test_embed_bert.c builds the same folders.

Run in a venv with sentence-transformers (never in CI):

    HF_HUB_OFFLINE=1 /root/.cache/llm/venv-st/bin/python \\
        scripts/golden/embed/make_pooling_golden.py ~/.cache/llm/models/all-MiniLM-L6-v2

Writes next to it, for every 10th text of sentences.jsonl (20 texts, short
to past 256 tokens):

  st_pool_max.npy            float32 [20][384]
  st_pool_mean_sqrt_len.npy  float32 [20][384]
  st_pool_meta.json          versions, the texts' indices
"""
import json
import os
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
MODES = {"max": "pooling_mode_max_tokens", "mean_sqrt_len": "pooling_mode_mean_sqrt_len_tokens"}


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/llm/models/all-MiniLM-L6-v2")
    folder = os.path.abspath(folder)
    texts = [json.loads(l)["text"] for l in open(os.path.join(here, "sentences.jsonl"), encoding="utf-8")]
    idx = list(range(0, len(texts), 10))
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    for name, key in MODES.items():
        with tempfile.TemporaryDirectory() as d:
            for f in os.listdir(folder):
                if f not in ("1_Pooling", "modules.json"):
                    os.symlink(os.path.join(folder, f), os.path.join(d, f))
            mods = [m for m in json.load(open(os.path.join(folder, "modules.json"))) if "Normalize" not in m["type"]]
            json.dump(mods, open(os.path.join(d, "modules.json"), "w"), indent=2)
            os.mkdir(os.path.join(d, "1_Pooling"))
            cfg = json.load(open(os.path.join(folder, "1_Pooling", "config.json")))
            for k in MODES.values():
                cfg[k] = False
            cfg["pooling_mode_mean_tokens"] = False
            cfg[key] = True
            json.dump(cfg, open(os.path.join(d, "1_Pooling", "config.json"), "w"), indent=2)
            model = SentenceTransformer(d, device="cpu")
            emb = model.encode([texts[i] for i in idx], batch_size=16, convert_to_numpy=True).astype(np.float32)
            np.save(os.path.join(here, f"st_pool_{name}.npy"), emb)
    meta = {
        "model": os.path.basename(folder.rstrip("/")),
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "texts": idx,
        "modes": MODES,
    }
    json.dump(meta, open(os.path.join(here, "st_pool_meta.json"), "w"), indent=1)
    print(meta)


if __name__ == "__main__":
    main()
