"""The slim forward pass of a BERT-style encoder: its layers called as tensor operations on its own weights.

A transformers ``BertModel`` forward pass goes through about 90 module calls (each layer's attention, projections,
norms), a signature inspection per layer, output capture, mask building and a pooler nothing reads.
:class:`SlimBert` reads the same weights (the model's own parameters, not copies) and computes the same last hidden
states with ``F.linear``, ``F.layer_norm``, ``F.gelu`` and ``F.scaled_dot_product_attention``, with one attention
mask per pass (none when no row is padded).

:func:`slim_encoder` builds one only for a model it can stand for exactly: a ``BertModel`` whose layers are the
stock modules, with absolute positions, GELU, no decoder or cross-attention. For any other model it returns
``None`` and the CSE calls the model as it is.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["SlimBert", "slim_encoder"]


class SlimBert(nn.Module):
    """A BERT encoder's forward pass as plain tensor operations on the model's own parameters.

    Args:
        model: A transformers ``BertModel`` (checked by :func:`slim_encoder`).
    """

    def __init__(self, model: Any) -> None:
        super().__init__()
        config = model.config
        embeddings = model.embeddings
        self.word = embeddings.word_embeddings.weight
        self.position = embeddings.position_embeddings.weight
        self.token_type_table = embeddings.token_type_embeddings.weight  # every position's type is 0
        self.embedding_norm = (embeddings.LayerNorm.weight, embeddings.LayerNorm.bias, embeddings.LayerNorm.eps)
        # Parameters are referenced, never copied: a model moved to another device or dtype in place, or whose
        # weights change, is read as it is now.
        self.heads = config.num_attention_heads
        self.head_size = config.hidden_size // config.num_attention_heads
        self.layers = []
        for layer in model.encoder.layer:
            attention = layer.attention
            query = attention.self.query
            key = attention.self.key
            value = attention.self.value
            self.layers.append((
                query.weight, query.bias, key.weight, key.bias, value.weight, value.bias,
                attention.output.dense.weight, attention.output.dense.bias,
                attention.output.LayerNorm.weight, attention.output.LayerNorm.bias, attention.output.LayerNorm.eps,
                layer.intermediate.dense.weight, layer.intermediate.dense.bias,
                layer.output.dense.weight, layer.output.dense.bias,
                layer.output.LayerNorm.weight, layer.output.LayerNorm.bias, layer.output.LayerNorm.eps,
            ))
        self.scaling = self.head_size ** -0.5

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Last hidden states ``(B, L, d)`` of ``input_ids`` ``(B, L)``; ``attention_mask`` ``(B, L)`` (1: a token,
        0: padding) or ``None`` where no row is padded (the caller knows it without reading the device)."""
        batch, length = input_ids.shape
        # The model's order of additions: word + token type, then + position (float sums are not associative).
        hidden = F.embedding(input_ids, self.word) + self.token_type_table[0] + self.position[:length]
        hidden = F.layer_norm(hidden, (hidden.shape[-1],), *self.embedding_norm)
        mask = None if attention_mask is None else attention_mask.bool()[:, None, None, :]
        shape = (batch, length, self.heads, self.head_size)
        width = self.heads * self.head_size
        for (query_weight, query_bias, key_weight, key_bias, value_weight, value_bias, out_weight, out_bias,
             norm1_weight, norm1_bias, norm1_eps, up_weight, up_bias, down_weight, down_bias, norm2_weight,
             norm2_bias, norm2_eps) in self.layers:
            query = F.linear(hidden, query_weight, query_bias).view(shape).transpose(1, 2)
            key = F.linear(hidden, key_weight, key_bias).view(shape).transpose(1, 2)
            value = F.linear(hidden, value_weight, value_bias).view(shape).transpose(1, 2)
            attended = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=self.scaling)
            attended = attended.transpose(1, 2).reshape(batch, length, width)
            hidden = F.layer_norm(F.linear(attended, out_weight, out_bias) + hidden, (width,), norm1_weight,
                                  norm1_bias, norm1_eps)
            inner = F.gelu(F.linear(hidden, up_weight, up_bias))
            hidden = F.layer_norm(F.linear(inner, down_weight, down_bias) + hidden, (width,), norm2_weight,
                                  norm2_bias, norm2_eps)
        return hidden


def slim_encoder(model: Any) -> SlimBert | None:
    """A :class:`SlimBert` over ``model`` where it computes exactly what ``model`` does, else ``None``."""
    try:
        from transformers.models.bert import modeling_bert
    except ImportError:  # a transformers without BERT: the model runs as it is
        return None
    config = getattr(model, "config", None)
    if type(model) is not modeling_bert.BertModel or config is None:
        return None
    stock = (getattr(config, "hidden_act", None) == "gelu" and not config.is_decoder
             and not getattr(config, "add_cross_attention", False)
             and getattr(config, "position_embedding_type", "absolute") == "absolute"
             and getattr(config, "chunk_size_feed_forward", 0) == 0
             and getattr(config, "_attn_implementation", "sdpa") in ("sdpa", "eager"))
    if not stock:
        return None
    for layer in model.encoder.layer:
        modules = (layer.attention.self.query, layer.attention.self.key, layer.attention.self.value,
                   layer.attention.output.dense, layer.intermediate.dense, layer.output.dense)
        if type(layer) is not modeling_bert.BertLayer or any(type(module) is not nn.Linear for module in modules) \
                or type(layer.intermediate) is not modeling_bert.BertIntermediate:
            return None
    return SlimBert(model)
