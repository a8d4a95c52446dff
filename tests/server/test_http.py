"""llm-server over raw HTTP: SSE framing, the small endpoints, errors and
malformed input. After every bad request the server must keep serving."""
import json
import socket

import pytest

CHAT = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "temperature": 0}


def alive(server):
    st, _, body = server.request("GET", "/health")
    assert st == 200 and json.loads(body)["status"] == "ok"


def error_of(st, body, want_status):
    assert st == want_status, body
    e = json.loads(body)["error"]
    assert isinstance(e["message"], str) and e["message"] and e["type"]
    return e


def test_sse_framing(server):
    st, hd, body = server.request("POST", "/v1/chat/completions",
                                  dict(CHAT, stream=True, stream_options={"include_usage": True}))
    assert st == 200 and hd["content-type"].startswith("text/event-stream")
    text = body.decode()
    assert text.endswith("data: [DONE]\n\n")
    events = [e for e in text.split("\n\n") if e]
    datas = []
    for e in events:
        assert e.startswith("data: ") or e.startswith(":"), repr(e)
        if e.startswith("data: ") and e != "data: [DONE]":
            datas.append(json.loads(e[6:]))
    assert all(d["object"] == "chat.completion.chunk" for d in datas)
    assert len({d["id"] for d in datas}) == 1
    assert datas[-1]["choices"] == [] and datas[-1]["usage"]["completion_tokens"] <= 3
    assert datas[-2]["choices"][0]["finish_reason"] in ("stop", "length")


def test_tokenize_detokenize_template(server):
    st, _, body = server.request("POST", "/tokenize", {"content": "Hello world"})
    toks = json.loads(body)["tokens"]
    assert st == 200 and len(toks) == 2
    st, _, body = server.request("POST", "/detokenize", {"tokens": toks})
    assert st == 200 and json.loads(body)["content"] == "Hello world"
    st, _, body = server.request("POST", "/apply-template", {"messages": [{"role": "user", "content": "Yo"}]})
    assert st == 200
    assert json.loads(body)["prompt"].endswith("<|im_start|>user\nYo<|im_end|>\n<|im_start|>assistant\n")


def test_metrics_format(server):
    server.request("POST", "/v1/chat/completions", CHAT)
    m = server.metrics()
    assert m['llm_requests_total{outcome="success"}'] >= 1
    assert m["llm_time_to_first_token_seconds_count"] >= 1
    assert m['llm_e2e_request_latency_seconds_bucket{le="+Inf"}'] == m["llm_e2e_request_latency_seconds_count"]
    for k in ("llm_requests_running", "llm_requests_waiting", "llm_kv_blocks_used", "llm_kv_blocks_total",
              "llm_prefix_cache_queries_total", "llm_prefix_cache_hit_blocks_total", "llm_prompt_tokens_total",
              "llm_generation_tokens_total", "llm_inter_token_latency_seconds_count",
              "llm_request_queue_time_seconds_count"):
        assert k in m


@pytest.mark.parametrize("body,param", [
    (b'{"messages": [{"role": "user", "content": "Hi"}', None),          # truncated JSON
    (b'[1, 2]', None),                                                   # not an object
    (b'', None),                                                         # empty
    (b'{"messages": "Hi"}', "messages"),
    (b'{"messages": [{"role": 1, "content": "Hi"}]}', "messages"),
    (b'{"messages": [{"role": "user", "content": 5}]}', "messages"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "temperature": "hot"}', "temperature"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": "5"}', "max_tokens"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": -1}', "max_tokens"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1000000000000000}', "max_tokens"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "stream": "yes"}', "stream"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "stop": 3}', "stop"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "n": 2}', "n"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "logit_bias": {"abc": 1}}', "logit_bias"),
    (b'{"messages": [{"role": "user", "content": "Hi"}], "top_p": 3}', "top_p"),
    (b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}', None),  # invalid UTF-8
])
def test_bad_chat_requests(server, body, param):
    st, _, data = server.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    e = error_of(st, data, 400)
    if param:
        assert e["param"] == param, e
    alive(server)


def test_unknown_model_fields_paths_methods(server):
    st, _, data = server.request("POST", "/v1/chat/completions", dict(CHAT, model="no-such-model"))
    error_of(st, data, 404)
    st, _, data = server.request("POST", "/v1/chat/completions", dict(CHAT, some_future_field={"x": 1}))
    assert st == 200, data
    st, _, data = server.request("GET", "/v1/nothing")
    error_of(st, data, 404)
    st, _, data = server.request("GET", "/v1/chat/completions")
    error_of(st, data, 405)
    alive(server)


def test_huge_max_tokens_is_accepted(server):
    # EOS banned? No: forced. The first token is <|im_end|> (id 2), so the answer ends at once.
    st, _, data = server.request("POST", "/v1/chat/completions",
                                 dict(CHAT, max_tokens=10 ** 9, logit_bias={"2": 100}))
    assert st == 200, data
    assert json.loads(data)["choices"][0]["finish_reason"] == "stop"


def test_prompt_longer_than_context(server):
    st, _, data = server.request("POST", "/v1/completions", {"prompt": "word " * 2000, "max_tokens": 1})
    e = error_of(st, data, 400)
    assert "context" in e["message"]
    alive(server)


def test_ten_megabyte_body(server):
    big = b'{"prompt": "' + b"a" * (10 << 20) + b'"}'
    st, _, data = server.request("POST", "/v1/completions", big, {"Content-Type": "application/json"})
    error_of(st, data, 413)
    alive(server)


def test_client_disconnect_mid_stream_frees_blocks(server):
    before = server.metrics()
    s = socket.create_connection(("127.0.0.1", server.port))
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": 400, "temperature": 0, "stream": True}).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while got.count(b"data: ") < 3:
        chunk = s.recv(4096)
        assert chunk
        got += chunk
    assert server.metrics()["llm_kv_blocks_used"] > 0
    s.close()
    import time
    deadline = time.time() + 30
    while time.time() < deadline:
        m = server.metrics()
        if m["llm_kv_blocks_used"] == 0 and m['llm_requests_total{outcome="cancelled"}'] > \
                before['llm_requests_total{outcome="cancelled"}']:
            break
        time.sleep(0.1)
    assert m["llm_kv_blocks_used"] == 0
    assert m['llm_requests_total{outcome="cancelled"}'] == before['llm_requests_total{outcome="cancelled"}'] + 1
    assert m["llm_generation_tokens_total"] - before["llm_generation_tokens_total"] < 400
    alive(server)


def test_embeddings_float_and_base64_agree(server):
    import base64
    import struct
    st, _, f = server.request("POST", "/v1/embeddings", {"input": "hello", "encoding_format": "float"})
    assert st == 200
    st, _, b = server.request("POST", "/v1/embeddings", {"input": ["hello"], "encoding_format": "base64"})
    assert st == 200
    vf = json.loads(f)["data"][0]["embedding"]
    raw = base64.b64decode(json.loads(b)["data"][0]["embedding"])
    vb = struct.unpack("<%df" % (len(raw) // 4), raw)
    assert len(vf) == len(vb) == 576
    assert all(abs(x - y) < 1e-6 for x, y in zip(vf, vb))
    st, _, data = server.request("POST", "/v1/embeddings", {"input": []})
    error_of(st, data, 400)
