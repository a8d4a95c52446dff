#!/usr/bin/env python3
"""Extract llama.cpp's GBNF test cases into JSON goldens for tests/grammar.

Reads (from llama-cpp-python 0.3.36's vendored llama.cpp):
  tests/test-grammar-integration.cpp  test_grammar(desc, grammar, {pass}, {fail})
                                      and the grammars its test_failure_* refuse
  tests/test-grammar-parser.cpp       verify_parsing(grammar, {symbols}, {elements})
                                      and verify_failure(grammar)
  grammars/*.gbnf                     example grammars that must parse
and writes
  tests/grammar/golden/integration_cases.json
  tests/grammar/golden/parser_cases.json

Test strings are lists of segments: a string is UTF-8 text, an integer is a
token id (llama.cpp's token(N) helper). The C++ sources are read with a
small lexer for the literals they use (raw strings, "..." with escapes,
char literals); nothing is executed.

Usage: extract_llamacpp_cases.py [LLAMA_CPP_DIR] [OUT_DIR]
"""
import json
import os
import sys

SOURCE = "llama-cpp-python 0.3.36 (vendor/llama.cpp)"
DEFAULT_REF = "/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp"
LICENSE = ("llama.cpp is MIT licensed, Copyright (c) 2023-2026 The ggml authors; "
           "the grammars and test strings below are quoted from it under that license.")


def unescape(body):
    out, i = bytearray(), 0
    simple = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e == "x":
            j = i + 2
            while j < len(body) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16) & 0xFF)
            i = j
        elif e in "01234567" and i + 2 < len(body) and body[i + 2] in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8) & 0xFF)
            i = j
        elif e in simple:
            out.append(simple[e])
            i += 2
        else:
            raise ValueError("unknown escape \\" + e)
    return bytes(out)


def lex(src):
    """Tokens: ('str', bytes), ('chr', int), ('id', name), ('num', int), ('p', ch)."""
    toks, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
        elif src.startswith("/*", i):
            i = src.index("*/", i) + 2
        elif c == "#":  # preprocessor line
            i = src.find("\n", i)
            i = n if i < 0 else i
        elif src.startswith('R"', i):
            d0 = i + 2
            d1 = src.index("(", d0)
            delim = ")" + src[d0:d1] + '"'
            end = src.index(delim, d1 + 1)
            toks.append(("str", src[d1 + 1:end].encode("utf-8")))
            i = end + len(delim)
        elif c == '"':
            j = i + 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            toks.append(("str", unescape(src[i + 1:j])))
            i = j + 1
        elif c == "'":
            j = i + 1
            while src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            b = unescape(src[i + 1:j])
            toks.append(("chr", b.decode("utf-8") and ord(b.decode("utf-8")) if len(b) > 0 else 0))
            i = j + 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            toks.append(("id", src[i:j]))
            i = j
        elif c.isdigit():
            j = i
            while j < n and (src[j].isalnum()):
                j += 1
            toks.append(("num", int(src[i:j].rstrip("uUlL"), 0)))
            i = j
        else:
            toks.append(("p", c))
            i += 1
    return toks


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else ("eof", None)

    def take(self, kind=None, val=None):
        tok = self.peek()
        if (kind and tok[0] != kind) or (val is not None and tok[1] != val):
            raise ValueError("expected %s %s, got %s" % (kind, val, tok))
        self.i += 1
        return tok

    def expr(self):
        """A string expression: a list of segments (bytes or token id)."""
        segs = []
        while True:
            tok = self.peek()
            if tok[0] == "str":
                self.i += 1
                segs.append(tok[1])
            elif tok == ("id", "token"):
                self.i += 1
                self.take("p", "(")
                segs.append(self.take("num")[1])
                self.take("p", ")")
            elif tok == ("id", "std") and self.peek(2) == ("id", "string"):
                self.i += 3  # std::string{...} is not used in the cases; std::string("x") is
                self.take("p", "(")
                segs += self.expr()
                self.take("p", ")")
                continue
            else:
                raise ValueError("unexpected %s in string expression" % (tok,))
            if self.peek() == ("p", "+"):
                self.i += 1
            elif self.peek()[0] == "str":  # adjacent literals concatenate
                continue
            else:
                break
        # merge adjacent byte segments
        out = []
        for s in segs:
            if isinstance(s, bytes) and out and isinstance(out[-1], bytes):
                out[-1] += s
            else:
                out.append(s)
        return out

    def str_list(self):
        self.take("p", "{")
        items = []
        while self.peek() != ("p", "}"):
            items.append(self.expr())
            if self.peek() == ("p", ","):
                self.i += 1
        self.take("p", "}")
        return items

    def pair_list(self):
        """{ {a, b}, ... } of (str|id, num|chr|id) pairs; values as ints or names."""
        self.take("p", "{")
        items = []
        while self.peek() != ("p", "}"):
            self.take("p", "{")
            a = self.take()
            self.take("p", ",")
            b = self.take()
            self.take("p", "}")
            items.append((a, b))
            if self.peek() == ("p", ","):
                self.i += 1
        self.take("p", "}")
        return items


