"""llm-server driven by the official openai client: every endpoint the
client speaks, streaming included, plus determinism of seeded requests."""
import concurrent.futures as cf
import json
import math

CHAT = [{"role": "user", "content": "Name three colours."}]


def test_models(client, model_id):
    models = client.models.list().data
    assert len(models) == 1
    assert models[0].id == model_id and models[0].object == "model"


def test_chat_whole(client, model_id):
    r = client.chat.completions.create(model=model_id, messages=CHAT, max_tokens=6, temperature=0)
    assert r.object == "chat.completion"
    c = r.choices[0]
    assert c.message.role == "assistant" and c.message.content
    assert c.finish_reason in ("length", "stop")
    assert r.usage.completion_tokens <= 6
    assert r.usage.prompt_tokens > 5
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_chat_stream_equals_whole_and_reports_usage(client, model_id):
    whole = client.chat.completions.create(model=model_id, messages=CHAT, max_tokens=6, temperature=0)
    chunks = list(client.chat.completions.create(model=model_id, messages=CHAT, max_tokens=6, temperature=0,
                                                 stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == whole.choices[0].message.content
    finals = [ch for ch in chunks if ch.choices and ch.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0].choices[0].finish_reason == whole.choices[0].finish_reason
    usage = chunks[-1]
    assert usage.choices == [] and usage.usage.completion_tokens == whole.usage.completion_tokens
    # The same prompt again: its full KV blocks come from the prefix cache.
    assert usage.usage.prompt_tokens_details.cached_tokens >= 16


def test_completions_whole_and_stream(client, model_id):
    r = client.completions.create(model=model_id, prompt="The capital of France is", max_tokens=5, temperature=0)
    assert r.object == "text_completion" and r.choices[0].text
    s = list(client.completions.create(model=model_id, prompt="The capital of France is", max_tokens=5,
                                       temperature=0, stream=True))
    assert "".join(ch.choices[0].text for ch in s if ch.choices) == r.choices[0].text


def test_stop_and_logit_bias(client, model_id, server):
    r = client.completions.create(model=model_id, prompt="1, 2, 3, 4,", max_tokens=12, temperature=0, stop=[","])
    assert "," not in r.choices[0].text and r.choices[0].finish_reason == "stop"
    # Banning the greedy first token changes the answer.
    base = client.completions.create(model=model_id, prompt="The capital of France is", max_tokens=1, temperature=0)
    st, _, body = server.request("POST", "/tokenize", {"content": base.choices[0].text})
    assert st == 200
    first = json.loads(body)["tokens"][0]
    banned = client.completions.create(model=model_id, prompt="The capital of France is", max_tokens=1,
                                       temperature=0, logit_bias={str(first): -100})
    assert banned.choices[0].text != base.choices[0].text


def test_seeded_requests_are_deterministic_in_any_batch(client, model_id):
    """A seeded request gives the same text alone and among other requests
    (bit-identical logits per sequence on the CPU backend)."""
    def ask(seed, content):
        return client.chat.completions.create(model=model_id, messages=[{"role": "user", "content": content}],
                                              max_tokens=8, temperature=0.9, seed=seed).choices[0].message.content
    alone = ask(42, "Write a word.")
    with cf.ThreadPoolExecutor(6) as ex:
        futs = [ex.submit(ask, 42, "Write a word.")] + [ex.submit(ask, 7 + i, f"Count to {i + 3}.") for i in range(5)]
        batched = futs[0].result()
        for f in futs[1:]:
            f.result()
    assert batched == alone


def test_embeddings(client, model_id):
    r = client.embeddings.create(model=model_id, input=["hello world", "goodbye"])
    assert len(r.data) == 2 and r.data[1].index == 1
    v = r.data[0].embedding
    assert len(v) == 576
    assert abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-3
    assert r.usage.prompt_tokens >= 3
