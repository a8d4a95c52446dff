"""llm-grammar's command line (pytest): --print of a JSON Schema against the
golden grammar of tests/grammar/golden/schema_cases.json, --check's verdicts
(pass, rejected at a byte offset with line:column, incomplete), its usage
errors (exit 2), inputs that must not crash it, and --mask-bench on the
default model (skipped, with the reason, when the model is missing). Mask
times are printed, never judged.

Environment: LLM_GRAMMAR_BIN (the binary), LLM_SOURCE_DIR (the source tree),
LLM_DEFAULT_MODEL (optional). Run: python3 -m pytest -rs test_grammar_tool.py
"""
import json
import os
import re
import subprocess

import pytest

BIN = os.environ.get("LLM_GRAMMAR_BIN", "llm-grammar")
SRC = os.environ.get("LLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.environ.get("LLM_DEFAULT_MODEL", "")

ARRAY_OF_INTS = '{"type": "array", "items": {"type": "integer"}}'
# A realistic nested schema ($ref, anyOf, enum, patterns, formats, bounds), a
# ~230-token order it accepts and llama.cpp's free JSON-object grammar: the
# inputs of docs/PERFORMANCE.md "Grammar masks".
DATA = os.path.join(SRC, "tests/apps/data/grammar")
ORDER_SCHEMA = os.path.join(DATA, "order.schema.json")
ORDER_TEXT = os.path.join(DATA, "order.json")
JSON_GBNF = os.path.join(DATA, "json.gbnf")


def run(*args, stdin=b""):
    return subprocess.run([BIN, *args], input=stdin, capture_output=True, timeout=120)


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(p)


def golden_case(name):
    with open(os.path.join(SRC, "tests/grammar/golden/schema_cases.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    return next(c for c in cases if c["name"] == name)


def trim(text):
    # llama.cpp's comparison (see the golden file's note)
    return "\n".join(line.lstrip(" \t") for line in text.strip().split("\n"))


@pytest.mark.parametrize("case", ["required + optional props each in original order", "string array"])
def test_print_schema_matches_golden(tmp_path, case):
    c = golden_case(case)
    path = write(tmp_path, "schema.json", c["schema"])
    for src in (["--json-schema-file", path], ["--json-schema", c["schema"]]):
        r = run(*src, "--print")
        assert r.returncode == 0, r.stderr
        assert trim(r.stdout.decode()) == trim(c["grammar"])


def test_print_gbnf_shows_generated_rules():
    r = run("--grammar", 'root ::= ("a" | "b")+ [x-z]*', "--print")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert out.startswith("root ::= root-1 ")
    # what --print writes parses back and prints the same
    r2 = run("--grammar", out, "--print")
    assert r2.returncode == 0 and r2.stdout.decode() == out


def test_check_pass(tmp_path):
    ok = write(tmp_path, "ok.json", "[1, 2,\n 3]")
    r = run("--json-schema", ARRAY_OF_INTS, "--check", ok, ok)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().count(": ok") == 2
    r = run("--json-schema", ARRAY_OF_INTS, "--check", "-q", ok)
    assert r.returncode == 0 and r.stdout == b""
    for grammar in (["--json-schema-file", ORDER_SCHEMA], ["--grammar-file", JSON_GBNF]):
        r = run(*grammar, "--check", ORDER_TEXT)
        assert r.returncode == 0, r.stderr
    # the schema fixes the order of properties: required ones first
    with open(ORDER_TEXT, encoding="utf-8") as f:
        swapped = f.read().replace('"FR", "zip": "75002"', '"FR"').replace('"Paris",', '"Paris", "zip": "75002",')
    r = run("--json-schema-file", ORDER_SCHEMA, "--check", write(tmp_path, "swapped.json", swapped))
    off = swapped.encode().index(b'zip')
    assert r.returncode == 1 and ("rejected at byte %d " % off) in r.stderr.decode(), r.stderr


def test_check_rejected_names_file_offset_line_column(tmp_path):
    ok = write(tmp_path, "ok.json", "[1]")
    bad = write(tmp_path, "bad.json", "[1, 2,\n 3x]")
    r = run("--json-schema", ARRAY_OF_INTS, "--check", ok, bad, ok)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "bad.json: rejected at byte 9 (line 2, column 3)" in err, err
    assert '"x"' in err
    # columns count characters, offsets count bytes
    r = run("--grammar", 'root ::= "é"* "!"', "--check", write(tmp_path, "u.txt", "éé?"))
    assert r.returncode == 1 and "rejected at byte 4 (line 1, column 3)" in r.stderr.decode(), r.stderr


def test_check_incomplete(tmp_path):
    r = run("--json-schema", ARRAY_OF_INTS, "--check", write(tmp_path, "inc.json", "[1, 2"))
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "inc.json: incomplete" in err and "byte 5" in err, err


def test_check_stdin():
    r = run("--grammar", 'root ::= "yes" | "no"', "--check", "-", stdin=b"no")
    assert r.returncode == 0, r.stderr
    r = run("--grammar", 'root ::= "yes" | "no"', "--check", "-", stdin=b"no\n")
    assert r.returncode == 1 and "(stdin): rejected at byte 2 (line 1, column 3)" in r.stderr.decode()


def test_check_odd_inputs_do_not_crash(tmp_path):
    empty = write(tmp_path, "empty", b"")
    binary = write(tmp_path, "bin", bytes(range(256)) * 16)
    r = run("--json-schema", ARRAY_OF_INTS, "--check", empty)
    assert r.returncode == 1 and "incomplete" in r.stderr.decode()
    r = run("--grammar", 'root ::= ""', "--check", empty)
    assert r.returncode == 0, r.stderr
    r = run("--json-schema", ARRAY_OF_INTS, "--check", binary)
    assert r.returncode == 1 and "rejected at byte 0" in r.stderr.decode()
    r = run("--grammar", "root ::= [^\\x7F]*", "--check", binary)
    assert r.returncode == 1 and "rejected at byte 127" in r.stderr.decode(), r.stderr
    r = run("--grammar", 'root ::= [\\x00-\\x7F]* "x"', "--check", write(tmp_path, "b2", b"ab\xff"))
    assert r.returncode == 1 and "invalid UTF-8 byte 0xFF" in r.stderr.decode(), r.stderr
    big = write(tmp_path, "big", b"a" * 300000)
    r = run("--grammar", 'root ::= "a"*', "--check", big)
    assert r.returncode == 0, r.stderr
    r = run("--grammar", 'root ::= "a"*', "--check", big, "--max-bytes", "1000")
    assert r.returncode == 1 and "larger than 1000 bytes" in r.stderr.decode()
    r = run("--grammar", 'root ::= "a"', "--check", str(tmp_path))
    assert r.returncode == 1 and "directory" in r.stderr.decode()
    r = run("--grammar-file", binary, "--print")
    assert r.returncode == 2 and r.stderr


@pytest.mark.parametrize("args,needle", [
    ([], "exactly one of"),
    (["--print"], "exactly one of"),
    (["--grammar", "root ::= \"a\"", "--json-schema", "{}", "--print"], "exactly one of"),
    (["--grammar", "root ::= \"a\""], "one of --print"),
    (["--grammar", "root ::= \"a\"", "--check"], "at least one file"),
    (["--grammar", "root ::= \"a\"", "--print", "--check", "x"], "only one of"),
    (["--grammar", "root ::= \"a\"", "--mask-bench", "x"], "-m MODEL"),
    (["--grammar"], "needs a value"),
    (["--grammar", "a", "--grammar", "b", "--print"], "given twice"),
    (["--bogus"], "unknown option"),
    (["--grammar", "root ::= \"a\"", "--print", "stray"], "unexpected argument"),
    (["--grammar", "root ::= \"a\"", "--check", "x", "--max-bytes", "0"], "--max-bytes"),
    (["--grammar", "root ::= \"a\"", "--check", "x", "--max-bytes", "12k"], "--max-bytes"),
])
def test_usage_errors_exit_2(args, needle):
    r = run(*args)
    assert r.returncode == 2, (args, r.stderr)
    assert needle in r.stderr.decode(), r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--grammar", 'root ::= "a" (\n  "b" | ', "--print"], "line 2, column"),
    (["--grammar", 'root ::= "a" b', "--print"], "undefined rule"),
    (["--grammar", 'x ::= "a"', "--check", "-"], "root"),
    (["--json-schema", '{"type": ', "--print"], "line 1 column"),
    (["--json-schema", '{"type": "foo"}', "--print"], "foo"),
    (["--json-schema", '{"uniqueItems": true}', "--print"], "uniqueItems"),
])
def test_bad_grammar_exit_2(args, needle):
    r = run(*args)
    assert r.returncode == 2, (args, r.stderr)
    assert needle in r.stderr.decode(), r.stderr


def test_help():
    r = run("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for opt in ("--grammar-file", "--grammar ", "--json-schema-file", "--json-schema ", "--print", "--check",
                "--mask-bench", "-m, --model", "--max-bytes", "-v, --verbose", "examples:"):
        assert opt in out, opt


def test_missing_model_is_an_error(tmp_path):
    r = run("--json-schema", ARRAY_OF_INTS, "-m", str(tmp_path / "none.gguf"), "--mask-bench",
            write(tmp_path, "a.json", "[1]"))
    assert r.returncode == 1 and r.stderr


def need_model():
    if not MODEL or not os.path.exists(MODEL):
        pytest.skip("default model not found at '%s' (scripts/setup.sh fetches it)" % MODEL)


ROW = re.compile(r"^(cold|warm) +first +[0-9.]+ us +median +[0-9.]+ us +p99 +[0-9.]+ us"
                 r" +max +[0-9.]+ us +total +[0-9.]+ ms$", re.M)


@pytest.mark.parametrize("grammar", [["--json-schema-file", ORDER_SCHEMA], ["--grammar-file", JSON_GBNF]])
def test_mask_bench_prints_figures(grammar):
    need_model()
    r = run(*grammar, "-m", MODEL, "--mask-bench", ORDER_TEXT)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    print(out)
    assert [m.group(1) for m in ROW.finditer(out)] == ["cold", "warm"], out
    n_tok = int(re.search(r"(\d+) tokens;", out).group(1))
    assert n_tok > 100
    r = run(*grammar, "-m", MODEL, "--mask-bench", ORDER_TEXT, "-v")
    steps = re.findall(r"^  step +(\d+) +[0-9.]+ us +(\d+) allowed", r.stdout.decode(), re.M)
    assert r.returncode == 0 and len(steps) == 2 * (n_tok + 1)
    assert all(int(a) >= 1 for _, a in steps)
    assert "end: can end" in r.stdout.decode()


def test_mask_bench_refuses_text_outside_the_grammar(tmp_path):
    need_model()
    r = run("--json-schema", ARRAY_OF_INTS, "-m", MODEL, "--mask-bench", write(tmp_path, "bad.json", "[1, 2, x]"))
    assert r.returncode == 1
    assert re.search(r'token #\d+ \(id \d+, "[^"]*x"\) at byte \d+ leaves the grammar', r.stderr.decode()), r.stderr
