#!/usr/bin/env python3
"""How much llama.cpp's own logits move when only its KV cache precision
changes (F16 -> F32), on the golden prompts. tests/runtime/test_forward.c uses
these figures to justify its tolerances: our differences to llama.cpp should be
no larger than llama.cpp's differences to itself under this change.

Measured (llama-cpp-python 0.3.36, 2 threads):
  short max 1.384 rmse 0.261 flips 0
  code max 1.678 rmse 0.2907 flips 2 max gap of flip 0.135
  non_english max 2.3903 rmse 0.2984 flips 2 max gap of flip 0.360
  chatml max 1.8766 rmse 0.312 flips 0
  repeated max 1.1062 rmse 0.235 flips 1 max gap of flip 0.038
  long max 2.4303 rmse 0.2709 flips 23 max gap of flip 0.381
Usage: llamacpp_kv_sensitivity.py [MODEL]
"""
import json, numpy as np, sys
from llama_cpp import Llama
M=sys.argv[1] if len(sys.argv)>1 else '/root/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf'
prompts=json.load(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'prompts.json')))
res={}
for tk in (1,0):
    llm=Llama(model_path=M, logits_all=True, n_ctx=1024, n_batch=1024, n_threads=2, seed=0, verbose=False, type_k=tk, type_v=tk)
    for p in prompts:
        text=open(p['file']).read() if 'file' in p else p['text']
        toks=llm.tokenize(text.encode(), add_bos=False, special=True)[:p.get('max_tokens',10**9)]
        llm.reset(); llm.eval(toks)
        res[(tk,p['name'])]=np.array(llm.scores[:len(toks)])
    del llm
for p in prompts:
    a=res[(1,p['name'])]; b=res[(0,p['name'])]
    d=np.abs(a-b); top=np.sort(a,axis=1)
    gap=top[:,-1]-top[:,-2]
    flips=(a.argmax(1)!=b.argmax(1))
    print(p['name'], 'max', d.max().round(4), 'rmse', np.sqrt((d**2).mean()).round(4), 'flips', flips.sum(), 'max gap of flip', gap[flips].max() if flips.any() else 0)
