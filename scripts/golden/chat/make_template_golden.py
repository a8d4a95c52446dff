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

Writes tests/chat/golden/templates_golden.json:
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
    # {% call %} and caller()
    ("call_block", "{% macro box(title) %}<{{ title }}:{{ caller() }}>{% endmacro %}"
                   "{% call box('t') %}body {{ messages | length }}{% endcall %}"),
    ("call_block_args", "{% macro each(items) %}{% for i in items %}{{ caller(i, loop.index) }}{% endfor %}{% endmacro %}"
                        "{% call(m, n=0, z='d') each(messages) %}[{{ n }}{{ m.role }}{{ z }}]{% endcall %}"),
    ("call_block_scope", "{% macro twice() %}{{ caller() }}{{ caller() }}{% endmacro %}"
                         "{% for m in messages %}{% call twice() %}{{ m.role[0] }}{{ loop.index }}{% endcall %}{% endfor %}"),
    ("call_block_nested", "{% macro wrap(t) %}({{ t }}{{ caller() }}){% endmacro %}"
                          "{% call wrap(1) %}{% call wrap(2) %}x{% endcall %}{% endcall %}"),
    ("call_block_caller_kwargs", "{% macro m() %}{{ caller(1, 2, k=3) }}{% endmacro %}"
                                 "{% call m() %}{{ varargs }}{{ kwargs }}{% endcall %}"),
    ("call_block_no_caller", "{% macro m() %}x{% endmacro %}{% call m() %}body{% endcall %}"),
    ("call_without_block", "{% macro m() %}{{ caller() }}{% endmacro %}{{ m() }}"),
    ("caller_printed_undefined", "{% macro m() %}[{{ caller }}]{% endmacro %}{{ m() }}"),
    ("call_block_too_many", "{% macro m() %}{{ caller(1) }}{% endmacro %}{% call m() %}x{% endcall %}"),
    ("call_block_not_call", "{% call messages %}x{% endcall %}"),
    ("caller_param_no_default", "{% macro m(caller) %}{{ caller() }}{% endmacro %}{% call m() %}X{% endcall %}"),
    ("caller_param_default", "{% macro m(caller=none) %}[{{ caller() if caller else 'none' }}]{% endmacro %}"
                             "{{ m() }}{% call m() %}X{% endcall %}"),
    # macro varargs / kwargs
    ("macro_varargs_kwargs", "{% macro m(a) %}{{ a }}|{{ varargs }}|{{ kwargs }}{% endmacro %}"
                             "{{ m(1, 2, 'x', k=4, j='y') }} {{ m(0) }} {{ m(a=5, z=none) }}"),
    ("macro_varargs_loop", "{% macro cat() %}{% for v in varargs %}{{ v }}{% if not loop.last %}+{% endif %}{% endfor %}"
                           "{% endmacro %}{{ cat('a', 'b', 'c') }}"),
    ("macro_kwargs_items", "{% macro attrs() %}{% for k, v in kwargs.items() %} {{ k }}=\"{{ v }}\"{% endfor %}{% endmacro %}"
                           "<x{{ attrs(id=1, cls='c') }}>"),
    ("macro_kwargs_dup_positional", "{% macro m(a) %}{{ a }}{{ kwargs }}{% endmacro %}{{ m(1, a=2) }}"),
    ("macro_too_many_args", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}"),
    ("macro_unknown_kwarg", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, b=2) }}"),
    ("macro_varargs_assigned_first", "{% macro m() %}{% set varargs = 1 %}{{ varargs }}{% endmacro %}{{ m(1) }}"),
    ("macro_varargs_read_first", "{% macro m() %}{{ varargs }}{% set varargs = 1 %}{% endmacro %}{{ m(1) }}"),
    ("macro_kwargs_in_nested_macro", "{% macro outer() %}{% macro inner() %}{{ kwargs }}{% endmacro %}{{ inner(q=1) }}"
                                     "{% endmacro %}{{ outer(p=2) }}"),
    ("macro_varargs_param", "{% macro m(varargs) %}{{ varargs }}{% endmacro %}{{ m(3) }}"),
    # recursive loops
    ("loop_recursive", "{% for x in [1, [2, [3, []]], 4] recursive %}{% if x is iterable %}({{ loop(x) }})"
                       "{% else %}{{ x }}@{{ loop.depth }}{{ loop.depth0 }}{{ loop.index }}{% endif %}{% endfor %}"),
    ("loop_recursive_tree", "{% set tree = [{'n': 'a', 'c': [{'n': 'b', 'c': []}, {'n': 'c', 'c': [{'n': 'd', 'c': []}]}]},"
                            " {'n': 'e', 'c': []}] %}"
                            "{% for node in tree recursive %}{{ '  ' * loop.depth0 }}{{ node.n }}{{ loop.length }}\n"
                            "{% if node.c %}{{ loop(node.c) }}{% endif %}{% endfor %}"),
    ("loop_recursive_else_filter", "{% for x in [[1, 0], [], 2, 0] if x != 0 recursive %}"
                                   "{% if x is iterable %}[{{ loop(x) }}]{% else %}{{ x }}{% endif %}{% else %}E{% endfor %}"),
    ("loop_recursive_outer_vars", "{% set p = 'P' %}{% for x in [[1, [2]]] recursive %}{% set q = 'Q' %}"
                                  "{% if x is iterable %}{{ p }}<{{ loop(x) }}>{% else %}{{ x }}{{ q }}{% endif %}{% endfor %}"),
    ("loop_recursive_break", "{% for x in [[1, 2, 3], 4, 5] recursive %}{% if x is iterable %}{{ loop(x) }}"
                             "{% elif x == 2 %}{% break %}{% else %}{{ x }}{% endif %}{% endfor %}"),
    ("loop_recursive_saved", "{% for x in [[1]] recursive %}{% set l = loop %}{% for y in [5] %}"
                             "{{ l(x) if x is iterable else x ~ loop.depth ~ l.depth }}{% endfor %}{% endfor %}"),
    ("loop_depth_plain", "{% for m in messages %}{{ loop.depth }}{{ loop.depth0 }}{% for c in 'ab' %}{{ loop.depth }}"
                         "{% endfor %}{% endfor %}"),
    ("loop_not_recursive", "{% for x in [1] %}{{ loop([2]) }}{% endfor %}"),
    ("loop_recursive_two_args", "{% for x in [1] recursive %}{{ loop([2], 3) }}{% endfor %}"),
    ("loop_recursive_deep", "{% for x in " + "[" * 40 + "1" + "]" * 40 + " recursive %}"
                            "{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}@{{ loop.depth }}{% endif %}{% endfor %}"),
    # include / import / extends (no loader: jinja2 raises) and blocks (rendered in place)
    ("include", "a{% include 'other.jinja' %}b"),
    ("include_ignore_missing", "a{% include 'other.jinja' ignore missing %}b"),
    ("include_ignore_missing_empty", "a{% include [] ignore missing %}{% include none ignore missing without context %}b"),
    ("include_empty_list", "a{% include [] %}b"),
    ("include_list", "a{% include ['x', 'y'] ignore missing with context %}b"),
    ("include_var", "a{% include messages[0].content %}b"),
    ("include_not_run", "a{% if false %}{% include 'x' %}{% endif %}b"),
    ("import", "{% import 'macros.jinja' as m %}{{ m.f() }}"),
    ("import_with_context", "{% import 'macros.jinja' as m with context %}x"),
    ("from_import", "{% from 'macros.jinja' import f, g as h %}{{ f() }}"),
    ("from_import_underscore", "{% from 'macros.jinja' import _f %}x"),
    ("extends", "{% extends 'base.jinja' %}{% block body %}x{% endblock %}"),
    ("extends_not_run", "a{% if false %}{% extends 'base.jinja' %}{% endif %}b{% block c %}B{% endblock %}"),
    ("block_in_place", "<{% block head %}H{{ messages | length }}{% endblock %}|{% block body %}B{% endblock body %}>"),
    ("block_scope", "{% set t = 'T' %}{% for m in messages %}{% block b %}[{{ m }}{{ t }}]{% endblock %}{% endfor %}"
                    "{% for i in [1] %}{% block s scoped %}[{{ i }}{{ t }}]{% endblock %}{% endfor %}"),
    ("block_set_local", "{% block b %}{% set z = 1 %}{{ z }}{% endblock %}[{{ z }}]"),
    ("block_in_macro", "{% macro m(a) %}{% block q %}Q{{ a }}{% endblock %}{% endmacro %}{{ m(1) }}"),
    ("block_self", "{% block b %}<{{ self.c() }}>{% endblock %}{% block c %}C{{ messages | length }}{% endblock %}"),
    ("block_duplicate", "{% block b %}x{% endblock %}{% block b %}y{% endblock %}"),
    ("block_required", "a{% block b required %}  {% endblock %}"),
    ("block_required_content", "{% block b required %}x{% endblock %}"),
    ("block_super", "{% block b %}{{ super() }}{% endblock %}"),
    ("block_end_name_mismatch", "{% block b %}x{% endblock c %}"),
]


