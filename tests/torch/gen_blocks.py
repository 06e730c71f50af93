#!/usr/bin/env python3
"""Writes tests/torch/blocks.bin: PyTorch's nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer (the 2017 blocks) as computed in float64, for
test_torch_blocks.c, which uses the weights as the state dict stores them (in_proj_weight
[3E, E] split by pointer offsets, nn.Linear's [out, in] with ATTN_TRANS; no transposes).

  d_model 48, 4 heads (head_dim 12), dim_feedforward 80, GELU (erf: ATTN_ACT_GELU),
  layer_norm_eps 1e-5, dropout 0, batch_first; post-LN (norm_first=False) and pre-LN
  (norm_first=True) run on the same weights (one state dict each for the encoder and the
  decoder layer). Every parameter is random, biases and norms included (PyTorch initializes
  the attention biases to 0 and the norms to 1, which would test nothing).

  encoder, 11 tokens:  none (no mask), pad (src_key_padding_mask), causal (src_mask the
                       causal mask), causal_pad (both);
  decoder, 11 tokens over a memory of 9: causal (tgt_mask causal), causal_mpad (plus
                       memory_key_padding_mask), full (no tgt_mask), full_pad (no tgt_mask;
                       tgt_key_padding_mask and memory_key_padding_mask).

Weights and inputs are float32 values; the outputs are computed in float64 on the same
values (module.double()), then stored as float32. The modules run in training mode with
dropout 0 (identity), so that PyTorch never takes its inference fast path (which zeroes
padded rows); a float64 re-implementation of both blocks checks the references here.
Regenerate with Debian's python3-torch (not a pyenv python without torch):
    /usr/bin/python3 tests/torch/gen_blocks.py tests/torch/blocks.bin
Format, little-endian, as gen_decoder_only.py: records of a 48-byte NUL-padded name,
u32 type (0 f32), u32 count, then count elements. Padding masks are stored as PyTorch has
them (1 = padded, ignored); attn's key_mask / mem_mask are their negation."""
import struct
import sys

import torch

torch.manual_seed(20261126)
E, H, F, T, M = 48, 4, 80, 11, 9
EPS = 1e-5
SRC_PAD = [2, 7, 10]  # padded encoder keys (not key 0: every causal row keeps a key)
TGT_PAD = [4, 9]      # padded decoder self-attention keys (non-causal run)
MEM_PAD = [1, 5, 8]   # padded memory keys


def randomize(mod):
    with torch.no_grad():
        for name, p in mod.named_parameters():
            if name.endswith('bias'):
                p.copy_(torch.randn_like(p) * 0.1)
            elif name.startswith('norm'):
                p.copy_(1.0 + torch.randn_like(p) * 0.1)
            else:
                p.copy_(torch.randn_like(p) * p.shape[1] ** -0.5)


def record(out, name, t):
    assert len(name) < 48
    data = t.detach().contiguous().reshape(-1).float()
    out.write(name.encode().ljust(48, b'\0'))
    out.write(struct.pack('<II', 0, data.numel()))
    out.write(data.numpy().tobytes())


def mask_vec(pads, n):
    m = torch.zeros(n, dtype=torch.bool)
    m[pads] = True
    return m


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).triu(1)  # True = not allowed


# ---- an independent float64 re-implementation (checks the references) ----
def ln(x, g, b):
    return torch.nn.functional.layer_norm(x, (E,), g, b, EPS)


def mha(sd, pre, xq, xkv, causal, kpad):
    w, b = sd[pre + 'in_proj_weight'], sd[pre + 'in_proj_bias']
    q = xq @ w[:E].T + b[:E]
    k = xkv @ w[E:2 * E].T + b[E:2 * E]
    v = xkv @ w[2 * E:].T + b[2 * E:]
    hd = E // H
    q, k, v = (z.reshape(z.shape[0], H, hd).transpose(0, 1) for z in (q, k, v))
    s = q @ k.transpose(1, 2) / hd ** 0.5
    if causal:
        s = s.masked_fill(causal_mask(s.shape[1]), float('-inf'))
    if kpad is not None:
        s = s.masked_fill(kpad[None, None, :], float('-inf'))
    o = (s.softmax(-1) @ v).transpose(0, 1).reshape(xq.shape[0], E)
    return o @ sd[pre + 'out_proj.weight'].T + sd[pre + 'out_proj.bias']


