#!/usr/bin/env python3
"""Golden files for llm's reference (de)quantizers, made with the `gguf`
Python package (gguf.quants), the independent reference.

Writes tests/models/golden/dtype_deq_<TYPE>.bin and dtype_q_<TYPE>.bin.
Format (little-endian), read by tests/models/test_dtype.c:
    char     magic[4] = "LLMG"
    uint32   version  = 1
    uint32   kind     (0 = dequantize: raw then f32; 1 = quantize: f32 then raw)
    uint32   dtype    (GGUF numbering)
    uint32   n_elements
    uint32   n_raw_bytes
    then the two payloads in the order given by kind.

Usage: /root/.cache/llm/venv/bin/python scripts/golden/models/make_dtype_golden.py [OUTDIR]
Deterministic (fixed seed). Q8_1 and Q8_K are not in gguf.quants (activation
types): their dequantization golden is computed here with plain numpy from
the layout (x = d * q), which is independent of the C code.
"""
import os
import struct
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "tests", "models", "golden")
rng = np.random.default_rng(20261121)

# ggml's real Q8_1 block is 36 bytes (two halves); gguf's table says 40.
BLOCK = {T.F32: (1, 4), T.F16: (1, 2), T.BF16: (1, 2), T.Q4_0: (32, 18), T.Q4_1: (32, 20),
         T.Q5_0: (32, 22), T.Q5_1: (32, 24), T.Q8_0: (32, 34), T.Q8_1: (32, 36),
         T.Q2_K: (256, 84), T.Q3_K: (256, 110), T.Q4_K: (256, 144), T.Q5_K: (256, 176),
         T.Q6_K: (256, 210), T.Q8_K: (256, 292)}
# Byte offsets of the fp16 scale fields in each block, overwritten with sane
# values (random bytes there would give NaN/inf/huge scales).
HALF_FIELDS = {T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
               T.Q8_1: [0, 2], T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2],
               T.Q5_K: [0, 2], T.Q6_K: [208]}


def write(name, kind, qtype, n, first, second):
    path = os.path.join(OUT, name)
    raw = first if kind == 0 else second
    with open(path, "wb") as f:
        f.write(b"LLMG" + struct.pack("<5I", 1, kind, int(qtype), n, len(raw.tobytes())))
        f.write(first.tobytes())
        f.write(second.tobytes())


def sane_halves(count):
    mag = rng.uniform(1e-4, 0.5, count).astype(np.float32)
    sign = np.where(rng.random(count) < 0.5, -1.0, 1.0).astype(np.float32)
    return (mag * sign).astype(np.float16)


def random_blocks(qtype, n_blocks):
    bs, bb = BLOCK[qtype]
    raw = rng.integers(0, 256, size=(n_blocks, bb), dtype=np.uint8)
    for off in HALF_FIELDS.get(qtype, []):
        raw[:, off:off + 2] = sane_halves(n_blocks).view(np.uint8).reshape(n_blocks, 2)
    if qtype == T.Q8_K:
        raw[:, 0:4] = rng.uniform(-0.05, 0.05, n_blocks).astype(np.float32).view(np.uint8).reshape(n_blocks, 4)
    return raw


def dequant_golden(qtype, n_blocks):
    bs, bb = BLOCK[qtype]
    if qtype == T.F16:
        h = rng.integers(0, 65536, size=2048, dtype=np.uint16)
        h = np.concatenate([h, np.array([0, 0x8000, 1, 0x8001, 0x3ff, 0x400, 0x7bff, 0xfbff,
                                         0x7c00, 0xfc00, 0x3c00, 0x3555], dtype=np.uint16)])
        h = h[((h & 0x7c00) != 0x7c00) | ((h & 0x3ff) == 0)]  # drop NaNs (payload rules differ by CPU)
        h = h[: (len(h) // 32) * 32]
        raw = h.view(np.uint8)
        ref = quants.dequantize(raw, T.F16)
    elif qtype == T.BF16:
        h = rng.integers(0, 65536, size=2048, dtype=np.uint16)
        raw = h.view(np.uint8)
        ref = quants.dequantize(raw, T.BF16)
    elif qtype == T.F32:
        ref = rng.standard_normal(512).astype(np.float32)
        raw = ref.view(np.uint8)
    elif qtype == T.Q8_1:
        raw = random_blocks(qtype, n_blocks)
        d = raw[:, 0:2].copy().view(np.float16).astype(np.float32)
        ref = (raw[:, 4:].view(np.int8).astype(np.float32) * d).reshape(-1)
    elif qtype == T.Q8_K:
        raw = random_blocks(qtype, n_blocks)
        d = raw[:, 0:4].copy().view(np.float32)
        ref = (d * raw[:, 4:260].copy().view(np.int8).astype(np.float32)).reshape(-1)
    else:
        raw = random_blocks(qtype, n_blocks)
        ref = quants.dequantize(raw.reshape(1, -1), qtype).reshape(-1)
    ref = np.ascontiguousarray(ref, dtype=np.float32)
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    write(f"dtype_deq_{qtype.name}.bin", 0, qtype, ref.size, raw, ref)


def quant_input(n_blocks, bs):
    x = rng.standard_normal((n_blocks, bs)).astype(np.float32)
    x *= rng.choice([1e-3, 0.02, 1.0, 30.0], size=(n_blocks, 1)).astype(np.float32)
    # Edge blocks: all zero, constant, all positive, exact .5 ties, one spike,
    # repeated max magnitude with both signs (first one must win).
    x[0] = 0.0
    x[1] = 0.75
    x[2] = np.abs(x[2]) + 1.0
    x[3] = (np.arange(bs, dtype=np.float32) - bs / 2) * 0.5
    x[4] = 0.0
    x[4, 7] = -3.0
    x[5, 3] = 2.5
    x[5, 9] = -2.5
    return x.reshape(-1)


def quant_golden(qtype, n_blocks):
    bs, bb = BLOCK[qtype]
    if qtype in (T.F16, T.BF16):
        x = np.concatenate([
            rng.standard_normal(1024).astype(np.float32),
            (rng.standard_normal(512) * 1e-6).astype(np.float32),   # f16 subnormals
            (rng.standard_normal(256) * 1e5).astype(np.float32),    # f16 overflow
            np.array([0.0, -0.0, 65504.0, 65520.0, 65519.996, 2.0**-24, 2.0**-25, 3 * 2.0**-25,
                      1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, np.inf, -np.inf, 6.1035156e-05,
                      6.0975552e-05, 1e-8, 1.00048828125], dtype=np.float32)])
        x = x[: (len(x) // 32) * 32]
        if qtype == T.F16:
            with np.errstate(over="ignore"):
                raw = quants.quantize(x, T.F16).view(np.uint8)
        else:
            raw = quants.quantize(x, T.BF16).view(np.uint8)
    else:
        x = quant_input(n_blocks, bs)
        raw = quants.quantize(x.reshape(1, -1), qtype).reshape(-1)
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    write(f"dtype_q_{qtype.name}.bin", 1, qtype, x.size, np.ascontiguousarray(x, np.float32), raw)


def main():
    os.makedirs(OUT, exist_ok=True)
    for qtype in BLOCK:
        dequant_golden(qtype, 64 if BLOCK[qtype][0] == 32 else 8)
    for qtype in (T.Q8_0, T.Q4_0, T.Q4_1, T.F16, T.BF16, T.Q5_0, T.Q5_1):
        quant_golden(qtype, 64)


if __name__ == "__main__":
    main()
