#!/usr/bin/env python3
"""Writes tests/torch/rope.txt: rotary position embedding as PyTorch models compute it, for
test_rope.c. Hugging Face's Llama / GPT-NeoX code (rotate_half: pairs (i, i + r/2)) and
GPT-J's (rotate_every_two: pairs (2i, 2i + 1)), in float32 as those models run, with
partial rotary (GPT-NeoX's 25%). Regenerate with Debian's python3-torch:
    python3 tests/torch/gen_rope.py > tests/torch/rope.txt
Format, per case: 'case PAIRING D R HEADS TOKENS THETA', a line of positions, a line of
the r/2 inverse frequencies (float32, as the model computes them), a line of the input
(TOKENS x HEADS x D), a line of the expected output. Floats as %.9g."""
import torch

torch.manual_seed(20261125)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def case(pairing, d, r, heads, positions, theta):
    tokens = len(positions)
    x = torch.randn(tokens, heads, d, dtype=torch.float32)
    inv_freq = 1.0 / (theta ** (torch.arange(0, r, 2, dtype=torch.int64).float() / r))
    t = torch.tensor(positions, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)  # [tokens, r/2]
    rot, rest = x[..., :r], x[..., r:]
    if pairing == 'halves':  # Hugging Face: emb = cat(freqs, freqs)
        emb = torch.cat((freqs, freqs), dim=-1)[:, None, :]
        out = rot * emb.cos() + rotate_half(rot) * emb.sin()
    else:  # GPT-J: each frequency twice in a row
        emb = torch.repeat_interleave(freqs, 2, dim=-1)[:, None, :]
        out = rot * emb.cos() + rotate_every_two(rot) * emb.sin()
    y = torch.cat((out, rest), dim=-1)
    fmt = lambda v: ' '.join('%.9g' % f for f in v.flatten().tolist())
    print('case %s %d %d %d %d %g' % (pairing, d, r, heads, tokens, theta))
    print(' '.join(str(p) for p in positions))
    print(fmt(inv_freq))
    print(fmt(x))
    print(fmt(y))


case('halves', 64, 64, 4, [0, 1, 2, 3, 17, 63], 10000.0)        # Llama (HF)
case('halves', 64, 16, 2, [0, 5, 31, 100, 1000, 2047], 10000.0)  # GPT-NeoX, 25% rotary
case('adjacent', 32, 32, 3, [0, 1, 9, 40, 511], 10000.0)         # GPT-J / Meta's Llama
case('adjacent', 64, 32, 2, [3, 4, 250], 500000.0)              # partial, Llama 3's base
