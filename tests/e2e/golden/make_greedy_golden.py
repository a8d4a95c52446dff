#!/usr/bin/env python3
"""Greedy chat answers from llama.cpp (llama-cpp-python) for the engine/e2e tests.

Usage: make_greedy_golden.py MODEL.gguf OUT.json   (run with the project venv)

For each user prompt below, the conversation is rendered with the model's own
Jinja chat template (jinja2, add_generation_prompt=True), tokenized by
llama.cpp (add_bos=False, special=True), and llama.cpp generates N tokens by
eval + argmax, recording each step's gap between the two largest logits (a
small gap means float noise may legitimately pick the other token). The
stored answer is llama.cpp's detokenization of the answer up to the first
end-of-generation token.
"""
import json
import sys

import jinja2
import numpy as np
from gguf import GGUFReader
from llama_cpp import Llama

PROMPTS = [
    "What is the capital of France?",
    "Name three animals that live in the ocean.",
    "What is 2 + 2?",
    "List three primary colors.",
    "How many days are in a week?",
    "What is the boiling point of water in Celsius?",
    "What is photosynthesis?",
]
N = 48
GAP = 0.3  # tests/engine/test_engine.c NEAR_TIE


def main():
    model, out = sys.argv[1], sys.argv[2]
    r = GGUFReader(model)
    f = r.fields["tokenizer.chat_template"]
    tmpl = bytes(f.parts[f.data[0]]).decode("utf-8")
    env = jinja2.Environment()
    t = env.from_string(tmpl)
    llm = Llama(model_path=model, n_ctx=512, n_batch=512, n_threads=2, seed=0, verbose=False,
                logits_all=True)
    eog = {llm.token_eos()}
    res = []
    for p in PROMPTS:
        text = t.render(messages=[{"role": "user", "content": p}], add_generation_prompt=True)
        toks = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        llm.reset()
        llm.eval(toks)
        gen, gaps = [], []
        for _ in range(N):
            logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            order = np.argsort(-logits)
            tok = int(order[0])
            gen.append(tok)
            gaps.append(float(logits[order[0]] - logits[order[1]]))
            if tok in eog:
                break
            llm.eval([tok])
        ans = [x for x in gen if x not in eog]
        answer = llm.detokenize(ans).decode("utf-8", errors="replace")
        # The answer up to the first near-tie (top-2 gap < GAP): any correct
        # implementation must print exactly this much.
        k = next((i for i, g in enumerate(gaps) if g < GAP), len(gaps))
        safe = llm.detokenize([x for x in gen[:k] if x not in eog]).decode("utf-8", errors="ignore")
        res.append({"user": p, "rendered": text, "prompt_tokens": toks, "tokens": gen,
                    "gaps": gaps, "answer": answer, "safe_steps": k, "safe_text": safe,
                    "complete": k == len(gaps)})
    json.dump({"model": "SmolLM2-135M-Instruct.Q4_1.gguf", "n": N, "cases": res}, open(out, "w"),
              indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
