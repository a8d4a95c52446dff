#!/usr/bin/env python3
"""Goldens for the activation types Q8_1 and Q8_K, which gguf.quants does not
implement: made with ggml's own reference quantizers (quantize_row_q8_1_ref,
quantize_row_q8_K_ref) from the libggml-base shipped in the llama-cpp-python
package, called through ctypes. Same file format as make_dtype_golden.py
(kind 1: f32 input then quantized bytes): tests/models/golden/dtype_q_Q8_1.bin
and dtype_q_Q8_K.bin, checked byte for byte by tests/models/test_dtype.c.

Usage: /root/.cache/llm/venv/bin/python scripts/golden/models/make_q8_golden_ggml.py
"""
import ctypes
import glob
import os
import struct

import numpy as np

import llama_cpp

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "models", "golden")
LIB = sorted(glob.glob(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so*")))[0]
ggml = ctypes.CDLL(LIB)
rng = np.random.default_rng(8)


def quant_input(n_blocks, bs):
    x = rng.standard_normal((n_blocks, bs)).astype(np.float32)
    x *= rng.choice([1e-3, 0.02, 1.0, 30.0], size=(n_blocks, 1)).astype(np.float32)
    x[0] = 0.0
    x[1] = 0.75
    x[2] = np.abs(x[2]) + 1.0
    x[3] = (np.arange(bs, dtype=np.float32) - bs / 2) * 0.5
    x[4] = 0.0
    x[4, 7] = -3.0
    x[5, 3] = 2.5
    x[5, 9] = -2.5
    return np.ascontiguousarray(x.reshape(-1))


def run(fn_name, qtype, bs, bb, n_blocks):
    x = quant_input(n_blocks, bs)
    out = (ctypes.c_uint8 * (n_blocks * bb))()
    fn = getattr(ggml, fn_name)
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn.restype = None
    fn(x.ctypes.data, ctypes.addressof(out), ctypes.c_int64(x.size))
    raw = bytes(out)
    if qtype == 15:  # Q8_K: ggml leaves bsums of all-zero blocks unwritten; ours are 0
        raw = bytearray(raw)
        for b in range(n_blocks):
            blk = raw[b * bb:(b + 1) * bb]
            if struct.unpack_from("<f", blk, 0)[0] == 0.0:
                raw[b * bb:(b + 1) * bb] = bytes(bb)
        raw = bytes(raw)
    name = {9: "Q8_1", 15: "Q8_K"}[qtype]
    with open(os.path.join(OUT, f"dtype_q_{name}.bin"), "wb") as f:
        f.write(b"LLMG" + struct.pack("<5I", 1, 1, qtype, x.size, len(raw)))
        f.write(x.tobytes())
        f.write(raw)


def main():
    run("quantize_row_q8_1_ref", 9, 32, 36, 64)
    run("quantize_row_q8_K_ref", 15, 256, 292, 8)


if __name__ == "__main__":
    main()
