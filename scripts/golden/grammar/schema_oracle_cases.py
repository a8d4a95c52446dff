#!/usr/bin/env python3
"""More JSON Schema -> GBNF goldens, converted by llama.cpp itself.

Builds llama.cpp's converter (common/json-schema-to-grammar.cpp and what it
needs, from the llama.cpp vendored in llama-cpp-python 0.3.36) with g++ into
a small stdin -> stdout program, runs it over the schemas below (hand-written
edge cases, then seeded random schemas) and writes
tests/grammar/golden/schema_oracle_cases.json: for each case its name, the
schema text, llama.cpp's status (SUCCESS / FAILURE) and grammar (or error;
when llama.cpp's output is not valid UTF-8, "grammar" is null and
"grammar_bytes" holds the bytes as Latin-1 code points).
tests/grammar/schema_golden_test.c compares our converter with every case;
the cases where we deliberately differ are listed there with the reason.

Usage:
    scripts/golden/grammar/schema_oracle_cases.py \
        [--src /work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp] \
        [--out tests/grammar/golden/schema_oracle_cases.json]
Needs g++ (C++17); takes a minute or two to compile.
"""
import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile

SOURCE_VERSION = "llama-cpp-python 0.3.36 (vendor/llama.cpp)"

STUBS = r'''
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
std::string string_join(const std::vector<std::string> & v, const std::string & sep) {
    std::string r; for (size_t i = 0; i < v.size(); i++) { if (i) r += sep; r += v[i]; } return r; }
std::vector<std::string> string_split(const std::string & s, const std::string & d) {
    std::vector<std::string> p; size_t a = 0, e = s.find(d);
    while (e != std::string::npos) { p.push_back(s.substr(a, e - a)); a = e + d.length(); e = s.find(d, a); }
    p.push_back(s.substr(a)); return p; }
std::string string_repeat(const std::string & s, size_t n) { std::string r; while (n--) r += s; return r; }
extern "C" void ggml_abort(const char * file, int line, const char *, ...) { fprintf(stderr, "abort %s:%d\n", file, line); abort(); }
'''

MAIN = r'''
#include "json-schema-to-grammar.h"
#include <iostream>
#include <sstream>
int main() {
    std::stringstream ss; ss << std::cin.rdbuf();
    try { std::cout << json_schema_to_grammar(common_json::parse(ss.str()), true); }
    catch (const std::exception & e) { std::cout << e.what(); return 1; }
    return 0;
}
'''

SOURCES = ["json-schema-to-grammar", "json-schema", "json", "trie", "unicode"]


def build_oracle(src, tmp):
    with open(os.path.join(tmp, "stubs.cpp"), "w") as f:
        f.write(STUBS)
    with open(os.path.join(tmp, "main.cpp"), "w") as f:
        f.write(MAIN)
    inc = ["-I" + os.path.join(src, d) for d in ("common", "include", "ggml/include", "vendor")]
    files = [os.path.join(tmp, "main.cpp"), os.path.join(tmp, "stubs.cpp")]
    files += [os.path.join(src, "common", s + ".cpp") for s in SOURCES]
    exe = os.path.join(tmp, "oracle")
    subprocess.run(["g++", "-std=c++17", "-O1", "-w"] + inc + files + ["-o", exe], check=True)
    return exe


