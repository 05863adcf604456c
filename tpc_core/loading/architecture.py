"""Which kind of backbone a model config describes: a bidirectional encoder or a causal decoder.

A CSE is pooled differently for each (``tpc_core.engine.scoring.cse``); a checkpoint that says ``architecture="auto"``
is classified here, from the config alone, before any weights load.
"""

from __future__ import annotations

from typing import Any

__all__ = ["detect_architecture"]


def detect_architecture(model_config: Any) -> str:
    """'decoder' for causal-LM families (Llama, Qwen2, Mistral…), 'encoder' for masked-LM ones (BERT…).

    Args:
        model_config: A transformers ``PretrainedConfig`` (``AutoConfig.from_pretrained(...)``).
    """
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    if any(name.endswith("ForCausalLM") for name in (model_config.architectures or [])):
        return "decoder"
    model_type = getattr(model_config, "model_type", "")
    causal = model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    return "decoder" if causal or getattr(model_config, "is_decoder", False) else "encoder"
