"""The reference: the solution's code, written here (``reference()``). The checks compare the
learner's numbers with minigrad's own operations, not with it; ``bench/bench_capstone.py`` times
its classes."""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad.autograd import Function, once_differentiable
from minigrad.course.stages.s12_attention.gelu import gelu_tanh
from minigrad.course.stages.s12_attention.probing import EPS, GELU_C


def _array(t) -> np.ndarray:
    return t.detach().numpy()


class GELUFunction(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return minigrad.from_numpy(gelu_tanh(_array(x)))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        a = _array(x)
        t = np.tanh(GELU_C * (a + 0.044715 * a * a * a))
        slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * a * a)
        return minigrad.from_numpy(_array(grad) * slope)


class LayerNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        a = _array(x)
        centred = a - a.mean(-1, keepdims=True)
        rstd = 1 / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)
        xhat = centred * rstd
        ctx.save_for_backward(minigrad.from_numpy(xhat), minigrad.from_numpy(rstd), weight)
        return minigrad.from_numpy(xhat * _array(weight) + _array(bias))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        xhat, rstd, weight = (_array(t) for t in ctx.saved_tensors)
        g = _array(grad)
        dxhat = g * weight
        dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
        axes = tuple(range(g.ndim - 1))
        return (minigrad.from_numpy(dx), minigrad.from_numpy((g * xhat).sum(axes)),
                minigrad.from_numpy(g.sum(axes)), None)


class LayerNorm(nn.Module):
    def __init__(self, n_embd, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(minigrad.ones(n_embd))
        self.bias = nn.Parameter(minigrad.zeros(n_embd))

    def forward(self, x):
        return LayerNormFunction.apply(x, self.weight, self.bias, self.eps)


class CausalAttentionFunction(Function):
    @staticmethod
    def forward(ctx, q, k, v):
        qa, ka, va = _array(q), _array(k), _array(v)
        t, d = qa.shape[-2:]
        s = qa @ np.swapaxes(ka, -1, -2) / math.sqrt(d)
        s = np.where(np.tri(t, dtype=bool), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ctx.save_for_backward(q, k, v, minigrad.from_numpy(p))
        return minigrad.from_numpy(p @ va)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        qa, ka, va, p = (_array(t) for t in ctx.saved_tensors)
        g = _array(grad)
        dv = np.swapaxes(p, -1, -2) @ g
        dp = g @ np.swapaxes(va, -1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / math.sqrt(qa.shape[-1])
        return (minigrad.from_numpy(ds @ ka), minigrad.from_numpy(np.swapaxes(ds, -1, -2) @ qa),
                minigrad.from_numpy(dv))


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_head, c // self.n_head).permute(2, 0, 3, 1, 4)
        y = CausalAttentionFunction.apply(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class CrossEntropyFunction(Function):
    @staticmethod
    def forward(ctx, logits, targets):
        z, y = _array(logits), _array(targets)
        shifted = z - z.max(-1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        rows = np.arange(z.shape[0])
        ctx.save_for_backward(minigrad.from_numpy(np.exp(log_p)), targets)
        return minigrad.from_numpy(np.asarray(-log_p[rows, y].mean(), dtype=z.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        p, targets = (_array(t) for t in ctx.saved_tensors)
        d = p.copy()
        d[np.arange(p.shape[0]), targets] -= 1
        return minigrad.from_numpy(d * (_array(grad) / p.shape[0])), None


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln1 = LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln2 = LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(GELUFunction.apply(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd, n_head, n_layer):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(minigrad.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def reference() -> dict:
    return {"GELUFunction": GELUFunction, "LayerNormFunction": LayerNormFunction, "LayerNorm": LayerNorm,
            "CausalAttentionFunction": CausalAttentionFunction, "CausalSelfAttention": CausalSelfAttention,
            "CrossEntropyFunction": CrossEntropyFunction, "Block": Block, "GPT": GPT}