def hand_cases():
    c = []

    def add(name, s):
        c.append((name, s if isinstance(s, str) else json.dumps(s, ensure_ascii=False)))

    for v in [1.5, 1e100, 0.1, 1.0, -0.0, 1e-7, 123456789012345678, 1e15, 1e16, 0.0001, 0.00001, -2.5e-300]:
        add("const %r" % v, {"const": v})
    add("const nested", {"const": {"a": [1, 2, {"b": None}], "c": "x\u0001y\u007f\u00e9\n"}})
    add("enum unicode and escapes", {"enum": ["é", "日本", "\t", "a\"b", "back\\slash"]})
    add("typed enum", {"type": "string", "enum": ["a", "b"]})
    add("nullable enum", {"type": ["string", "null"], "enum": ["a", None]})
    add("odd property names", {"type": "object", "properties": {"héllo": {"type": "string"},
        "a b": {"type": "integer"}, "x\"y": {"type": "boolean"}}})
    add("unicode names + additional", {"type": "object", "properties": {"日本": {"type": "string"},
        "日曜": {"type": "number"}}, "additionalProperties": {"type": "string"}})
    add("reserved property names", {"type": "object", "properties": {"string": {"type": "string"},
        "root": {"type": "integer"}, "value": {}}, "required": ["string"]})
    add("nested same names", {"type": "object", "properties": {"a": {"type": "object", "properties": {
        "a": {"type": "object", "properties": {"a": {"type": "string"}}}}}}})
    add("optional + additional true", {"type": "object", "properties": {"a": {"type": "string"},
        "b": {"type": "string"}, "c": {"type": "string"}, "d": {"type": "string"}}, "required": ["c"],
        "additionalProperties": True})
    add("empty properties", {"type": "object", "additionalProperties": False, "properties": {}})
    add("only additional", {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}})
    for mn in [0, 1, 2, 5]:
        for mx in [None, 0, 1, 2, 5]:
            if mx is not None and mx < mn:
                continue
            s = {"type": "array", "items": {"type": "integer"}, "minItems": mn}
            if mx is not None:
                s["maxItems"] = mx
            add("items %d..%s" % (mn, mx), s)
    add("array minItems only", {"type": "array", "minItems": 2})
    add("tuple with counts", {"items": [{"type": "string"}, {"type": "integer"}], "minItems": 2, "maxItems": 2})
    add("empty tuple", {"type": "array", "prefixItems": []})
    add("nested arrays", {"type": "array", "items": {"type": "array", "items": {"type": "array",
        "items": {"type": "null"}}}})
    for mn in [0, 1, 2]:
        for mx in [None, 0, 1, 3]:
            if mx is not None and mx < mn:
                continue
            s = {"type": "string", "minLength": mn}
            if mx is not None:
                s["maxLength"] = mx
            add("string %d..%s" % (mn, mx), s)
    for f in ["date", "time", "date-time", "uuid", "uuid4", "email", "uuid6"]:
        add("format %s" % f, {"type": "string", "format": f})
        add("untyped format %s" % f, {"format": f})
    vals = [-1000000, -123, -100, -10, -9, -1, 0, 1, 9, 10, 19, 99, 100, 101, 12345, 10**15, 10**17]
    for a in vals:
        add("int min %d" % a, {"type": "integer", "minimum": a})
        add("int max %d" % a, {"type": "integer", "maximum": a})
    for a, b in itertools.combinations(vals, 2):
        if random.Random(a * 31 + b).random() < 0.3:
            add("int %d..%d" % (a, b), {"type": "integer", "minimum": a, "maximum": b})
    add("int exclusive", {"type": "integer", "exclusiveMinimum": 0.5, "exclusiveMaximum": 9.5})
    add("int fractional", {"type": "integer", "minimum": 1.5, "maximum": 9.5})
    for i, p in enumerate(["^a$", "^a+b*c?$", "^(ab|cd)+$", "^[a-z]{2,5}$", "^[^0-9]*$", "^.{3}$",
                           "^x{2}y{3,}z{,4}$", "^\\.$", "^\\x41\\u00e9$", "^a\\tb\\nc$", "^\\d+$", "^a(?=b)$",
                           "abc", "^(a$", "^a)$", "^*a$", "^[a$", "^a{1,2,3}$", "^a{x}$", "^a{}$", "^$", "^a|$",
                           "^(?:)$", "^()$", "^[\\]]$", "^\\\\$", "^\"\"$", "^é+$", "^(a(b(c)))$", "^a{0}$",
                           "^(ab){2}(ab){3}$", "^\\$$", "^a\\/b$", "^.*$", "^\\x4$", "^[\\d]$", "^ab.c.$"]):
        add("pattern %d %s" % (i, p), {"type": "string", "pattern": p})
    add("ref chain", {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "integer"}}})
    add("recursive ref", {"$defs": {"n": {"type": "object", "properties": {"v": {"type": "integer"},
        "next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"})
    add("shared ref", {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}, "b": {"$ref": "#/$defs/x"}},
        "$defs": {"x": {"type": "string", "minLength": 1}}})
    add("remote ref", {"$ref": "other.json#/a"})
    add("root ref", {"$ref": "#"})
    add("missing ref", {"$ref": "#/nope"})
    add("ref into array", {"$ref": "#/$defs/list/1", "$defs": {"list": [{"type": "string"}, {"type": "boolean"}]}})
    add("anyOf", {"anyOf": [{"type": "string"}, {"type": "null"}]})
    add("oneOf", {"oneOf": [{"type": "integer"}, {"type": "boolean"}]})
    add("empty anyOf", {"anyOf": []})
    add("allOf objects", {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "object", "properties": {"b": {"type": "integer"}}}]})
    add("allOf enums", {"allOf": [{"enum": [1, 2, 3]}, {"enum": [2, 3, 4]}, {"enum": [3, 2]}]})
    add("type array with keywords", {"type": ["string", "integer", "null"], "minLength": 2, "minimum": 5})
    add("type array object/array", {"type": ["object", "array"], "properties": {"a": {"type": "string"}},
        "items": {"type": "integer"}})
    add("not a schema", "42")
    add("number minimum", {"type": "number", "minimum": 0})
    add("uniqueItems", {"type": "array", "items": {"type": "string"}, "uniqueItems": True})
    add("required not in properties", {"type": "object", "required": ["a"], "properties": {"b": {}}})
    add("pattern + minLength", {"type": "string", "pattern": "^a$", "minLength": 1})
    add("annotations only", {"description": "x", "title": "y", "examples": [1]})
    return c


