#!/usr/bin/env python3
"""Extract llama.cpp's JSON-Schema-to-grammar test cases into a golden file.

Reads tests/test-json-schema-to-grammar.cpp of the llama.cpp vendored in
llama-cpp-python 0.3.36 and writes tests/grammar/golden/schema_cases.json:
every test({STATUS, "name", schema, grammar}) call of test_all(), in file
order, with the schema and the expected grammar as the C++ string literals
spell them (raw strings kept verbatim; the expected grammar is compared after
llama.cpp's own trim(), see tests/grammar/schema_golden_test.c).

The two checks written directly in main() (a pre-parsed document, and
build_grammar() on a sub-schema) go through C++ APIs we do not have and are
not extracted.

Usage:
    scripts/golden/grammar/schema_extract_llamacpp_cases.py \
        [--src /work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp] \
        [--out tests/grammar/golden/schema_cases.json]
"""
import argparse
import hashlib
import json
import os
import re
import sys

SOURCE_VERSION = "llama-cpp-python 0.3.36 (vendor/llama.cpp)"
TEST_FILE = "tests/test-json-schema-to-grammar.cpp"


def read_literal(text, i):
    """Reads one C++ string literal (raw or ordinary) at text[i:], possibly
    followed by adjacent literals (concatenation). Returns (value, end)."""
    out = []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if text.startswith('R"', i):
            j = text.index("(", i + 2)
            delim = text[i + 2:j]
            end = text.index(")" + delim + '"', j + 1)
            out.append(text[j + 1:end])
            i = end + len(delim) + 2
        elif i < len(text) and text[i] == '"':
            i += 1
            s = []
            esc = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}
            while text[i] != '"':
                if text[i] == "\\":
                    s.append(esc[text[i + 1]])
                    i += 2
                else:
                    s.append(text[i])
                    i += 1
            out.append("".join(s))
            i += 1
        else:
            if not out:
                raise ValueError("string literal expected at offset %d" % i)
            return "".join(out), i


def expect(text, i, token):
    while text[i].isspace():
        i += 1
    if not text.startswith(token, i):
        raise ValueError("%r expected at offset %d, found %r" % (token, i, text[i:i + 20]))
    return i + len(token)


def extract(src):
    cases = []
    for m in re.finditer(r"\btest\(\{", src):
        i = m.end()
        while src[i].isspace():
            i += 1
        st = re.match(r"(SUCCESS|FAILURE)", src[i:])
        if not st:
            raise ValueError("status expected at offset %d" % i)
        i = expect(src, i + st.end(), ",")
        name, i = read_literal(src, i)
        i = expect(src, i, ",")
        schema, i = read_literal(src, i)
        i = expect(src, i, ",")
        grammar, i = read_literal(src, i)
        cases.append({"name": name, "status": st.group(1), "schema": schema, "grammar": grammar})
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default="/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
    ap.add_argument("--out", default="tests/grammar/golden/schema_cases.json")
    a = ap.parse_args()
    path = os.path.join(a.src, TEST_FILE)
    with open(path, "rb") as f:
        raw = f.read()
    cases = extract(raw.decode("utf-8"))
    for c in cases:  # every schema must be JSON, as llama.cpp parses it
        json.loads(c["schema"])
    doc = {
        "source": SOURCE_VERSION,
        "file": TEST_FILE,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "generator": "scripts/golden/grammar/schema_extract_llamacpp_cases.py",
        "note": "expected grammars are compared after llama.cpp's trim(): leading and trailing "
                "whitespace of the whole text and leading spaces/tabs of each line removed",
        "cases": cases,
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    n_ok = sum(1 for c in cases if c["status"] == "SUCCESS")
    print("%d cases (%d SUCCESS, %d FAILURE) -> %s" % (len(cases), n_ok, len(cases) - n_ok, a.out),
          file=sys.stderr)


if __name__ == "__main__":
    main()