def seg_json(segs):
    return [s.decode("utf-8") if isinstance(s, bytes) else s for s in segs]


def text(segs):
    assert len(segs) == 1 and isinstance(segs[0], bytes), segs
    return segs[0].decode("utf-8")


def extract_integration(path):
    toks = lex(open(path, encoding="utf-8").read())
    p = Parser(toks)
    cases, refuse, func = [], [], None
    strings = {}
    # functions whose named grammars llama.cpp refuses (missing root, undefined rule, left recursion,
    # root name not defined)
    refusing = {"test_failure_missing_root", "test_failure_missing_reference", "test_failure_left_recursion",
                "test_custom_root_symbol_check"}
    while p.i < len(toks):
        tok = p.peek()
        if tok[0] == "id" and tok[1].startswith("test_") and p.peek(1) == ("p", "(") and p.peek(-1) == ("id", "void"):
            func = tok[1]
            p.i += 1
            continue
        if tok == ("id", "test_grammar") and p.peek(1) == ("p", "(") and p.peek(-1) != ("id", "void"):
            p.i += 2
            desc = text(p.expr())
            p.take("p", ",")
            grammar = text(p.expr())
            p.take("p", ",")
            passing = p.str_list()
            p.take("p", ",")
            failing = p.str_list()
            p.take("p", ")")
            cases.append({"desc": desc, "grammar": grammar,
                          "pass": [seg_json(s) for s in passing], "fail": [seg_json(s) for s in failing]})
            continue
        if (tok == ("id", "string") and p.peek(1)[0] == "id" and p.peek(2) == ("p", "=")
                and func in refusing):
            name = p.peek(1)[1]
            p.i += 3
            g = text(p.expr())
            strings[name] = g
            # the custom-root check's second grammar defines only `foobar`: refused with root "root"
            refuse.append({"from": func, "grammar": g})
            continue
        p.i += 1
    return cases, refuse


def extract_parser(path):
    toks = lex(open(path, encoding="utf-8").read())
    p = Parser(toks)
    ok, refuse = [], []
    while p.i < len(toks):
        tok = p.peek()
        if tok == ("id", "verify_failure") and p.peek(1) == ("p", "(") and p.peek(2)[0] == "str":
            p.i += 2
            refuse.append({"grammar": text(p.expr())})
            p.take("p", ")")
            continue
        if tok == ("id", "verify_parsing") and p.peek(1) == ("p", "(") and p.peek(2)[0] == "str":
            p.i += 2
            grammar = text(p.expr())
            p.take("p", ",")
            symbols = {a[1].decode("utf-8"): b[1] for a, b in p.pair_list()}
            p.take("p", ",")
            elems = []
            for a, b in p.pair_list():
                assert a[0] == "id" and a[1].startswith("LLAMA_GRETYPE_"), a
                elems.append([a[1][len("LLAMA_GRETYPE_"):], b[1]])
            p.take("p", ")")
            ok.append({"grammar": grammar, "symbols": symbols, "elements": elems})
            continue
        p.i += 1
    return ok, refuse


def main():
    ref = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_REF
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "..", "tests", "grammar", "golden")
    os.makedirs(out, exist_ok=True)
    header = {"source": SOURCE, "license": LICENSE,
              "generator": "scripts/golden/grammar/extract_llamacpp_cases.py"}

    cases, refuse = extract_integration(os.path.join(ref, "tests", "test-grammar-integration.cpp"))
    doc = dict(header, file="tests/test-grammar-integration.cpp",
               note="pass/fail strings: segments, a string is UTF-8 text, an integer a token id",
               cases=cases, refuse=refuse)
    with open(os.path.join(out, "integration_cases.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")

    ok, prefuse = extract_parser(os.path.join(ref, "tests", "test-grammar-parser.cpp"))
    gdir = os.path.join(ref, "grammars")
    files = [{"name": n, "grammar": open(os.path.join(gdir, n), encoding="utf-8").read()}
             for n in sorted(os.listdir(gdir)) if n.endswith(".gbnf")]
    doc = dict(header, file="tests/test-grammar-parser.cpp and grammars/*.gbnf",
               note="parse: symbols (name -> rule id) and the rules' elements in rule-id order",
               parse=ok, refuse=prefuse, grammar_files=files)
    with open(os.path.join(out, "parser_cases.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("integration: %d cases, %d refusals; parser: %d parses, %d refusals, %d files"
          % (len(cases), len(refuse), len(ok), len(prefuse), len(files)))


if __name__ == "__main__":
    main()
