"""The Llama-shaped model the probe times: random bf16 weights, plain PyTorch (needs torch).

One decoder, three passes over it:

- ``step`` (``decode`` in the saved result): one decode step, attention unfused, as two batched products
  and a float32 softmax, the query heads grouped by their KV head.
- ``step_sdpa`` (``decode_sdpa``): the same step with fused attention,
  ``torch.nn.functional.scaled_dot_product_attention`` over the KV cache.  The g = heads/kv_heads query
  heads of one KV head are passed as g query rows of that head (a decode query attends to every cached
  token, so no mask), which is exactly grouped-query attention and needs no repeated K or V.
- ``prefill`` (``prefill``): one forward pass over B sequences of L new tokens each from an empty cache,
  causal fused attention (SDPA with ``is_causal=True``); each KV head's K and V are repeated for its g query
  heads first (L x head_dim per head, small beside the pass's multiplies; it keeps every PyTorch version on
  a fused kernel).  The LM head multiplies only each sequence's last token, as a server computing its first
  token does.

No rotary embedding and no sampling: the shape of the work, not a usable model.  Norms are unfused RMSNorm
in every pass, so the decode passes differ only in their attention.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as fn


def rand(*shape: int, device: torch.device) -> torch.Tensor:
    return torch.randn(*shape, device=device, dtype=torch.bfloat16)


def params_read_per_step(m: dict) -> int:
    """Weights a decode step reads: every layer's projections and norms, and the LM head (not the
    embedding table, of which a step reads one row per sequence)."""
    return params_layers(m) + m["d"] * m["vocab"]


def params_layers(m: dict) -> int:
    """Weights of the layers alone (projections and norms): what every prompt token of a prefill multiplies."""
    d, h, kv, hd, f = m["d"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn"]
    return m["layers"] * (d * h * hd + 2 * d * kv * hd + h * hd * d + 3 * d * f + 2 * d)


class Decoder:
    """Random weights of a Llama-shaped decoder, a KV cache of ``context`` tokens per sequence (none when
    ``context`` is 0), and an input of ``batch`` x ``tokens`` hidden states."""

    def __init__(self, m: dict, batch: int, context: int, device: torch.device, tokens: int = 1) -> None:
        d, h, kv, hd, f, v = m["d"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn"], m["vocab"]
        self.m, self.batch, self.context, self.tokens = m, batch, context, tokens
        self.layers = [dict(wq=rand(d, h * hd, device=device), wk=rand(d, kv * hd, device=device),
                            wv=rand(d, kv * hd, device=device), wo=rand(h * hd, d, device=device),
                            w1=rand(d, f, device=device), w3=rand(d, f, device=device),
                            w2=rand(f, d, device=device), n1=torch.ones(d, device=device, dtype=torch.bfloat16),
                            n2=torch.ones(d, device=device, dtype=torch.bfloat16),
                            k=rand(batch, kv, context, hd, device=device) if context else None,
                            v=rand(batch, kv, context, hd, device=device) if context else None)
                       for _ in range(m["layers"])]
        self.head = rand(d, v, device=device)
        self.x = rand(batch, d, device=device) if tokens == 1 else rand(batch, tokens, d, device=device)

    @staticmethod
    def _norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

    def _ffn(self, x: torch.Tensor, layer: dict) -> torch.Tensor:
        y = self._norm(x, layer["n2"])
        return x + (fn.silu(y @ layer["w1"]) * (y @ layer["w3"])) @ layer["w2"]

    def step(self) -> torch.Tensor:
        """A decode step, attention unfused (two batched products and a float32 softmax)."""
        m, b = self.m, self.batch
        h, kv, hd = m["heads"], m["kv_heads"], m["head_dim"]
        x = self.x
        for layer in self.layers:
            y = self._norm(x, layer["n1"])
            q = (y @ layer["wq"]).view(b, kv, h // kv, hd)  # query heads grouped by their KV head
            scores = torch.matmul(q, layer["k"].transpose(-1, -2)) / math.sqrt(hd)  # [b, kv, h/kv, L]
            p = torch.softmax(scores.float(), dim=-1).to(x.dtype)
            att = torch.matmul(p, layer["v"]).reshape(b, h * hd)
            _ = y @ layer["wk"], y @ layer["wv"]  # the new token's K and V (read the weights like a real step)
            x = self._ffn(x + att @ layer["wo"], layer)
        return x @ self.head

    def step_sdpa(self) -> torch.Tensor:
        """A decode step, attention fused: SDPA of each KV head's g query heads (as g query rows) over the cache."""
        m, b = self.m, self.batch
        h, kv, hd = m["heads"], m["kv_heads"], m["head_dim"]
        x = self.x
        for layer in self.layers:
            y = self._norm(x, layer["n1"])
            q = (y @ layer["wq"]).view(b, kv, h // kv, hd)  # [b, kv, g, hd]: g query rows per KV head
            att = fn.scaled_dot_product_attention(q, layer["k"], layer["v"]).reshape(b, h * hd)
            _ = y @ layer["wk"], y @ layer["wv"]
            x = self._ffn(x + att @ layer["wo"], layer)
        return x @ self.head

    def prefill(self) -> torch.Tensor:
        """A forward pass over ``batch`` x ``tokens`` new tokens, causal fused attention; last token's logits."""
        m, b, n = self.m, self.batch, self.tokens
        h, kv, hd = m["heads"], m["kv_heads"], m["head_dim"]
        x = self.x
        for layer in self.layers:
            y = self._norm(x, layer["n1"])
            q = (y @ layer["wq"]).view(b, n, h, hd).transpose(1, 2)  # [b, h, n, hd]
            k = (y @ layer["wk"]).view(b, n, kv, hd).transpose(1, 2)  # [b, kv, n, hd]: the KV written
            v = (y @ layer["wv"]).view(b, n, kv, hd).transpose(1, 2)
            # query head i reads KV head i // g: each KV head copied for its g query heads (no host sync)
            k, v = (t[:, :, None].expand(b, kv, h // kv, n, hd).reshape(b, h, n, hd) for t in (k, v))
            att = fn.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = self._ffn(x + att.transpose(1, 2).reshape(b, n, h * hd) @ layer["wo"], layer)
        return x[:, -1] @ self.head
