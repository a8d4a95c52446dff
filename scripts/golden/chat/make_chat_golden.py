#!/usr/bin/env python3
"""Make the chat-template golden file tests/chat/golden/chat_golden.json.

The reference is Hugging Face transformers' own renderer
(transformers.utils.chat_template_utils.render_jinja_template: jinja2's
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, its
raise_exception / tojson / strftime_now helpers), applied to each model's real
template string (templates.py; SmolLM2's comes from the default model GGUF via
the gguf package). For every template and conversation we store the rendered
text, or that the template raised an error.

Usage (venv from COMMON.md):
    /root/.cache/llm/venv/bin/python scripts/golden/chat/make_chat_golden.py \
        [--model PATH.gguf] [--out tests/chat/golden/chat_golden.json]

strftime_now is pinned to FIXED_DATE so the golden file does not change with
the calendar; the C test passes the same date to the renderer.
"""
import argparse
import datetime as _dt
import json
import os
import sys

import gguf
import jinja2
import transformers.utils.chat_template_utils as ctu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from templates import EXTRA_TEMPLATES, TEMPLATES  # noqa: E402
from jinja_features import FEATURES, SYNTAX_ERRORS  # noqa: E402

FIXED_DATE = _dt.datetime(2025, 2, 7, 12, 0, 0)


class _FixedDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):  # noqa: D401 - strftime_now() calls datetime.now()
        return FIXED_DATE


ctu.datetime = _FixedDatetime  # the module imported the class by name

SYS = {"role": "system", "content": "You are a terse assistant."}
U1 = {"role": "user", "content": "Hello!"}
A1 = {"role": "assistant", "content": "Hi. How can I help?"}
U2 = {"role": "user", "content": "What is 2+2?"}
A2 = {"role": "assistant", "content": "4"}

CONVERSATIONS = [
    ("system_user", [SYS, U1], True),
    ("system_user_nogen", [SYS, U1], False),
    ("user_only", [U1], True),
    ("user_only_nogen", [U1], False),
    ("multi_turn_system", [SYS, U1, A1, U2], True),
    ("multi_turn_no_system", [U1, A1, U2], True),
    ("ends_with_assistant", [SYS, U1, A1, U2, A2], False),
    ("multiline_unicode", [
        {"role": "system", "content": "Réponds en français.\nSois bref."},
        {"role": "user", "content": "  Ligne 1\nLigne 2 — 日本語 😀\n\n  "},
        {"role": "assistant", "content": "\u00a0\u3000Voilà: ✓\n\t"},
        {"role": "user", "content": "\u2028Encore\u0085 une fois?\u000b"},
    ], True),
    ("whitespace_only", [{"role": "user", "content": " \n\t "}], True),
    ("empty_content", [{"role": "system", "content": ""},
                       {"role": "user", "content": ""}], True),
    ("system_only", [SYS], True),
    ("empty_conversation", [], True),
    ("two_users", [U1, U2], True),
    ("assistant_first", [A1, U1], True),
    ("second_system", [SYS, U1, A1, {"role": "system", "content": "Be kind."}, U2], True),
    ("tool_role", [U1, {"role": "assistant", "content": "Calling."},
                   {"role": "tool", "content": "{\"x\": 1}"}], True),
    ("unknown_role", [{"role": "developer", "content": "Dev note."}, U1], True),
    ("special_chars", [{"role": "user", "content": "{{ not jinja }} {% raw %} <|im_end|> [INST] \\n \"q\" 'a'"}], True),
]


def render(template, messages, agp, bos, eos):
    try:
        out, _ = ctu.render_jinja_template(
            conversations=[messages], chat_template=template,
            add_generation_prompt=agp, bos_token=bos, eos_token=eos)
        return {"expected": out[0]}
    except Exception as e:  # raise_exception, undefined, TypeError, ZeroDivisionError...
        return {"error": type(e).__name__ + ": " + str(e)}


