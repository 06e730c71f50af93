#!/usr/bin/env python3
"""Writes tests/torch/decoder_only.bin: two tiny decoder-only models as PyTorch computes
them, for test_decoder_only.c, which loads the weights as stored (no transposes, no splits).

  llama: 2 layers, d_model 64, 4 query heads on 2 KV heads (head_dim 16), RoPE with the
         halves pairing over the whole head (Hugging Face's Llama), RMSNorm (eps 1e-5),
         SwiGLU MLP (d_ff 96); separate q/k/v/o, gate, up, down weights in nn.Linear's
         [out, in] layout, no biases.
  neox:  2 layers, d_model 64, 4 heads (head_dim 16), partial rotary (25%: 4 dims, halves
         pairing), LayerNorm with biases, parallel residual y = x + attn(ln1(x)) +
         mlp(ln2(x)), GELU (erf) MLP (d_ff 128), biases everywhere, q, k and v fused in one
         [3 d, d] tensor and bias ([Wq; Wk; Wv], as nn.MultiheadAttention stores them).

Weights are rounded to float16 (stored as f16, so the C side can use them as f16 or
widened to f32 and get the same values). Each model runs 39 tokens (7 prefilled, then 32
decoded one by one on the C side) in float32 as the models run, and in float64 on the same
values as the reference. Regenerate with Debian's python3-torch:
    python3 tests/torch/gen_decoder_only.py tests/torch/decoder_only.bin
Format, little-endian: records of a 48-byte NUL-padded name, u32 type (0 f32, 1 f16),
u32 count, then count elements."""
import struct
import sys

import torch

torch.manual_seed(20261125)
T = 39


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def ln(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(x, rot, theta):
    """x: [T, H, hd]; rotates the first rot dims by the halves pairing at positions 0.."""
    dt = x.dtype
    inv = 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=torch.int64).to(dt) / rot))
    f = torch.outer(torch.arange(x.shape[0], dtype=dt), inv)
    emb = torch.cat((f, f), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    xr, xp = x[..., :rot], x[..., rot:]
    return torch.cat((xr * cos + rotate_half(xr) * sin, xp), dim=-1)


def attention(q, k, v, heads, kv_heads):
    """q: [T, H, hd], k, v: [T, KVH, hd]; causal, grouped-query heads"""
    rep = heads // kv_heads
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    s = torch.einsum('thd,shd->hts', q, k) / (q.shape[-1] ** 0.5)
    n = q.shape[0]
    mask = torch.ones(n, n, dtype=torch.bool).triu(1)
    s = s.masked_fill(mask, float('-inf'))
    return torch.einsum('hts,shd->thd', s.softmax(-1), v).reshape(n, -1)


def half(*shape, scale=1.0, offset=0.0):
    return (offset + torch.randn(*shape) * scale).half().float()


def llama_weights(d=64, heads=4, kv=2, hd=16, ff=96):
    s = d ** -0.5
    return {'wq': half(heads * hd, d, scale=s), 'wk': half(kv * hd, d, scale=s),
            'wv': half(kv * hd, d, scale=s), 'wo': half(d, heads * hd, scale=s),
            'w_gate': half(ff, d, scale=s), 'w_up': half(ff, d, scale=s),
            'w_down': half(d, ff, scale=ff ** -0.5), 'attn_norm': half(d, scale=0.1, offset=1.0),
            'ffn_norm': half(d, scale=0.1, offset=1.0)}


def llama_layer(x, w, dt, heads=4, kv=2, hd=16):
    w = {k: v.to(dt) for k, v in w.items()}
    n = x.shape[0]
    h = rms(x, w['attn_norm'], 1e-5)
    q = rope((h @ w['wq'].T).view(n, heads, hd), hd, 10000.0)
    k = rope((h @ w['wk'].T).view(n, kv, hd), hd, 10000.0)
    v = (h @ w['wv'].T).view(n, kv, hd)
    r = x + attention(q, k, v, heads, kv) @ w['wo'].T
    h = rms(r, w['ffn_norm'], 1e-5)
    m = torch.nn.functional.silu(h @ w['w_gate'].T) * (h @ w['w_up'].T)
    return r + m @ w['w_down'].T


def neox_weights(d=64, ff=128):
    s = d ** -0.5
    return {'wqkv': half(3 * d, d, scale=s), 'bqkv': half(3 * d, scale=0.1),
            'wo': half(d, d, scale=s), 'bo': half(d, scale=0.1),
            'w_up': half(ff, d, scale=s), 'b_up': half(ff, scale=0.1),
            'w_down': half(d, ff, scale=ff ** -0.5), 'b_down': half(d, scale=0.1),
            'ln1_w': half(d, scale=0.1, offset=1.0), 'ln1_b': half(d, scale=0.1),
            'ln2_w': half(d, scale=0.1, offset=1.0), 'ln2_b': half(d, scale=0.1)}


def neox_layer(x, w, dt, heads=4, hd=16, rot=4):
    w = {k: v.to(dt) for k, v in w.items()}
    n, d = x.shape
    qkv = ln(x, w['ln1_w'], w['ln1_b'], 1e-5) @ w['wqkv'].T + w['bqkv']
    q = rope(qkv[:, :d].reshape(n, heads, hd), rot, 10000.0)
    k = rope(qkv[:, d:2 * d].reshape(n, heads, hd), rot, 10000.0)
    v = qkv[:, 2 * d:].reshape(n, heads, hd)
    a = attention(q, k, v, heads, heads) @ w['wo'].T + w['bo']
    h = ln(x, w['ln2_w'], w['ln2_b'], 1e-5)
    m = torch.nn.functional.gelu(h @ w['w_up'].T + w['b_up']) @ w['w_down'].T + w['b_down']
    return x + a + m


def record(out, name, t, f16):
    data = t.detach().contiguous().reshape(-1)
    out.write(name.encode().ljust(48, b'\0'))
    out.write(struct.pack('<II', 1 if f16 else 0, data.numel()))
    out.write(data.half().numpy().tobytes() if f16 else data.float().numpy().tobytes())


def model(out, prefix, make, layer):
    ws = [make() for _ in range(2)]
    x = torch.randn(T, 64)
    record(out, prefix + 'x', x, False)
    for i, w in enumerate(ws):
        for k, v in w.items():
            record(out, '%s%d.%s' % (prefix, i, k), v, True)
    for dt, tag in ((torch.float32, 'y32'), (torch.float64, 'y64')):
        y = x.to(dt)
        for w in ws:
            y = layer(y, w, dt)
        record(out, prefix + tag, y, False)


def main():
    with open(sys.argv[1], 'wb') as out:
        model(out, 'llama.', llama_weights, llama_layer)
        model(out, 'neox.', neox_weights, neox_layer)


if __name__ == '__main__':
    main()