NAMES = ["a", "b", "ab", "ac", "abc", "", "root", "number", "string", "x y", "é", "日", "-", "a-b", "value",
         "char", "item", "additional", "space", "dot"]


def random_schema(rnd, d, defs):
    def lit():
        return rnd.choice([1, -2, 3.25, "s", "é", None, True, [1, "a"], {"k": 1}, 1e20, 0.5, "a\"b"])
    kinds = ["string", "integer", "number", "boolean", "null", "object", "array", "anyOf", "allOf", "enum",
             "const", "ref", "any", "typearr", "tuple", "pattern"]
    t = rnd.choice(kinds) if d < 4 else rnd.choice(["string", "integer", "boolean", "null", "const"])
    if t == "string":
        s = {"type": "string"}
        r = rnd.random()
        if r < 0.3:
            s["minLength"] = rnd.randint(0, 3)
        if 0.2 < r < 0.5:
            s["maxLength"] = rnd.randint(3, 6)
        if 0.6 < r < 0.75:
            s["format"] = rnd.choice(["date", "time", "date-time", "uuid", "email"])
        return s
    if t == "pattern":
        return {"type": "string", "pattern": rnd.choice(["^a+$", "^[a-c]{2}$", "^(x|y)z?$", "^\\d$", "^.{2,3}$",
                                                          "^(ab){2,}$", "^\"q\"$", "^a.b$", "^(a(b)?c){3}$"])}
    if t == "integer":
        s = {"type": "integer"}
        if rnd.random() < 0.5:
            s["minimum"] = rnd.randint(-500, 500)
        if rnd.random() < 0.5:
            s["maximum"] = s.get("minimum", -600) + rnd.randint(0, 2000)
        return s
    if t in ("number", "boolean", "null"):
        return {"type": t}
    if t == "object":
        props = {}
        for _ in range(rnd.randint(0, 4)):
            props[rnd.choice(NAMES)] = random_schema(rnd, d + 1, defs)
        s = {"type": "object"} if rnd.random() < 0.7 else {}
        if props or rnd.random() < 0.5:
            s["properties"] = props
        if props and rnd.random() < 0.5:
            s["required"] = rnd.sample(list(props), rnd.randint(0, len(props)))
        r = rnd.random()
        if r < 0.3:
            s["additionalProperties"] = False
        elif r < 0.5:
            s["additionalProperties"] = random_schema(rnd, d + 1, defs)
        elif r < 0.6:
            s["additionalProperties"] = True
        return s
    if t == "array":
        s = {"type": "array"}
        if rnd.random() < 0.8:
            s["items"] = random_schema(rnd, d + 1, defs)
        if rnd.random() < 0.4:
            s["minItems"] = rnd.randint(0, 3)
        if rnd.random() < 0.4:
            s["maxItems"] = s.get("minItems", 0) + rnd.randint(0, 3)
        return s
    if t == "tuple":
        return {"prefixItems": [random_schema(rnd, d + 1, defs) for _ in range(rnd.randint(1, 3))]}
    if t == "anyOf":
        return {rnd.choice(["anyOf", "oneOf"]): [random_schema(rnd, d + 1, defs) for _ in range(rnd.randint(1, 3))]}
    if t == "allOf":
        if rnd.random() < 0.5:
            return {"allOf": [{"type": "object", "properties": {rnd.choice(NAMES): random_schema(rnd, d + 1, defs)}}
                              for _ in range(rnd.randint(1, 3))]}
        return {"allOf": [{"enum": rnd.sample(["a", "b", "c", "d"], rnd.randint(1, 4))}
                          for _ in range(rnd.randint(1, 3))]}
    if t == "enum":
        return {"enum": [lit() for _ in range(rnd.randint(1, 4))]}
    if t == "const":
        return {"const": lit()}
    if t == "ref":
        name = rnd.choice(["p", "q", "r s", "number"])
        if name not in defs:
            defs[name] = None
            defs[name] = random_schema(rnd, d + 1, defs)
        return {"$ref": "#/$defs/" + name}
    if t == "any":
        return rnd.choice([{}, {"description": "d"}])
    return {"type": rnd.sample(["string", "integer", "null", "boolean", "array", "object"], rnd.randint(1, 3)),
            "minLength": 1, "minimum": 2, "items": {"type": "string"}}