def gguf_template(model_path):
    r = gguf.GGUFReader(model_path)
    f = r.fields["tokenizer.chat_template"]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.expanduser(
        "~/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--out", default=os.path.join(
        root, "tests", "chat", "golden", "chat_golden.json"))
    ap.add_argument("--testdata", default=os.path.normpath(os.path.join(root, "..", "shared", "testdata")))
    args = ap.parse_args()

    templates = [("smollm2-135m-instruct", "smollm2", "<|im_start|>", "<|im_end|>",
                  gguf_template(args.model),
                  "HuggingFaceTB/SmolLM2-135M-Instruct GGUF tokenizer.chat_template")]
    templates += [(n, fam, b, e, t, src) for (n, fam, b, e, t, src) in TEMPLATES]
    # microsoft/Phi-3-mini-4k-instruct: the template stored in llama.cpp's
    # vocab-only GGUF of it (shared test data), read with the gguf package.
    phi3 = os.path.join(args.testdata, "llama-cpp-vocab", "ggml-vocab-phi-3.gguf")
    templates.append(("phi-3-mini-4k-instruct", None, "<s>", "<|endoftext|>", gguf_template(phi3),
                      "microsoft/Phi-3-mini-4k-instruct via llama.cpp's ggml-vocab-phi-3.gguf"))
    templates += [(n, fam, b, e, t, src) for (n, fam, b, e, t, src) in EXTRA_TEMPLATES]

    doc = {
        "format": "llm-chat-golden",
        "version": 1,
        "generator": "scripts/golden/chat/make_chat_golden.py",
        "reference": "transformers %s render_jinja_template, jinja2 %s" % (
            __import__("transformers").__version__, jinja2.__version__),
        "date": FIXED_DATE.strftime("%Y-%m-%d"),
        "templates": [],
    }
    for name, family, bos, eos, tmpl, src in templates:
        cases = []
        for cname, msgs, agp in CONVERSATIONS:
            c = {"name": cname, "add_generation_prompt": agp, "messages": msgs}
            c.update(render(tmpl, msgs, agp, bos, eos))
            cases.append(c)
        doc["templates"].append({"name": name, "family": family, "source": src,
                                 "bos_token": bos, "eos_token": eos,
                                 "template": tmpl, "cases": cases})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fp:
        json.dump(doc, fp, ensure_ascii=False, indent=1)
        fp.write("\n")
    n = sum(len(t["cases"]) for t in doc["templates"])
    ne = sum(1 for t in doc["templates"] for c in t["cases"] if "error" in c)
    print("wrote %s: %d templates, %d cases (%d raise)" % (args.out, len(templates), n, ne))

    # Feature templates: one conversation with and without messages.
    feat = dict(doc, templates=[])
    convs = [("conversation", [SYS, U1, A1, {"role": "user", "content": "  What's up?\nLine 2  "}], True),
             ("empty", [], False)]
    for name, tmpl in FEATURES:
        cases = []
        for cname, msgs, agp in convs:
            if name in ("loop_namespace", "if_set_leaks") or cname == "conversation" or "messages" not in tmpl:
                c = {"name": cname, "add_generation_prompt": agp, "messages": msgs}
                c.update(render(tmpl, msgs, agp, "<s>", "</s>"))
                cases.append(c)
        feat["templates"].append({"name": name, "bos_token": "<s>", "eos_token": "</s>",
                                  "template": tmpl, "cases": cases})
    syn = []
    for name, tmpl in SYNTAX_ERRORS:
        try:
            ctu._compile_jinja_template(tmpl)
            raise SystemExit("expected a syntax error for " + name)
        except jinja2.exceptions.TemplateSyntaxError as e:
            syn.append({"name": name, "template": tmpl, "error": str(e)})
    feat["syntax_errors"] = syn
    out2 = os.path.join(os.path.dirname(args.out), "jinja_golden.json")
    with open(out2, "w", encoding="utf-8") as fp:
        json.dump(feat, fp, ensure_ascii=False, indent=1)
        fp.write("\n")
    n = sum(len(t["cases"]) for t in feat["templates"])
    ne = sum(1 for t in feat["templates"] for c in t["cases"] if "error" in c)
    print("wrote %s: %d feature templates, %d cases (%d raise), %d syntax errors" % (
        out2, len(feat["templates"]), n, ne, len(syn)))


if __name__ == "__main__":
    main()
