#!/usr/bin/env python3
"""HF tokenizers' ids for the small Unigram tokenizer.json with an added
special token outside model.vocab that test_tok_unigram_json.c embeds
(UGM_ADDED there): prints them for the test's expected arrays.
  - special tokens extracted (our LLM_TOKENIZE_PARSE_SPECIAL);
  - encode_special_tokens = True (our default: special text is plain text,
    and the added token, not being a model piece, is not in the trie).

Usage (a venv with `tokenizers`): python make_unigram_added_golden.py
"""
import json

from tokenizers import Tokenizer


def added(content, i):
    return {"id": i, "content": content, "special": True, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False}


DOC = {"model": {"type": "Unigram", "unk_id": 0,
                 "vocab": [["<unk>", 0.0], ["\u2581", -1.0], ["x", -3.0], ["y", -2.0]]},
       "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
       "added_tokens": [added("xy", 4), added("<unk>", 0)]}

if __name__ == "__main__":
    print(json.dumps(DOC))
    tok = Tokenizer.from_str(json.dumps(DOC))
    for text in ["xy <unk>", "a xy"]:
        tok.encode_special_tokens = False
        a = tok.encode(text, add_special_tokens=False).ids
        tok.encode_special_tokens = True
        b = tok.encode(text, add_special_tokens=False).ids
        print("%r: special extracted %s, special as text %s" % (text, a, b))