def random_cases(n, seed=20260101):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        defs = {}
        s = random_schema(rnd, 0, defs)
        if defs:
            s = dict(s)
            s["$defs"] = {k: v for k, v in defs.items() if v is not None}
        out.append(("random %03d" % i, json.dumps(s, ensure_ascii=rnd.random() < 0.5)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default="/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
    ap.add_argument("--out", default="tests/grammar/golden/schema_oracle_cases.json")
    ap.add_argument("--random", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_oracle(a.src, tmp)
        cases = []
        for name, schema in hand_cases() + random_cases(a.random):
            r = subprocess.run([exe], input=schema.encode(), capture_output=True)
            if r.returncode not in (0, 1):
                sys.exit("oracle crashed on %s" % name)
            case = {"name": name, "status": "SUCCESS" if r.returncode == 0 else "FAILURE", "schema": schema}
            try:
                text = r.stdout.decode("utf-8")
            except UnicodeDecodeError:  # llama.cpp split a UTF-8 character: keep the bytes visible
                text = None
                case["grammar_bytes"] = r.stdout.decode("latin-1")
            case["grammar" if r.returncode == 0 else "error"] = text
            cases.append(case)
    doc = {"source": SOURCE_VERSION,
           "converter": "common/json-schema-to-grammar.cpp via json_schema_to_grammar(schema, force_gbnf=true)",
           "generator": "scripts/golden/grammar/schema_oracle_cases.py",
           "cases": cases}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("%d cases -> %s" % (len(cases), a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
