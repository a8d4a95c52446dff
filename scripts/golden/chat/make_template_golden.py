#!/usr/bin/env python3
"""Goldens for the real chat templates llama.cpp tests with
($LLM_TESTDATA_DIR/chat-templates/*.jinja, 70 files): each template renders a
fixed set of conversations (conversations.json next to this script: single
turn, system + multi-turn, tool definitions with a tool call and a tool
result, Unicode and Jinja-looking text in content, a final assistant message
without generation prompt).

Reference: jinja2 configured exactly as Hugging Face transformers'
render_jinja_template does (chat_template_utils._compile_jinja_template):
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
extensions=[AssistantTracker ({% generation %}), loopcontrols]), the filter
tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
= json.dumps, the globals raise_exception (TemplateError) and strftime_now
(pinned to DATE), and the variables messages, tools, documents (None),
add_generation_prompt, bos_token, eos_token. transformers itself is not
needed (it pulls in torch-sized dependencies); this is the same environment.

Writes tests/tokenizer/golden/chat/templates_golden.json:
  {"date", "bos_token", "eos_token", "conversations": [{"name", "vars"}],
   "features": {"conversation", "cases": [{"name", "template", "expected" or "error"}]},
   "cases": [{"template": FILE, "conversation": NAME, "expected": TEXT}
             or {..., "error": "TYPE: MESSAGE"}]}
where vars are the template variables besides tools = documents = None and
bos_token / eos_token (which vars may override).

Usage: make_template_golden.py REPO_ROOT
"""
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

DATE = datetime.datetime(2025, 2, 7, 12, 0, 0)
BOS, EOS = "<|bos|>", "<|eos|>"


