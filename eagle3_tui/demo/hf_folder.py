"""The demo model as a Hugging Face folder: config.json and model.safetensors of a LlamaForCausalLM
that `transformers` loads and that reproduces TinyDecoder's states (demo/model.py is a Llama: same
RMSNorm, rotary, attention, SwiGLU MLP, LM head tied or fitted; its massive activations are in the weights).

The safetensors file is written by hand (write_safetensors): the package does not depend on the
`safetensors` package.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
from typing import Any

import torch

_ST_DTYPES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32", torch.int64: "I64"}


def write_safetensors(tensors: dict[str, torch.Tensor], path: str, metadata: dict[str, str] | None = None) -> None:
    """The safetensors format by hand: u64 little-endian header size, JSON header, raw bytes.

    engines/ may not import the safetensors package (the remote box may lack it).
    """
    header: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        data = ctypes.string_at(t.data_ptr(), t.numel() * t.element_size())
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def hf_config(model) -> dict[str, Any]:
    """config.json of the LlamaForCausalLM that holds `model` (a TinyDecoder)."""
    cfg = model.cfg
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": cfg.vocab,
        "hidden_size": cfg.hidden,
        "intermediate_size": cfg.mlp,
        "num_hidden_layers": cfg.layers,
        "num_attention_heads": cfg.heads,
        "num_key_value_heads": cfg.heads,
        "head_dim": cfg.hidden // cfg.heads,
        "hidden_act": "silu",
        "rms_norm_eps": model.final_norm.eps,
        "rope_theta": 10000.0,
        "max_position_embeddings": 4096,
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": model.lm_head is None,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "pad_token_id": 0,
        "torch_dtype": "float32",  # the training run's dtype: identify runs it as the data was made
        "initializer_range": 0.02,
    }


def hf_tensors(model) -> dict[str, torch.Tensor]:
    """TinyDecoder's weights under Llama's names (fused qkv and gate_up split), lm_head when untied."""
    h, mlp = model.cfg.hidden, model.cfg.mlp
    out = {"model.embed_tokens.weight": model.embed.weight}
    for i, blk in enumerate(model.blocks):
        pre = f"model.layers.{i}."
        q, k, v = blk.qkv.weight.split(h, dim=0)
        out.update({
            pre + "input_layernorm.weight": blk.attn_norm.weight,
            pre + "self_attn.q_proj.weight": q,
            pre + "self_attn.k_proj.weight": k,
            pre + "self_attn.v_proj.weight": v,
            pre + "self_attn.o_proj.weight": blk.out.weight,
            pre + "post_attention_layernorm.weight": blk.mlp_norm.weight,
            pre + "mlp.gate_proj.weight": blk.gate_up.weight[:mlp],
            pre + "mlp.up_proj.weight": blk.gate_up.weight[mlp:],
            pre + "mlp.down_proj.weight": blk.down.weight,
        })
    out["model.norm.weight"] = model.final_norm.weight
    if model.lm_head is not None:
        out["lm_head.weight"] = model.lm_head
    return {name: t.detach().float().contiguous() for name, t in out.items()}


def write_model_folder(model, folder: str) -> list[str]:
    """config.json and model.safetensors of `model` in `folder`; returns the file names."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(hf_config(model), f, indent=2)
        f.write("\n")
    write_safetensors(hf_tensors(model), os.path.join(folder, "model.safetensors"), {"format": "pt"})
    return ["config.json", "model.safetensors"]
