#!/usr/bin/env python3
"""llama.cpp's perplexity of a text, scored the way llm-perplexity (and
llama.cpp's perplexity tool) score it: non-overlapping windows of CTX tokens,
each from an empty cache, scoring positions CTX/2 .. CTX-2 (logits at j predict
token j+1); BOS replaces the first token of each window if the model adds BOS.

Usage: llamacpp_perplexity.py MODEL TEXT_FILE [CTX] [THREADS] [--dump-tokens OUT]
--dump-tokens writes llama.cpp's token ids (for llm-perplexity --tokens).
"""
import math
import sys
import time

import numpy as np
from llama_cpp import Llama


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dump = None
    if "--dump-tokens" in sys.argv:
        dump = sys.argv[sys.argv.index("--dump-tokens") + 1]
        args.remove(dump)
    model, path = args[0], args[1]
    ctx = int(args[2]) if len(args) > 2 else 512
    threads = int(args[3]) if len(args) > 3 else 2
    llm = Llama(model_path=model, logits_all=True, n_ctx=ctx, n_batch=ctx, n_threads=threads,
                seed=0, verbose=False)
    text = open(path, encoding="utf-8").read()
    toks = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    add_bos = llm.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
    if dump:
        open(dump, "w").write(" ".join(map(str, toks)) + "\n")
    n_win = len(toks) // ctx
    nll, cnt, t0 = 0.0, 0, time.time()
    for w in range(n_win):
        win = list(toks[w * ctx:(w + 1) * ctx])
        if add_bos:
            win[0] = llm.token_bos()
        llm.reset()
        llm.eval(win)
        logits = np.array(llm.scores[:ctx], dtype=np.float64)
        for j in range(ctx // 2, ctx - 1):
            row = logits[j]
            mx = row.max()
            nll += math.log(np.exp(row - mx).sum()) - (row[win[j + 1]] - mx)
            cnt += 1
        print(f"[{w + 1}/{n_win}] ppl {math.exp(nll / cnt):.4f}", file=sys.stderr)
    el = time.time() - t0
    print(f"{len(toks)} tokens, {n_win} windows; {n_win * ctx / el:.1f} tokens/s", file=sys.stderr)
    print(f"perplexity: {math.exp(nll / cnt):.4f}")


if __name__ == "__main__":
    main()
