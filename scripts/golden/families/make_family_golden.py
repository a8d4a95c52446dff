#!/usr/bin/env python3
"""Reference outputs from llama.cpp for the synthetic family models.

Usage (the project venv, with llama-cpp-python 0.3.36 built for AVX2 without
AVX-512: see scripts/golden/README or the issue notes):
    make_family_golden.py [FAMILY ...]        default: every family of make_synthetic.py

For each family it writes the model (make_synthetic.build, into
$LLM_MODELS_DIR/synthetic/ or ~/.cache/llm/models/synthetic/) and, next to
this script, golden/FAMILY.bin in the format of
scripts/golden/logits/make_logits_golden.py (llama.cpp's tokens, top-10 logits
of every position, full-vocabulary logits of the first prompt's last position,
and a 32-token greedy continuation per prompt), and golden/FAMILY.chat.json:
the model's own chat template rendered by jinja2 the way transformers'
apply_chat_template does, and llama.cpp's tokens for that text.

Prompts: short, non-English, a chat-formatted conversation rendered from the
file's template, and 500 tokens of /usr/share/common-licenses/GPL-3. The
goldens run llama.cpp with n_ctx 1024; a family with LongRoPE (phi3) gets a
second one, golden/FAMILY.longctx.bin, with n_ctx 8192 (above its original
context of 4096, so llama.cpp takes rope_factors_long instead of _short).
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from llama_cpp import Llama

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "logits"))
import make_synthetic  # noqa: E402
from make_logits_golden import make_golden  # noqa: E402

N_CONT = 32
LONG_CTX = 8192  # families with LongRoPE: a second golden at this context (long factors)
CONVERSATION = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "Wie spät ist es in Tokio? 東京の天気は？"},
    {"role": "assistant", "content": "I cannot see a clock, but Tokyo is UTC+9."},
    {"role": "user", "content": "Then write {{ a }} haiku about {% raw %} braces."},
]


def render(template, messages, bos, eos):
    """As transformers' apply_chat_template: a sandboxed jinja2 environment
    with trim_blocks, lstrip_blocks, loop controls, raise_exception, tojson
    (ensure_ascii False) and strftime_now."""
    def raise_exception(msg):
        raise jinja2.exceptions.TemplateError(msg)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime(2026, 1, 2).strftime(fmt)
    return env.from_string(template).render(messages=messages, add_generation_prompt=True,
                                            bos_token=bos, eos_token=eos)


def main():
    families = sys.argv[1:] or list(make_synthetic.FAMILIES)
    models = os.path.join(os.environ.get("LLM_MODELS_DIR", os.path.expanduser("~/.cache/llm/models")),
                          "synthetic")
    os.makedirs(models, exist_ok=True)
    os.makedirs(os.path.join(HERE, "golden"), exist_ok=True)
    for fam in families:
        path = os.path.join(models, f"{fam}.gguf")
        make_synthetic.build(fam, path)
        llm = Llama(model_path=path, vocab_only=True, verbose=False)
        meta = llm.metadata
        tokens = lambda key: meta.get(key)
        bos = llm.detokenize([int(meta["tokenizer.ggml.bos_token_id"])], special=True).decode() \
            if "tokenizer.ggml.bos_token_id" in meta else ""
        eos = llm.detokenize([int(meta["tokenizer.ggml.eos_token_id"])], special=True).decode() \
            if "tokenizer.ggml.eos_token_id" in meta else ""
        chat = render(meta["tokenizer.chat_template"], CONVERSATION, bos, eos)
        chat_tokens = llm.tokenize(chat.encode(), add_bos=False, special=True)
        with open(os.path.join(HERE, "golden", f"{fam}.chat.json"), "w", encoding="utf-8") as f:
            json.dump({"messages": CONVERSATION, "bos_token": bos, "eos_token": eos,
                       "text": chat, "tokens": chat_tokens}, f, ensure_ascii=False, indent=1)
        del llm
        prompts = [
            {"name": "short", "text": "The capital of France is"},
            {"name": "non_english", "text": "La Tour Eiffel est une tour de fer puddlé de 330 mètres. "
                                            "東京は日本の首都です。Москва — столица России."},
            {"name": "chat", "text": chat},
            {"name": "long", "file": "/usr/share/common-licenses/GPL-3", "max_tokens": 500},
        ]
        if "moe" in make_synthetic.FAMILIES[fam]:
            # Longer than a prefill chunk (the net's max_batch and llama.cpp's n_ubatch are
            # 512): its second chunk routes its own tokens; 44 KV blocks of 16.
            prompts.append({"name": "longer", "file": "/usr/share/common-licenses/GPL-3", "max_tokens": 700})
        blob = make_golden(path, prompts, n_cont=N_CONT, full_rows="last-of-first")
        out = os.path.join(HERE, "golden", f"{fam}.bin")
        with open(out, "wb") as f:
            f.write(blob)
        print(f"{fam}: wrote {out} ({len(blob)} bytes), model sha256 {make_synthetic.sha256(path)}",
              file=sys.stderr)
        if "longrope" in make_synthetic.FAMILIES[fam]:
            # The same prompts with a context above the original one
            # (LONG_CTX > longrope.orig): llama.cpp then takes rope_factors_long.
            blob = make_golden(path, prompts, n_cont=N_CONT, full_rows="last-of-first", n_ctx=LONG_CTX)
            out = os.path.join(HERE, "golden", f"{fam}.longctx.bin")
            with open(out, "wb") as f:
                f.write(blob)
            print(f"{fam}: wrote {out} ({len(blob)} bytes), n_ctx {LONG_CTX}", file=sys.stderr)


if __name__ == "__main__":
    main()
