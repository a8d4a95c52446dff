"""Small templates that each exercise jinja2 features chat templates use.

make_chat_golden.py renders every one of them with transformers' jinja2
environment (the reference) into tests/chat/golden/jinja_golden.json;
the C interpreter must reproduce the text, or raise where jinja2 raises.
Written for this project (not copied from anywhere).
"""

FEATURES = [
    # --- whitespace control: trim_blocks, lstrip_blocks, -, + ---
    ("ws_lstrip_trim", "start\n    {% if true %}\n    body\n    {% endif %}\n  {{ 'x' }}  \n{# comment #}\nend\n"),
    ("ws_minus", "a   {%- if true -%}   b   {%- endif -%}   c {{- ' d ' -}} e\n\n{{ 'f' }}"),
    ("ws_plus", "a\n  {%+ if true +%}\nb\n  {%+ endif %}\nc"),
    ("ws_comment_minus", "x  {#- note -#}  y\n   {# indented comment #}\nz"),
    ("ws_inline_block", "text {% if true %}kept{% endif %} tail\n  mid {% for i in [1] %}{{ i }}{% endfor %}\n"),
    ("ws_trailing_newline_kept_once", "line\n\n"),
    ("ws_crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc"),
    # --- loops ---
    ("loop_vars", "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.length }}/{{ loop.first }}/{{ loop.last }}|{% endfor %}"),
    ("loop_prev_next", "{% for m in messages %}[{{ loop.previtem.role if loop.previtem is defined else '-' }}>{{ m.role }}>{{ loop.nextitem.role if loop.nextitem is defined else '-' }}]{% endfor %}"),
    ("loop_else", "{% for m in [] %}x{% else %}empty{% endfor %}{% for m in messages %}{% else %}none{% endfor %}"),
    ("loop_inline_if", "{% for m in messages if m.role != 'system' %}{{ loop.index }}{{ m.role[0] }}{{ loop.length }} {% endfor %}"),
    ("loop_break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
    ("loop_unpack_items", "{% for k, v in {'a': 1, 'b': [1, 'x', none, true], 'c': {'d': 'e'}}.items() %}{{ k }}={{ v }};{% endfor %}"),
    ("loop_nested", "{% for m in messages %}{% for c in m.role %}{{ loop.index }}{% endfor %}:{{ loop.index }} {% endfor %}"),
    ("loop_string_iter", "{% for ch in 'héllo😀' %}[{{ ch }}]{% endfor %}"),
    ("loop_dict_iter", "{% for k in {'z': 1, 'a': 2} %}{{ k }}{% endfor %}"),
    ("loop_scoping", "{% set x = 1 %}{% for m in messages %}{% set x = x + 1 %}{{ x }}{% endfor %}|{{ x }}"),
    ("loop_scoping_iteration", "{% for m in messages %}{% if loop.first %}{% set y = 'set' %}{% endif %}[{{ y }}]{% endfor %}"),
    ("loop_namespace", "{% set ns = namespace(count=0, last='') %}{% for m in messages %}{% set ns.count = ns.count + 1 %}{% set ns.last = m.role %}{% endfor %}{{ ns.count }} {{ ns.last }}"),
    ("if_set_leaks", "{% if true %}{% set z = 'inner' %}{% endif %}{{ z }}"),
    # --- filters ---
    ("filter_trim_length", "{% for m in messages %}[{{ m.content | trim }}]{{ m.content | length }} {% endfor %}{{ 'héllo😀' | length }}{{ '  x  ' | trim('x ') }}"),
    ("filter_precedence", "{{ 'a' + '  b  ' | trim + 'c' }}{{ messages | length + 1 }}"),
    ("filter_string_list", "{{ 5 | string + '!' }}{{ 'abc' | list }}{{ messages | map(attribute='role') | list }}"),
    ("filter_join_first_last", "{{ messages | map(attribute='role') | join(', ') }}|{{ (messages | first).role }}|{{ (messages | last).role }}|{{ [1, 2, 3] | join }}"),
    ("filter_case_replace", "{{ 'Hello World' | lower }} {{ 'Hello' | upper }} {{ 'hello world' | capitalize }} {{ 'a-b-c' | replace('-', '+') }}"),
    ("filter_default", "{{ missing | default('dflt') }} {{ '' | default('empty', true) }} {{ 'set' | default('x') }} {{ none | default('n') }}"),
    ("filter_selectattr", "{{ messages | selectattr('role', 'equalto', 'user') | list | length }} {{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='role') | join(',') }} {{ messages | selectattr('role', '==', 'assistant') | list | length }}"),
    ("filter_reverse_int", "{{ [1, 2, 3] | reverse | list }}{{ 'abc' | reverse | join }}{{ '42' | int + 1 }}{{ 3.7 | int }}"),
    ("filter_tojson", "{{ messages | tojson }}\n{{ {'a': [1, 2.5, true, none], 'b': 'q\"\\\\\n\\t\u00e9\u2028'} | tojson }}\n{{ [] | tojson }}{{ {} | tojson }}"),
    ("filter_tojson_indent", "{{ {'name': 'f', 'args': {'x': [1, {'y': none}], 'e': []}} | tojson(indent=4) }}\n{{ [1, [2, 3]] | tojson(indent=2) }}"),
    ("filter_items", "{% for k, v in {'x': 1, 'y': 2} | items %}{{ k }}{{ v }}{% endfor %}"),
    # --- tests ---
    ("tests_basic", "{{ x is defined }}{{ messages is defined }}{{ none is none }}{{ 'a' is string }}{{ 1 is number }}{{ 1.5 is number }}{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is iterable }}{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 'a' is in ['a', 'b'] }}"),
    ("tests_negated", "{{ x is not defined }}{{ tools is not none }}{{ tools is none }}{{ not x is defined }}{{ messages[0] is not string }}{{ 'a' is equalto 'a' }}{{ 1 is eq 2 }}"),
    ("tests_undefined_attr_of_dict", "{{ messages[0].tool_calls is defined }}{{ messages[0]['nope'] is defined }}{{ messages[0].content.content is defined }}"),
    # --- subscripts and slices ---
    ("slices_lists", "{{ messages[1:] | length }}{{ messages[:-1] | length }}{{ messages[::-1] | map(attribute='role') | join }}{{ messages[-1].role }}{{ messages[10] is defined }}{{ [1, 2, 3, 4, 5][1:4:2] }}{{ [1, 2, 3][::-2] }}{{ [1, 2, 3][5:] }}"),
    ("slices_strings", "{{ 'héllo'[1:3] }}|{{ 'abc'[::-1] }}|{{ 'abcdef'[-2:] }}|{{ 'abc'[1] }}|{{ 'héllo'[-1] }}|{{ 'abc'[:-1] }}|{{ 'abcdef'[::2] }}"),
    ("attr_vs_item", "{{ messages[0]['role'] }}{{ messages[0].role }}{{ {'a': {'b': 'c'}}.a.b }}{{ {'a': 1}['a'] }}{{ {1: 'one'}[1] }}"),
    # --- string methods ---
    ("methods_strip", "[{{ '  x  '.strip() }}][{{ '  x  '.lstrip() }}][{{ '  x  '.rstrip() }}][{{ 'xxhixx'.strip('x') }}][{{ '\\n\\nhi\\n'.lstrip('\\n') }}][{{ 'ab\\n'.rstrip('\\n') }}][{{ '\u3000y\u00a0'.strip() }}]"),
    ("methods_split", "{{ 'a,b,,c'.split(',') }}{{ '  a  b \\n c '.split() }}{{ 'x</think>y'.split('</think>')[-1] }}{{ 'abc'.split('z') }}"),
    ("methods_starts_ends", "{{ 'hello'.startswith('he') }}{{ 'hello'.endswith('lo') }}{{ 'hello'.startswith(('x', 'h')) }}{{ 'hello'.endswith('x') }}"),
    ("methods_case_replace", "{{ 'AbC'.lower() }}{{ 'AbC'.upper() }}{{ 'abc'.capitalize() }}{{ 'aaa'.replace('a', 'bb') }}{{ 'user'.title() if false else 'no' }}"),
    ("methods_dict", "{% set d = {'a': 1, 'b': 2} %}{{ d.keys() | list }}{{ d.values() | list }}{{ d.get('a') }}{{ d.get('z') }}{{ d.get('z', 'dflt') }}{{ d.items() | list }}"),
    # --- operators ---
    ("ops_arith", "{{ 1 + 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 1 / 2 }} {{ 4 / 2 }} {{ 1.5 * 2 }} {{ 0.1 + 0.2 }} {{ 10 - 3 * 2 }} {{ (10 - 3) * 2 }} {{ -3 }} {{ 'ab' * 3 }} {{ [0] * 2 }}"),
    ("ops_concat", "{{ 'a' ~ 1 ~ none ~ true ~ missing ~ [1] }}{{ 'x' + 'y' }}{{ [1] + [2] }}"),
    ("ops_compare", "{{ 1 < 2 < 3 }}{{ 3 > 2 > 2 }}{{ 'a' < 'b' }}{{ 1 == 1.0 }}{{ 'a' != 'b' }}{{ [1, 'a'] == [1, 'a'] }}{{ {'a': 1} == {'a': 1} }}{{ 2 >= 2 }}{{ 1 <= 0 }}"),
    ("ops_in", "{{ 'ell' in 'hello' }}{{ 'z' not in 'hello' }}{{ 2 in [1, 2] }}{{ 'a' in {'a': 1} }}{{ 'role' in messages[0] }}{{ 'x' in missing }}"),
    ("ops_logic", "[{{ '' or 'b' }}][{{ 'a' and 'b' }}][{{ 0 and 1 }}][{{ none or false }}][{{ not 0 }}][{{ not 'x' }}][{{ 'y' if false }}][{{ 'p' if true else 'q' }}][{{ 1 if 0 else 2 if 0 else 3 }}]"),
    # --- printing and literals ---
    ("print_values", "{{ none }}|{{ true }}|{{ false }}|{{ 1.0 }}|{{ 2.50 }}|{{ 1e3 }}|{{ [1, 'a', none, 'it\\'s'] }}|{{ {'k': 'v', 'n': [true]} }}|{{ missing }}|{{ (1, 2) }}|{{ 1_000 }}"),
    ("string_escapes", "{{ 'tab\\there' }}|{{ \"dq 'sq'\" }}|{{ 'sq \"dq\"' }}|{{ '\\u00e9\\x41\\101\\\\n' }}|{{ 'adjacent' ' strings' \"!\" }}|{{ '\\q unknown' }}"),
    ("set_block", "{% set x %}hello {{ messages | length }}{% endset %}[{{ x }}]{% set y = x | upper %}{{ y }}"),
    ("generation_tag", "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}<{{ m.content }}>{% endgeneration %}{% else %}{{ m.role }}{% endif %}{% endfor %}"),
    ("functions", "{{ range(3) | list }}{{ range(1, 7, 2) | list }}{{ range(5, 0, -2) | list }}{{ dict(a=1, b='x') }}{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d') }}"),
    ("special_vars", "[{{ bos_token }}][{{ eos_token }}][{{ add_generation_prompt }}][{{ tools }}][{{ documents }}]"),
    ("messages_override", "{% set messages = messages[1:] %}{{ messages | length }}{% set loop_messages = messages %}{{ loop_messages[0].role }}"),
    # --- errors jinja2 raises ---
    ("err_raise", "before{{ raise_exception('boom: ' + messages[0].role) }}"),
    ("err_undefined_attr", "{{ missing.attr }}"),
    ("err_undefined_add", "{{ missing + 'x' }}"),
    ("err_type_add", "{{ 'a' + 1 }}"),
    ("err_ns_assign", "{% set d = {} %}{% set d.x = 1 %}"),
    ("err_div_zero", "{{ 1 // 0 }}"),
    ("err_undefined_index", "{{ missing[0] }}"),
    ("err_unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
    ("err_iter_none", "{% for x in none %}{% endfor %}"),
]

# Templates that should be rejected as syntax errors (jinja2 raises
# TemplateSyntaxError); the C side must say LLM_ERR_BAD_FORMAT.
SYNTAX_ERRORS = [
    ("syn_unclosed_if", "{% if true %}x"),
    ("syn_stray_endfor", "x{% endfor %}"),
    ("syn_unclosed_var", "{{ 'a' "),
    ("syn_bad_expr", "{{ 1 + }}"),
    ("syn_unterminated_string", "{{ 'abc }}"),
]
