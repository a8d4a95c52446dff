"""llm-server under load and over its life: 32 concurrent requests on a
small KV pool, the API key, /health while loading, SIGTERM."""
import concurrent.futures as cf
import json
import os
import signal
import tempfile
import threading
import time

from conftest import Server, require


def test_32_concurrent_requests_small_pool():
    """Each of 32 requests completes or gets a clean 503 with Retry-After;
    the server serves on and holds no KV block afterwards."""
    require()
    s = Server(["-c", "256", "-np", "4", "--kv-tokens", "256", "--queue", "8"])
    try:
        def one(i):
            return s.request("POST", "/v1/chat/completions",
                             {"messages": [{"role": "user", "content": f"Say the number {i}."}],
                              "max_tokens": 4, "temperature": 0.7, "seed": i, "stream": i % 2 == 0})
        with cf.ThreadPoolExecutor(32) as ex:
            res = list(ex.map(one, range(32)))
        ok = 0
        for st, hd, body in res:
            if st == 200:
                ok += 1
                if hd["content-type"].startswith("text/event-stream"):
                    assert body.decode().endswith("data: [DONE]\n\n")
                else:
                    assert json.loads(body)["choices"][0]["message"]["content"] is not None
            else:
                assert st == 503, body
                assert hd.get("retry-after") and json.loads(body)["error"]["message"]
        assert ok >= 12  # 4 running + 8 queued at the very least
        m = s.metrics()
        assert m["llm_kv_blocks_used"] == 0
        assert m['llm_requests_total{outcome="success"}'] == ok
        assert m['llm_requests_total{outcome="rejected"}'] == 32 - ok
        st, _, _ = s.request("POST", "/v1/completions", {"prompt": "Hi", "max_tokens": 2})
        assert st == 200
    finally:
        s.stop()
    assert s.proc.returncode == 0


def test_api_key():
    require()
    s = Server(["-c", "256", "--api-key", "s3cret"])
    try:
        body = {"prompt": "Hi", "max_tokens": 1}
        assert s.request("POST", "/v1/completions", body)[0] == 401
        assert s.request("POST", "/v1/completions", body, {"Authorization": "Bearer wrong"})[0] == 401
        assert s.request("GET", "/v1/models", None, {"Authorization": "Bearer s3cre"})[0] == 401
        assert s.request("POST", "/v1/completions", body, {"Authorization": "Bearer s3cret"})[0] == 200
        assert s.request("GET", "/metrics", None, {"Authorization": "Bearer s3cret"})[0] == 200
        assert s.request("GET", "/health")[0] == 200
    finally:
        s.stop()


def test_health_is_503_while_loading():
    """The model path is a FIFO nobody writes yet: loading blocks, the HTTP
    side already answers, /health says 503; then the load fails cleanly."""
    require()
    d = tempfile.mkdtemp()
    fifo = os.path.join(d, "model.gguf")
    os.mkfifo(fifo)
    s = Server([], wait_ready=False, model=fifo)
    try:
        st, _, body = s.request("GET", "/health")
        assert st == 503 and json.loads(body)["error"]["message"] == "Loading model"
        st, _, _ = s.request("POST", "/v1/completions", {"prompt": "Hi"})
        assert st == 503
        try:  # the loader may give up as soon as the FIFO opens (size 0): EPIPE is fine
            with open(fifo, "wb") as w:
                w.write(b"not a gguf")
        except BrokenPipeError:
            pass
        assert s.proc.wait(timeout=30) == 1
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        os.unlink(fifo)
        os.rmdir(d)


def test_sigterm_finishes_in_flight_and_exits_0():
    require()
    s = Server(["-c", "256", "--shutdown-timeout", "120"])
    out = {}

    def stream():
        out["res"] = s.request("POST", "/v1/completions",
                               {"prompt": "Once upon a time", "max_tokens": 32, "temperature": 0, "stream": True})
    t = threading.Thread(target=stream)
    t.start()
    deadline = time.time() + 30
    while s.metrics()["llm_requests_running"] < 1 and time.time() < deadline:
        time.sleep(0.02)
    s.proc.send_signal(signal.SIGTERM)
    t.join(60)
    assert s.proc.wait(timeout=60) == 0, "".join(s.log)
    st, _, body = out["res"]
    assert st == 200 and body.decode().endswith("data: [DONE]\n\n")


def test_sigterm_deadline_cancels_with_an_error_event():
    require()
    s = Server(["-c", "512", "--shutdown-timeout", "0"])
    out = {}

    def stream():
        out["res"] = s.request("POST", "/v1/completions",
                               {"prompt": "Once upon a time", "max_tokens": 400, "temperature": 0, "stream": True})
    t = threading.Thread(target=stream)
    t.start()
    deadline = time.time() + 30
    while s.metrics()["llm_time_to_first_token_seconds_count"] < 1 and time.time() < deadline:
        time.sleep(0.02)
    s.proc.send_signal(signal.SIGTERM)
    t.join(60)
    assert s.proc.wait(timeout=60) == 0, "".join(s.log)
    st, _, body = out["res"]
    last = body.decode().rstrip("\n").split("\n\n")[-1]
    assert st == 200 and last.startswith("data: {") and "shutting down" in json.loads(last[6:])["error"]["message"]


def test_host_ipv6_loopback_and_bad_host():
    """--host ::1 (or [::1]) serves over IPv6 loopback; a name that does not
    resolve is a usage error (exit 2) that names it, before the model loads."""
    require()
    import socket
    try:
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        import pytest
        pytest.skip("no IPv6 loopback on this machine")
    for host in ("::1", "[::1]"):
        s = Server(["--host", host, "-c", "256", "-np", "1"])
        try:
            assert s.host == "::1"
            st, _, body = s.request("GET", "/health")
            assert st == 200, body
        finally:
            s.stop()
    import subprocess
    from conftest import BIN, MODEL
    r = subprocess.run([BIN, "-m", MODEL, "--host", "no such host!", "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "no such host!" in r.stderr
