"""llm-chat's structured-output options: --grammar, --grammar-file,
-j/--json-schema, --json-schema-file. Each answer follows the grammar
(greedy, -p); both kinds at once is a usage error (exit 2); a bad grammar
or schema exits 1 naming the problem. Usage: test_chat_constraint.py
LLM_CHAT MODEL. Exit 77 (skipped) without the model."""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(name, cond, detail=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:1200]))
    sys.stdout.flush()
    if not cond:
        FAILS.append(name)


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def main():
    chat, model = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    rc, out, _ = run([chat, "--help"])
    check("--help lists the options", rc == 0 and all(o in out for o in (
        "--grammar TEXT", "--grammar-file", "-j, --json-schema", "--json-schema-file")), out)
    if not model or not os.access(model, os.R_OK):
        print("SKIP: default model not found (LLM_DEFAULT_MODEL; scripts/setup.sh)")
        return 77
    C = [chat, "-m", model, "-t", "2", "-c", "512", "--temp", "0", "-n", "64"]
    rc, out, err = run(C + ["--grammar", 'root ::= "yes" | "no"', "-p", "Is the sky blue?"])
    check("--grammar: the answer is yes or no", rc == 0 and out.strip() in ("yes", "no"), (rc, out, err[-300:]))
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
                                               "legs": {"type": "integer", "minimum": 0, "maximum": 8}},
              "required": ["name", "legs"]}
    rc, out, err = run(C + ["-j", json.dumps(schema), "-p", "Describe a dog."])
    try:
        v = json.loads(out)
        ok = isinstance(v["name"], str) and len(v["name"]) <= 10 and 0 <= v["legs"] <= 8
    except (ValueError, KeyError, TypeError):
        ok = False
    check("-j: the answer is JSON of the schema", rc == 0 and ok, (rc, out, err[-300:]))
    with tempfile.TemporaryDirectory() as d:
        g, s = os.path.join(d, "yn.gbnf"), os.path.join(d, "s.json")
        with open(g, "w") as f:
            f.write('# a comment\nroot ::= "yes" | "no"\n')
        with open(s, "w") as f:
            json.dump({"enum": ["red", "green", "blue"]}, f)
        rc, out, err = run(C + ["--grammar-file", g, "-p", "Is water wet?"])
        check("--grammar-file", rc == 0 and out.strip() in ("yes", "no"), (rc, out, err[-300:]))
        rc, out, err = run(C + ["--json-schema-file", s, "-p", "Colour of grass?"])
        check("--json-schema-file", rc == 0 and out.strip() in ('"red"', '"green"', '"blue"'), (rc, out, err[-300:]))
        rc, out, err = run(C + ["--grammar-file", g, "-j", "{}", "-p", "hi"])
        check("grammar and schema together: usage error", rc == 2 and "not both" in err, (rc, err))
        rc, out, err = run(C + ["--grammar-file", os.path.join(d, "missing"), "-p", "hi"])
        check("missing grammar file: usage error", rc == 2 and "cannot read" in err, (rc, err))
    rc, out, err = run(C + ["--grammar", "root ::= item", "-p", "hi"])
    check("undefined rule: exit 1 naming it", rc == 1 and "item" in err and out == "", (rc, out, err))
    rc, out, err = run(C + ["-j", '{"type": "array", "uniqueItems": true}', "-p", "hi"])
    check("unsupported keyword: exit 1 naming it", rc == 1 and "uniqueItems" in err, (rc, out, err))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
