#!/usr/bin/env python3
"""Dump a GGUF file's metadata and tensor table as JSON with the `gguf`
Python package's GGUFReader (the independent reference), plus sampled
dequantized blocks of every tensor type present (gguf.quants.dequantize).

Output (tests/models/golden/smollm2_dump.json), read by tests/models/test_gguf_model.c:
{
  "version", "alignment", "data_offset", "file_size", "kv_count", "tensor_count",
  "kv": [{"key", "type", "value"} | {"key", "type": "array", "elem_type", "count",
         "first", "last"}],   (floats as JSON numbers: exact doubles of the float32)
  "tensors": [{"name", "type", "ne": [innermost first], "offset" (absolute), "size"}],
  "samples": [{"tensor", "type", "element", "bits": [uint32 of each float]}]
}
Usage: /root/.cache/llm/venv/bin/python scripts/golden/models/dump_gguf.py MODEL.gguf OUT.json
"""
import json
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType, quants

TYPE_NAMES = {t: t.name.lower().replace("float", "float") for t in GGUFValueType}
TYPE_NAMES = {GGUFValueType.UINT8: "uint8", GGUFValueType.INT8: "int8", GGUFValueType.UINT16: "uint16",
              GGUFValueType.INT16: "int16", GGUFValueType.UINT32: "uint32", GGUFValueType.INT32: "int32",
              GGUFValueType.FLOAT32: "float32", GGUFValueType.BOOL: "bool", GGUFValueType.STRING: "string",
              GGUFValueType.ARRAY: "array", GGUFValueType.UINT64: "uint64", GGUFValueType.INT64: "int64",
              GGUFValueType.FLOAT64: "float64"}


def scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return v


def main():
    path, out = sys.argv[1], sys.argv[2]
    r = GGUFReader(path)
    version = int(r.fields["GGUF.version"].parts[-1][0])
    kvs = []
    for name, f in r.fields.items():
        if name.startswith("GGUF."):
            continue  # the reader's pseudo-fields for the header
        t = f.types[0]
        e = {"key": name, "type": TYPE_NAMES[t]}
        if t == GGUFValueType.ARRAY:
            e["elem_type"] = TYPE_NAMES[f.types[1]]
            n = len(f.data)
            e["count"] = n
            if n:
                e["first"] = scalar(f.contents(0))
                e["last"] = scalar(f.contents(n - 1))
        else:
            e["value"] = scalar(f.contents())
        kvs.append(e)
    tensors = []
    for t in r.tensors:
        tensors.append({"name": t.name, "type": t.tensor_type.name,
                        "ne": [int(x) for x in t.shape], "offset": int(t.data_offset),
                        "size": int(t.n_bytes)})
    # Sampled blocks: per type present, the first and last block of three
    # tensors (first, middle, last of that type) plus one pseudo-random block.
    rng = np.random.default_rng(7)
    samples = []
    by_type = {}
    for t in r.tensors:
        by_type.setdefault(t.tensor_type, []).append(t)
    for qt, ts in sorted(by_type.items()):
        picks = [ts[0], ts[len(ts) // 2], ts[-1]]
        for t in picks:
            from gguf.constants import GGML_QUANT_SIZES
            bs, _ = GGML_QUANT_SIZES[qt]
            n_blocks = t.n_elements // bs
            blocks = sorted({0, n_blocks - 1, int(rng.integers(0, n_blocks))})
            row_len = int(t.shape[0])
            data = t.data.reshape(-1, t.data.shape[-1])
            for b in blocks:
                elem = b * bs
                row = elem // row_len
                vals = quants.dequantize(np.ascontiguousarray(data[row]), qt).reshape(-1)
                blk = np.ascontiguousarray(vals[elem % row_len: elem % row_len + bs], dtype=np.float32)
                samples.append({"tensor": t.name, "type": qt.name, "element": elem,
                                "bits": [int(x) for x in blk.view(np.uint32)]})
    doc = {"version": version, "alignment": int(r.alignment), "data_offset": int(r.data_offset),
           "file_size": int(r.data.nbytes), "kv_count": len(kvs), "tensor_count": len(tensors),
           "kv": kvs, "tensors": tensors, "samples": samples}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=0, ensure_ascii=True)
        f.write("\n")


if __name__ == "__main__":
    main()
