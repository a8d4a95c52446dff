"""Fixtures of the llm-server suite: a real llm-server on a free loopback
port (--port 0; the address is read from its 'listening on' line), the
default model, small context and pool so the suite stays fast."""
import http.client
import json
import os
import re
import subprocess
import threading
import time

import pytest

BIN = os.environ.get("LLM_SERVER_BIN", "")
MODEL = os.environ.get("LLM_DEFAULT_MODEL", "")


class Server:
    def __init__(self, args, wait_ready=True, model=None):
        self.proc = subprocess.Popen([BIN, "-m", model or MODEL, "--port", "0", "-t", "2"] + args,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log = []
        self.port = None
        deadline = time.time() + 30
        while self.port is None:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("llm-server exited: " + "".join(self.log))
            self.log.append(line)
            m = re.search(r"listening on http://(127\.0\.0\.1|\[::1\]):(\d+)", line)
            if m:
                self.host = m.group(1).strip("[]")
                self.port = int(m.group(2))
            if time.time() > deadline:
                raise RuntimeError("llm-server did not start")
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()
        self.base = f"http://{m.group(1)}:{self.port}"
        if wait_ready:
            self.wait_ready()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            st, _, _ = self.request("GET", "/health")
            if st == 200:
                return
            time.sleep(0.05)
        raise RuntimeError("llm-server not ready: " + "".join(self.log))

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, headers dict, body bytes); body: dict -> JSON, bytes as is."""
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        h = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        hd = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, hd, data

    def metrics(self):
        st, _, data = self.request("GET", "/metrics")
        assert st == 200
        out = {}
        for line in data.decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def require():
    if not BIN or not os.access(BIN, os.X_OK):
        pytest.skip("llm-server not built (LLM_SERVER_BIN)")
    if not MODEL or not os.access(MODEL, os.R_OK):
        pytest.skip("default model not found (LLM_DEFAULT_MODEL; scripts/setup.sh)")


@pytest.fixture(scope="session")
def server():
    require()
    s = Server(["-c", "512", "-np", "4", "--kv-tokens", "2048"])
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)


@pytest.fixture(scope="session")
def client(server):
    import openai
    return openai.OpenAI(base_url=server.base + "/v1", api_key="unused", max_retries=0, timeout=120)


@pytest.fixture(scope="session")
def model_id(client):
    return client.models.list().data[0].id