def ffn(sd, x):
    h = torch.nn.functional.gelu(x @ sd['linear1.weight'].T + sd['linear1.bias'])
    return h @ sd['linear2.weight'].T + sd['linear2.bias']


def my_encoder(sd, x, pre_ln, causal, kpad):
    n = lambda i, z: ln(z, sd['norm%d.weight' % i], sd['norm%d.bias' % i])
    if pre_ln:
        x = x + mha(sd, 'self_attn.', n(1, x), n(1, x), causal, kpad)
        return x + ffn(sd, n(2, x))
    x = n(1, x + mha(sd, 'self_attn.', x, x, causal, kpad))
    return n(2, x + ffn(sd, x))


def my_decoder(sd, x, mem, pre_ln, causal, tpad, mpad):
    n = lambda i, z: ln(z, sd['norm%d.weight' % i], sd['norm%d.bias' % i])
    if pre_ln:
        x = x + mha(sd, 'self_attn.', n(1, x), n(1, x), causal, tpad)
        x = x + mha(sd, 'multihead_attn.', n(2, x), mem, False, mpad)
        return x + ffn(sd, n(3, x))
    x = n(1, x + mha(sd, 'self_attn.', x, x, causal, tpad))
    x = n(2, x + mha(sd, 'multihead_attn.', x, mem, False, mpad))
    return n(3, x + ffn(sd, x))


def check(name, got, want):
    err = (got - want).abs().max().item()
    assert err < 1e-12, '%s: the float64 re-implementation differs by %g' % (name, err)


def main():
    kw = dict(d_model=E, nhead=H, dim_feedforward=F, dropout=0.0, activation='gelu',
              layer_norm_eps=EPS, batch_first=True)
    enc = torch.nn.TransformerEncoderLayer(**kw)
    dec = torch.nn.TransformerDecoderLayer(**kw)
    randomize(enc)
    randomize(dec)
    x = torch.randn(T, E)
    xd = torch.randn(T, E)
    mem = torch.randn(M, E)
    src_pad, tgt_pad, mem_pad = mask_vec(SRC_PAD, T), mask_vec(TGT_PAD, T), mask_vec(MEM_PAD, M)
    with open(sys.argv[1], 'wb') as out:
        record(out, 'enc.x', x)
        record(out, 'dec.x', xd)
        record(out, 'dec.mem', mem)
        record(out, 'enc.src_key_padding_mask', src_pad)
        record(out, 'dec.tgt_key_padding_mask', tgt_pad)
        record(out, 'dec.memory_key_padding_mask', mem_pad)
        for prefix, mod in (('enc.', enc), ('dec.', dec)):
            for k, v in mod.state_dict().items():
                record(out, prefix + k, v)
        x64, xd64, mem64 = x.double()[None], xd.double()[None], mem.double()[None]
        for norm_first, tag in ((False, 'post'), (True, 'pre')):
            e = torch.nn.TransformerEncoderLayer(norm_first=norm_first, **kw)
            e.load_state_dict(enc.state_dict())
            e.double().train()  # dropout 0: identity; training: no fast path
            sd = {k: v.double() for k, v in enc.state_dict().items()}
            for name, causal, pad in (('none', False, None), ('pad', False, src_pad),
                                      ('causal', True, None), ('causal_pad', True, src_pad)):
                y = e(x64, src_mask=causal_mask(T) if causal else None,
                      src_key_padding_mask=None if pad is None else pad[None])[0]
                check('enc.%s.%s' % (tag, name), y, my_encoder(sd, x64[0], norm_first, causal, pad))
                record(out, 'enc.%s.%s' % (tag, name), y)
            d = torch.nn.TransformerDecoderLayer(norm_first=norm_first, **kw)
            d.load_state_dict(dec.state_dict())
            d.double().train()
            sd = {k: v.double() for k, v in dec.state_dict().items()}
            for name, causal, tp, mp in (('causal', True, None, None),
                                         ('causal_mpad', True, None, mem_pad),
                                         ('full', False, None, None),
                                         ('full_pad', False, tgt_pad, mem_pad)):
                y = d(xd64, mem64, tgt_mask=causal_mask(T) if causal else None,
                      tgt_key_padding_mask=None if tp is None else tp[None],
                      memory_key_padding_mask=None if mp is None else mp[None])[0]
                check('dec.%s.%s' % (tag, name), y,
                      my_decoder(sd, xd64[0], mem64[0], norm_first, causal, tp, mp))
                record(out, 'dec.%s.%s' % (tag, name), y)


if __name__ == '__main__':
    main()
