"""Structured output through llm-server: response_format (json_object,
json_schema, text), llama-server's `grammar` and `json_schema` fields, on
/v1/chat/completions and /v1/completions, with the official openai client.
Every answer to a schema parses and validates with the `jsonschema` package,
unless it was cut by max_tokens (finish_reason "length"). Bad grammars,
unsupported schema keywords and unknown response_format types are 400s that
name the problem. Gemma 3 270M (when fetched) answers every schema too."""
import concurrent.futures as cf
import json
import os
import re

import pytest

from conftest import MODEL, Server, require

try:
    import jsonschema
except ImportError:  # CI installs it (.ci/run); say so visibly
    jsonschema = None

GEMMA = os.path.join(os.path.dirname(MODEL) if MODEL else "/root/.cache/llm/models", "gemma-3-270m-q4_k_m.gguf")
MAX_TOKENS = 96

OBJ = "object"
S = {"type": "string"}
I = {"type": "integer"}

SCHEMAS = {
    "person": {"type": OBJ, "properties": {"name": S, "age": I}, "required": ["name", "age"]},
    "nested": {"type": OBJ, "properties": {"user": {"type": OBJ, "properties": {
        "name": S, "address": {"type": OBJ, "properties": {"city": S, "zip": S}, "required": ["city"]}},
        "required": ["name", "address"]}}, "required": ["user"]},
    "deep": {"type": OBJ, "properties": {"a": {"type": OBJ, "properties": {"b": {"type": OBJ, "properties": {
        "c": {"type": "boolean"}}, "required": ["c"]}}, "required": ["b"]}}, "required": ["a"]},
    "string_list": {"type": "array", "items": S, "minItems": 1, "maxItems": 3},
    "digit_list": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "minItems": 2,
                   "maxItems": 4},
    "empty_list": {"type": "array", "items": I, "maxItems": 0},
    "objects_list": {"type": "array", "maxItems": 2, "items": {"type": OBJ, "properties": {
        "id": {"type": "integer", "minimum": 1, "maximum": 99}, "label": {"type": "string", "maxLength": 10}},
        "required": ["id", "label"]}},
    "enum": {"type": OBJ, "properties": {"color": {"enum": ["red", "green", "blue"]}}, "required": ["color"]},
    "enum_mixed": {"enum": [1, 2, "three", None, True]},
    "const": {"type": OBJ, "properties": {"version": {"const": 2}, "kind": {"const": "report"}},
              "required": ["version", "kind"]},
    "defs_ref": {"$defs": {"point": {"type": OBJ, "properties": {"x": I, "y": I}, "required": ["x", "y"]}},
                 "type": OBJ, "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
                 "required": ["from", "to"]},
    "definitions_ref": {"definitions": {"name": {"type": "string", "minLength": 1, "maxLength": 20}},
                        "type": OBJ, "properties": {"first": {"$ref": "#/definitions/name"},
                                                    "last": {"$ref": "#/definitions/name"}},
                        "required": ["first", "last"]},
    "recursive": {"$defs": {"node": {"type": OBJ, "properties": {"v": {"type": "integer", "minimum": 0,
                                                                       "maximum": 9},
                                                                 "kids": {"type": "array", "maxItems": 2,
                                                                          "items": {"$ref": "#/$defs/node"}}},
                                     "required": ["v"]}}, "$ref": "#/$defs/node"},
    "any_of": {"type": OBJ, "properties": {"value": {"anyOf": [S, I]}}, "required": ["value"]},
    "one_of": {"oneOf": [{"type": OBJ, "properties": {"cat": S}, "required": ["cat"]},
                         {"type": OBJ, "properties": {"dog": I}, "required": ["dog"]}]},
    "all_of": {"allOf": [{"type": OBJ, "properties": {"a": I}, "required": ["a"]},
                         {"type": OBJ, "properties": {"b": S}, "required": ["b"]}]},
    "nullable": {"type": OBJ, "properties": {"note": {"type": ["string", "null"]}}, "required": ["note"]},
    "null": {"type": "null"},
    "boolean": {"type": "boolean"},
    "number": {"type": OBJ, "properties": {"pi": {"type": "number"}}, "required": ["pi"]},
    "date": {"type": OBJ, "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"]},
    "time": {"type": OBJ, "properties": {"at": {"type": "string", "format": "time"}}, "required": ["at"]},
    "date_time": {"type": OBJ, "properties": {"ts": {"type": "string", "format": "date-time"}}, "required": ["ts"]},
    "uuid": {"type": OBJ, "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]},
    "int_bounds": {"type": OBJ, "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 100}},
                   "required": ["score"]},
    "int_exclusive": {"type": OBJ, "properties": {"n": {"type": "integer", "exclusiveMinimum": -5,
                                                        "exclusiveMaximum": 5}}, "required": ["n"]},
    "int_min_only": {"type": OBJ, "properties": {"year": {"type": "integer", "minimum": 1900}}, "required": ["year"]},
    "string_lengths": {"type": OBJ, "properties": {"code": {"type": "string", "minLength": 3, "maxLength": 8}},
                       "required": ["code"]},
    "pattern": {"type": OBJ, "properties": {"ref": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"}},
                "required": ["ref"]},
    "optional_props": {"type": OBJ, "properties": {"a": S, "b": I, "c": {"type": "boolean"}}},
    "no_extra": {"type": OBJ, "properties": {"k": S}, "required": ["k"], "additionalProperties": False},
    "map": {"type": OBJ, "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 10}},
    "tuple": {"type": "array", "prefixItems": [S, I, {"type": "boolean"}]},
    "events": {"type": "array", "maxItems": 2, "items": {"type": OBJ, "properties": {
        "when": {"type": "string", "format": "date"}, "what": {"type": "string", "maxLength": 16}},
        "required": ["when", "what"]}},
    "typeless": {"properties": {"title": S}, "required": ["title"]},
}



def _need_jsonschema():
    if jsonschema is None:
        pytest.skip("python package jsonschema missing (python3 -m pip install jsonschema)")


def _ask(client, model_id, name, schema, chat=True):
    fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if chat:
        r = client.chat.completions.create(
            model=model_id, max_tokens=MAX_TOKENS, temperature=0, response_format=fmt,
            messages=[{"role": "user", "content": f"Give an example JSON value for '{name}'. Reply with JSON only."}])
        return r.choices[0].finish_reason, r.choices[0].message.content
    # A model without a chat template: the same field on /v1/completions.
    r = client.completions.create(model=model_id, max_tokens=MAX_TOKENS, temperature=0,
                                  prompt=f"An example JSON value for '{name}': ", extra_body={"response_format": fmt})
    return r.choices[0].finish_reason, r.choices[0].text


# RFC 3339 full-time (JSON Schema's "time"); jsonschema checks it only with an extra package.
TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$")


def _format_checker():
    fc = jsonschema.Draft202012Validator.FORMAT_CHECKER
    fc = jsonschema.FormatChecker(formats=[f for f in fc.checkers if f != "time"])
    fc.checks("time")(lambda v: not isinstance(v, str) or TIME.match(v) is not None)
    return fc


def _check(name, schema, answer):
    finish, text = answer
    if finish == "length":
        return "length"
    assert finish == "stop", name
    value = json.loads(text)
    jsonschema.validate(value, schema, format_checker=_format_checker())
    return "valid"


def _run_all(client, model_id, names, chat=True):
    with cf.ThreadPoolExecutor(4) as ex:
        futs = {n: ex.submit(_ask, client, model_id, n, SCHEMAS[n], chat) for n in names}
        results = {n: f.result() for n, f in futs.items()}
    outcome = {}
    for n in names:
        try:
            outcome[n] = _check(n, SCHEMAS[n], results[n])
        except Exception as e:  # name the schema and show the text
            raise AssertionError(f"{n}: {e!r}\n{results[n][1]!r}") from e
    print(" ".join(f"{n}:{o}" for n, o in outcome.items()))
    return outcome


def test_schemas_validate(client, model_id):
    _need_jsonschema()
    assert len(SCHEMAS) >= 30
    outcome = _run_all(client, model_id, list(SCHEMAS))
    valid = [n for n, o in outcome.items() if o == "valid"]
    assert len(valid) >= len(SCHEMAS) * 2 // 3, outcome


def test_schemas_validate_gemma3():
    _need_jsonschema()
    require()
    if not os.access(GEMMA, os.R_OK):
        pytest.skip("Gemma 3 270M not fetched (scripts/fetch-model.sh gemma3-270m)")
    import openai
    s = Server(["-c", "512", "-np", "4", "--kv-tokens", "2048"], model=GEMMA)
    try:
        client = openai.OpenAI(base_url=s.base + "/v1", api_key="unused", max_retries=0, timeout=120)
        outcome = _run_all(client, client.models.list().data[0].id, list(SCHEMAS), chat=False)
        assert sum(o == "valid" for o in outcome.values()) >= len(SCHEMAS) // 2, outcome
    finally:
        s.stop()


def test_json_object_and_text(client, model_id):
    msgs = [{"role": "user", "content": "Describe a cat as a JSON object."}]
    r = client.chat.completions.create(model=model_id, messages=msgs, max_tokens=MAX_TOKENS, temperature=0,
                                       response_format={"type": "json_object"})
    c = r.choices[0]
    if c.finish_reason == "stop":
        assert isinstance(json.loads(c.message.content), dict)
    else:
        assert c.finish_reason == "length" and c.message.content.lstrip().startswith("{")
    plain = client.chat.completions.create(model=model_id, messages=msgs, max_tokens=8, temperature=0)
    text = client.chat.completions.create(model=model_id, messages=msgs, max_tokens=8, temperature=0,
                                          response_format={"type": "text"})
    assert text.choices[0].message.content == plain.choices[0].message.content


def test_length_inside_the_structure(client, model_id):
    schema = {"type": "array", "items": {"type": "string", "minLength": 20}, "minItems": 10}
    r = client.chat.completions.create(
        model=model_id, messages=[{"role": "user", "content": "List many long words."}], max_tokens=8,
        temperature=0, response_format={"type": "json_schema", "json_schema": {"name": "w", "schema": schema}})
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.content.startswith("[")
    assert r.usage.completion_tokens == 8


def test_grammar_and_json_schema_fields(client, model_id):
    yn = 'root ::= "yes" | "no"'
    r = client.chat.completions.create(model=model_id, messages=[{"role": "user", "content": "Is ice cold?"}],
                                       max_tokens=8, temperature=0, extra_body={"grammar": yn})
    assert r.choices[0].message.content in ("yes", "no") and r.choices[0].finish_reason == "stop"
    r = client.completions.create(model=model_id, prompt="Q: Is the sun hot?\nA:", max_tokens=8, temperature=0,
                                  extra_body={"grammar": yn})
    assert r.choices[0].text in ("yes", "no") and r.choices[0].finish_reason == "stop"
    schema = SCHEMAS["enum"]
    r = client.completions.create(model=model_id, prompt="The colour of the sky as JSON: ", max_tokens=32,
                                  temperature=0, extra_body={"json_schema": schema})
    assert r.choices[0].finish_reason == "stop"
    assert json.loads(r.choices[0].text)["color"] in ("red", "green", "blue")
    # Streaming follows the same grammar.
    chunks = list(client.chat.completions.create(
        model=model_id, messages=[{"role": "user", "content": "Is ice cold?"}], max_tokens=8, temperature=0,
        stream=True, extra_body={"grammar": yn}))
    assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) in ("yes", "no")


def _bad(client, model_id, **kw):
    import openai
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=model_id, messages=[{"role": "user", "content": "hi"}], max_tokens=4,
                                       **kw)
    assert e.value.status_code == 400
    return e.value.body["message"] if isinstance(e.value.body, dict) else str(e.value)


def test_errors_are_400_naming_the_problem(client, model_id):
    msg = _bad(client, model_id, extra_body={"grammar": 'root ::= "a" | undefined-rule'})
    assert "grammar" in msg and "undefined-rule" in msg, msg
    msg = _bad(client, model_id, extra_body={"grammar": 'root ::= ("a"'})
    assert "grammar: line" in msg, msg
    msg = _bad(client, model_id, response_format={"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "array", "uniqueItems": True}}})
    assert "uniqueItems" in msg, msg
    msg = _bad(client, model_id, extra_body={"json_schema": {"type": "object", "$ref": "https://x/y.json"}})
    assert "json_schema" in msg, msg
    msg = _bad(client, model_id, response_format={"type": "yaml"})
    assert "yaml" in msg, msg
    msg = _bad(client, model_id, response_format={"type": "json_object"}, extra_body={"grammar": 'root ::= "a"'})
    assert "at most one" in msg, msg