class AssistantTracker(Extension):
    """transformers' {% generation %} ... {% endgeneration %}: renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return DATE.strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, conv):
    try:
        tmpl = env.from_string(source)
        variables = {"tools": None, "documents": None, "bos_token": BOS, "eos_token": EOS}
        variables.update(conv["vars"])
        out = tmpl.render(**variables)
        return {"expected": out}
    except Exception as e:  # noqa: BLE001 - TemplateError, UndefinedError, TypeError, ...
        return {"error": "%s: %s" % (type(e).__name__, e)}


# Small templates for the features the real ones use (rendered with the
# "tool_call" conversation's variables).
FEATURES = [
    ("loop_cycle", "{% for m in messages %}{{ loop.cycle('odd', 'even', 'third') }}:{{ m.role }} {% endfor %}"),
    ("raw", "{% raw %}{{ not evaluated }} {% if %}{% endraw %}!"),
    ("raw_whitespace", "a\n  {% raw %}\n x {{ y }}\n  {% endraw %}\nb {%- raw -%}  c  {%- endraw -%} d"),
    ("macro_defaults", "{% macro f(a, b='x', c=none) %}[{{ a }}|{{ b }}|{{ c }}]{% endmacro %}"
                       "{{ f(1) }}{{ f(1, c=3) }}{{ f('q', 'r', 's') }}{{ f(b=2, a=0) }}"),
    ("macro_scope", "{% set g = 'G' %}{% macro f(x) %}{% set g = 'L' ~ x %}{{ g }}{% endmacro %}{{ f(1) }}{{ g }}"),
    ("macro_recursive", "{% macro r(n) %}{% if n > 0 %}{{ n }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(4) }}"),
    ("filter_block", "{% filter upper %}hello {{ messages[0].role }}{% endfilter %}|{% filter trim %}  x  {% endfilter %}"),
    ("tojson_args", "{{ tools | tojson(indent=2, sort_keys=true) }}\n"
                    "{{ {'b': 1, 'a': 'é😀'} | tojson(ensure_ascii=true, separators=(',', ':')) }}\n"
                    "{{ messages[2].tool_calls | tojson(separators=(', ', ': ')) }}"),
    ("sort", "{{ ['b', 'A', 'c'] | sort | join(',') }} {{ [3, 1, 2] | sort(reverse=true) | join(',') }} "
             "{{ messages | sort(attribute='role') | map(attribute='role') | list | join(',') }}"),
    ("select_reject", "{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3, 4] | reject('divisibleby', 2) | list }} "
                      "{{ ['', 'a', none, 0, 1] | select | list }} {{ none | select | list }}"),
    ("escape_markup", "{{ '<a href=\"x\">&' | e }} {{ ('<b>' | safe) + '<i>' }} {{ ('<b>' | safe) ~ '<i>' }} "
                      "{{ ('<b>' | safe) | e }}"),
    ("indent", "{{ 'a\nb\n\nc' | indent(2) }}|{{ 'x\ny' | indent(first=true) }}|{{ 'p\n\nq\n' | indent(3, blank=true) }}|"
               "{{ '' | indent(first=true) }}"),
    ("dictsort", "{% for k, v in {'b': 2, 'A': 1, 'c': 0} | dictsort %}{{ k }}={{ v }};{% endfor %}"
                 "{% for k, v in {'b': 2, 'a': 1} | dictsort(by='value', reverse=true) %}{{ k }}{% endfor %}"),
    ("str_format", "{{ '{}-{}'.format(1, 'x') }} {{ '{1}{0}{{}}'.format('a', 'b') }}"),
    ("min_max", "{{ [3, 1, 2] | min }} {{ ['b', 'A'] | max }} {{ [] | min }}"),
    ("strftime", "{{ strftime_now('%Y-%m-%d') }} {{ strftime_now('%d %b %Y') }} {{ strftime_now('%B %d, %Y') }}"),
    ("namespace", "{% set ns = namespace(n=0, s='') %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
                  "{% set ns.s = ns.s ~ m.role[0] %}{% endfor %}{{ ns.n }} {{ ns.s }}"),
    ("generation", "{% generation %}gen {{ 1 + 1 }}{% endgeneration %}"),
    ("generator", "{{ tools | map(attribute='type') | list }} "
                  "{{ 'y' if messages | selectattr('role', 'equalto', 'nobody') else 'n' }} "
                  "{% set g = messages | map(attribute='role') %}{{ g | join(',') }}|{{ g | join(',') }}|"
                  "{{ (g | first) is defined }} {{ [1, 2] | select('odd') | first }}"),
    ("generator_len", "{{ messages | map(attribute='role') | length }}"),
    ("generator_tojson", "{{ messages | selectattr('role') | tojson }}"),
    ("mutate_list", "{% set l = [1] %}{{ l.append(2) }}{{ l }}"),
    ("raise", "a{{ raise_exception('boom: ' ~ messages | length) }}"),
    ("undefined_attr", "[{{ messages[0].nothing }}]{{ messages[0].nothing.deeper }}"),
]


def main():
    root = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    tdir = os.path.join(os.environ.get("LLM_TESTDATA_DIR", os.path.join(root, "..", "shared", "testdata")),
                        "chat-templates")
    with open(os.path.join(here, "conversations.json"), encoding="utf-8") as f:
        convs = json.load(f)
    env = environment()
    cases = []
    for name in sorted(os.listdir(tdir)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(tdir, name), encoding="utf-8") as f:
            source = f.read()
        for conv in convs:
            c = {"template": name, "conversation": conv["name"]}
            c.update(render(env, source, conv))
            cases.append(c)
    feats = []
    fvars = next(c for c in convs if c["name"] == "tool_call")
    for name, source in FEATURES:
        c = {"name": name, "template": source}
        c.update(render(env, source, fvars))
        feats.append(c)
    doc = {"format": "llm-chat-templates-golden", "version": 1,
           "generator": "scripts/golden/chat/make_template_golden.py",
           "reference": "jinja2 %s in transformers' render_jinja_template environment" % jinja2.__version__,
           "date": DATE.strftime("%Y-%m-%d"), "bos_token": BOS, "eos_token": EOS, "conversations": convs, "cases": cases,
           "features": {"conversation": "tool_call", "cases": feats}}
    out = os.path.join(root, "tests", "tokenizer", "golden", "chat", "templates_golden.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %s: %d cases, %d raise" % (out, len(cases), sum("error" in c for c in cases)))


if __name__ == "__main__":
    main()