def check_with_transformers(feats, fvars):
    """Each feature case rendered by transformers' own compiled environment
    (chat_template_utils, when transformers is installed; torch not needed)
    must give the same text, or raise too. strftime_now is not pinned there,
    so those cases are skipped."""
    try:
        from transformers.utils import chat_template_utils as ctu
    except ImportError:
        print("transformers not installed: cross-check skipped")
        return
    bad = 0
    for c in feats:
        if "strftime_now" in c["template"]:
            continue
        variables = {"tools": None, "documents": None, "bos_token": BOS, "eos_token": EOS}
        variables.update(fvars["vars"])
        try:
            got = {"expected": ctu._cached_compile_jinja_template(c["template"]).render(**variables)}
        except Exception as e:  # noqa: BLE001
            got = {"error": "%s: %s" % (type(e).__name__, e)}
        if ("expected" in got) != ("expected" in c) or got.get("expected") != c.get("expected"):
            print("transformers differs on %s: %r vs %r" % (c["name"], got, c))
            bad += 1
    if bad:
        sys.exit("%d feature cases differ between transformers and this environment" % bad)
    print("transformers' environment agrees on every feature case")


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
    check_with_transformers(feats, fvars)
    doc = {"format": "llm-chat-templates-golden", "version": 1,
           "generator": "scripts/golden/chat/make_template_golden.py",
           "reference": "jinja2 %s in transformers' render_jinja_template environment" % jinja2.__version__,
           "date": DATE.strftime("%Y-%m-%d"), "bos_token": BOS, "eos_token": EOS, "conversations": convs, "cases": cases,
           "features": {"conversation": "tool_call", "cases": feats}}
    out = os.path.join(root, "tests", "chat", "golden", "templates_golden.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %s: %d cases, %d raise" % (out, len(cases), sum("error" in c for c in cases)))


if __name__ == "__main__":
    main()
