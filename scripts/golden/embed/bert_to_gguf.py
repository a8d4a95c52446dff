#!/usr/bin/env python3
"""Converts a BERT sentence-embedding folder (Hugging Face: config.json,
model.safetensors, tokenizer.json, optional sentence-transformers
modules.json / 1_Pooling) into an F32 GGUF the way llama.cpp's
convert_hf_to_gguf.py does (same tensor names and data, same metadata keys
and tokenizer encoding), with numpy and the gguf package only (no torch), so
CI can make it at test time:

    python3 scripts/golden/embed/bert_to_gguf.py ~/.cache/llm/models/all-MiniLM-L6-v2 out.gguf

On all-MiniLM-L6-v2 its tensors are byte-identical to those of
convert_hf_to_gguf.py --outtype f32 (llama-cpp-python 0.3.36's vendor copy),
and every metadata key the engine or llama.cpp reads has the same value.
"""
import json
import os
import re
import struct
import sys

import numpy as np

import gguf

ST_DTYPES = {"F32": np.float32, "F16": np.float16}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
    data = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt = ST_DTYPES.get(info["dtype"])
        if dt is None:
            out[name] = None  # e.g. the I64 position_ids buffer
            continue
        out[name] = np.frombuffer(data[base + b:base + e], dtype=dt).reshape(info["shape"])
    return out


LAYER = {
    "attention.self.query": "attn_q", "attention.self.key": "attn_k", "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output", "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up", "output.dense": "ffn_down", "output.LayerNorm": "layer_output_norm",
}
GLOBAL = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
SKIP = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


def gguf_name(hf):
    hf = hf[5:] if hf.startswith("bert.") else hf
    if hf in SKIP:
        return None
    if hf in GLOBAL:
        return GLOBAL[hf]
    m = re.fullmatch(r"encoder\.layer\.(\d+)\.(.+)\.(weight|bias)", hf)
    if m and m.group(2) in LAYER:
        return f"blk.{m.group(1)}.{LAYER[m.group(2)]}.{m.group(3)}"
    raise SystemExit(f"bert_to_gguf: unknown tensor {hf}")


def pooling_type(folder):
    """GGUF pooling_type from the sentence-transformers Pooling module (None: not stated)."""
    try:
        mods = json.load(open(os.path.join(folder, "modules.json")))
    except FileNotFoundError:
        return None
    for m in mods:
        if m.get("type", "").endswith("models.Pooling"):
            cfg = json.load(open(os.path.join(folder, m.get("path", ""), "config.json")))
            if cfg.get("pooling_mode_mean_tokens"):
                return gguf.PoolingType.MEAN
            if cfg.get("pooling_mode_cls_token"):
                return gguf.PoolingType.CLS
            if cfg.get("pooling_mode_lasttoken"):
                return gguf.PoolingType.LAST
            raise SystemExit("bert_to_gguf: pooling mode not supported by GGUF")
    return None


def main():
    args = sys.argv[1:]
    if_present = args and args[0] == "--if-present"  # test fixtures: no folder, nothing to do
    if if_present:
        args = args[1:]
    folder, out = args[0], args[1]
    if if_present and not os.path.isfile(os.path.join(folder, "config.json")):
        print(f"bert_to_gguf: {folder} not present; nothing written")
        if os.path.exists(out):
            os.remove(out)
        return
    cfg = json.load(open(os.path.join(folder, "config.json")))
    tj = json.load(open(os.path.join(folder, "tokenizer.json"), encoding="utf-8"))
    if tj["model"]["type"] != "WordPiece":
        raise SystemExit("bert_to_gguf: only WordPiece tokenizers")
    vocab = tj["model"]["vocab"]
    n_vocab = max(cfg["vocab_size"], len(vocab))
    tokens = [f"[PAD{i}]" for i in range(n_vocab)]
    for t, i in vocab.items():
        tokens[i] = t
    special = {a["id"] for a in tj.get("added_tokens", []) if a.get("special")}
    types = [gguf.TokenType.CONTROL if i in special else gguf.TokenType.NORMAL for i in range(n_vocab)]
    # llama.cpp's "phantom space" encoding of a WordPiece vocabulary.
    tokens = [t if ty == gguf.TokenType.CONTROL else (t[2:] if t.startswith("##") else "\u2581" + t)
              for t, ty in zip(tokens, types)]
    ids = {a["content"]: a["id"] for a in tj.get("added_tokens", [])}

    tmp = out + ".tmp"
    w = gguf.GGUFWriter(tmp, "bert")
    w.add_name(cfg.get("_name_or_path", os.path.basename(folder.rstrip("/"))).split("/")[-1])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_layer_norm_eps(cfg.get("layer_norm_eps", 1e-12))
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    w.add_causal_attention(False)
    pt = pooling_type(folder)
    if pt is not None:
        w.add_pooling_type(pt)
    w.add_token_type_count(cfg.get("type_vocab_size", 1))
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("jina-v2-en")  # the name llama.cpp's converter gives this vocabulary
    w.add_token_list(tokens)
    w.add_token_types(types)
    for key, add in (("[CLS]", w.add_bos_token_id), ("[SEP]", w.add_eos_token_id), ("[UNK]", w.add_unk_token_id),
                     ("[SEP]", w.add_sep_token_id), ("[PAD]", w.add_pad_token_id), ("[MASK]", w.add_mask_token_id)):
        if key in ids:
            add(ids[key])
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)
    w.add_add_sep_token(False)
    w.add_bool("tokenizer.ggml.normalizer.lowercase", bool((tj.get("normalizer") or {}).get("lowercase", True)))

    st = read_safetensors(os.path.join(folder, "model.safetensors"))
    for hf, arr in st.items():
        name = gguf_name(hf)
        if name is None:
            continue
        w.add_tensor(name, np.ascontiguousarray(arr, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
