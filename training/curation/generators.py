"""Text generators that answer the curation prompts: a local transformers model or an OpenAI-compatible API.

Both are wrapped by :class:`CachedGenerator`, which keeps every answer on disk (sqlite) keyed by a hash of
the generator's identity, its sampling parameters and the prompt, so an interrupted run resumes without
asking again and a finished run can be repeated for free.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "CachedGenerator",
    "GenerationError",
    "Generator",
    "LocalHFGenerator",
    "LocalHFSettings",
    "OpenAICompatibleGenerator",
    "OpenAISettings",
    "cache_key",
]

logger = logging.getLogger(__name__)


class GenerationError(RuntimeError):
    """Some prompts got no answer. ``partial`` maps prompt index -> answer for those that did."""

    def __init__(self, message: str, partial: Mapping[int, str] | None = None) -> None:
        super().__init__(message)
        self.partial: dict[int, str] = dict(partial or {})


@runtime_checkable
class Generator(Protocol):
    """Answers a batch of user prompts, one answer per prompt, in order."""

    @property
    def identity(self) -> str:
        """Which model answers (part of the cache key), e.g. ``"openai:https://host/v1:gpt-4o-mini"``."""
        ...

    @property
    def params(self) -> Mapping[str, Any]:
        """Decoding parameters that change the answer (part of the cache key)."""
        ...

    def generate(self, prompts: list[str]) -> list[str]: ...


def cache_key(identity: str, params: Mapping[str, Any], prompt: str) -> str:
    """sha256 of the generator identity, its parameters and the prompt."""
    payload = json.dumps([identity, dict(params), prompt], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def chat_messages(prompt: str, system_prompt: str | None) -> list[dict[str, str]]:
    """One user turn, after the system message when there is one."""
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*system, {"role": "user", "content": prompt}]


# ------------------------------------------------------------------------------------------ settings


@dataclass
class LocalHFSettings:
    """A transformers causal LM with a chat template (``generator: local_hf``)."""

    model: str = ""  # local directory or Hub repo id
    revision: str | None = None
    device: str = "cpu"  # cpu | cuda | mps | auto
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    max_new_tokens: int = 384
    temperature: float = 0.0  # 0 = greedy, reproducible
    top_p: float = 1.0
    batch_size: int = 4
    seed: int = 0
    local_files_only: bool = False
    cache_dir: str | None = None
    token_env: str | None = "HF_TOKEN"  # name of the environment variable holding a Hub token


@dataclass
class OpenAISettings:
    """An OpenAI-compatible ``/chat/completions`` endpoint (``generator: openai``)."""

    base_url: str = "https://api.openai.com/v1"
    model: str = ""
    api_key_env: str | None = "OPENAI_API_KEY"  # the variable's NAME; the key never goes in a config file
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    requests_per_minute: float | None = None
    concurrency: int = 4


# ------------------------------------------------------------------------------------------ local model


class LocalHFGenerator:
    """A transformers causal LM (local directory or Hub id) prompted through its chat template.

    Greedy decoding by default (``temperature=0``), so answers are reproducible; with ``temperature>0`` the
    sampling is seeded per batch. ``trust_remote_code`` is always off.

    Args:
        settings: The model and its decoding (:class:`LocalHFSettings`: the curation config's ``local_hf``); the
            Hub token is read from the environment variable it names.
        system_prompt: Optional system message.
    """

    def __init__(self, settings: LocalHFSettings, *, system_prompt: str | None = None) -> None:
        import torch  # lazy: loads torch only when a local model is asked for
        from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: loads torch

        self.settings = settings
        self.system_prompt = system_prompt
        self.model_name = str(settings.model)
        device = settings.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
        self.torch_device = torch.device(device)
        load_kwargs: dict[str, Any] = {
            "revision": settings.revision,
            "trust_remote_code": False,
            "local_files_only": settings.local_files_only,
            "cache_dir": settings.cache_dir,
            "token": os.environ.get(settings.token_env) if settings.token_env else None,
        }
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name, **load_kwargs)
        if not self.tokenizer.chat_template:
            raise ValueError(
                f"tokenizer of {self.model_name!r} has no chat template; use an instruction-tuned model "
                "or set tokenizer.chat_template before saving it"
            )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        torch_dtype = "auto" if settings.dtype == "auto" else getattr(torch, settings.dtype)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name, dtype=torch_dtype, **load_kwargs)
        self.model.to(self.torch_device).eval()

    @property
    def identity(self) -> str:
        return f"local_hf:{self.model_name}@{self.settings.revision or 'default'}"

    @property
    def params(self) -> Mapping[str, Any]:
        params: dict[str, Any] = {
            "max_new_tokens": self.settings.max_new_tokens,
            "temperature": self.settings.temperature,
            "system_prompt": self.system_prompt,
        }
        if self.settings.temperature > 0:
            params.update(top_p=self.settings.top_p, seed=self.settings.seed)
        return params

    def chat_text(self, prompt: str) -> str:
        """The exact model input for one prompt (chat template with the generation prompt)."""
        return self.tokenizer.apply_chat_template(chat_messages(prompt, self.system_prompt), tokenize=False,
                                                  add_generation_prompt=True)

    def generate(self, prompts: list[str]) -> list[str]:
        import torch  # lazy: loads torch
        from transformers import GenerationConfig  # lazy: loads torch

        sampling = self.settings.temperature > 0
        config = GenerationConfig(
            max_new_tokens=self.settings.max_new_tokens,
            do_sample=sampling,
            temperature=self.settings.temperature if sampling else None,
            top_p=self.settings.top_p if sampling else None,
            top_k=None,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        answers: list[str] = []
        for start in range(0, len(prompts), self.settings.batch_size):
            batch = [self.chat_text(p) for p in prompts[start : start + self.settings.batch_size]]
            encoded = self.tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=False)
            encoded = encoded.to(self.torch_device)
            if sampling:
                torch.manual_seed(self.settings.seed + start)
            with torch.inference_mode():
                output = self.model.generate(**encoded, generation_config=config)
            new_tokens = output[:, encoded["input_ids"].shape[1] :]
            answers.extend(t.strip() for t in self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True))
        return answers


# ------------------------------------------------------------------------------------------ HTTP API


class _RateLimiter:
    """At most ``requests_per_minute`` request starts per minute, evenly spaced, shared by all threads."""

    def __init__(self, requests_per_minute: float | None) -> None:
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next_at = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start_at = max(now, self._next_at)
            self._next_at = start_at + self.interval
        if start_at > now:
            time.sleep(start_at - now)


_RETRY_STATUS = frozenset({408, 409, 425, 429})


class OpenAICompatibleGenerator:
    """``POST {base_url}/chat/completions`` of any OpenAI-compatible server (OpenAI, vLLM, TGI, llama.cpp ...).

    ``base_url`` includes the API version, as in the OpenAI SDK: ``https://api.openai.com/v1``. The key is
    read from the environment variable named by ``api_key_env`` (no ``Authorization`` header if unset, which
    local servers accept). 429, 408, 5xx answers, timeouts and connection errors are retried with
    exponential backoff (``Retry-After`` honoured, capped at ``max_backoff_s``); other 4xx fail at once.

    Args:
        settings: The endpoint, model, sampling, retries and limits (:class:`OpenAISettings`: the curation
            config's ``openai``).
        system_prompt: Optional system message.
    """

    def __init__(self, settings: OpenAISettings, *, system_prompt: str | None = None) -> None:
        import httpx  # lazy: optional (training extra)

        self.settings = settings
        self.system_prompt = system_prompt
        self.base_url = settings.base_url.rstrip("/")
        self.concurrency = max(1, settings.concurrency)
        self._limiter = _RateLimiter(settings.requests_per_minute)
        self._headers = {"Content-Type": "application/json"}
        api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        elif settings.api_key_env:
            logger.warning("environment variable %s is not set; sending requests without an API key",
                           settings.api_key_env)
        self._client = httpx.Client(timeout=settings.timeout_s)

    @property
    def identity(self) -> str:
        return f"openai:{self.base_url}:{self.settings.model}"

    @property
    def params(self) -> Mapping[str, Any]:
        return {"temperature": self.settings.temperature, "max_tokens": self.settings.max_tokens,
                "system_prompt": self.system_prompt}

    def generate(self, prompts: list[str]) -> list[str]:
        results: dict[int, str] = {}
        errors: dict[int, Exception] = {}
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(prompts)))) as pool:
            futures = {pool.submit(self._complete, prompt): index for index, prompt in enumerate(prompts)}
            for future, index in futures.items():
                try:
                    results[index] = future.result()
                except GenerationError as error:
                    errors[index] = error
        if errors:
            first = errors[min(errors)]
            raise GenerationError(f"{len(errors)}/{len(prompts)} requests failed; first: {first}", partial=results)
        return [results[i] for i in range(len(prompts))]

    def close(self) -> None:
        self._client.close()

    def _complete(self, prompt: str) -> str:
        import httpx  # lazy: optional (training extra)

        payload = {
            "model": self.settings.model,
            "messages": chat_messages(prompt, self.system_prompt),
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
        }
        url = f"{self.base_url}/chat/completions"
        last_problem = "no attempt"
        for attempt in range(self.settings.max_retries + 1):
            self._limiter.wait()
            retry_after: float | None = None
            try:
                response = self._client.post(url, json=payload, headers=self._headers)
            except (httpx.TimeoutException, httpx.TransportError) as error:
                last_problem = f"{type(error).__name__}: {error}"
            else:
                if response.status_code == 200:
                    return _message_content(response)
                last_problem = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in _RETRY_STATUS and response.status_code < 500:
                    raise GenerationError(f"{url} answered {last_problem} (not retried)")
                retry_after = _retry_after_seconds(response.headers.get("retry-after"))
            if attempt == self.settings.max_retries:
                break
            delay = min(self.settings.max_backoff_s, self.settings.backoff_s * 2**attempt)
            if retry_after is not None:
                delay = min(self.settings.max_backoff_s, max(delay, retry_after))
            delay *= 1.0 + random.random() * 0.1  # jitter so parallel threads do not retry in lockstep
            logger.info("retrying %s in %.2fs after %s", url, delay, last_problem)
            time.sleep(delay)
        raise GenerationError(f"{url}: gave up after {self.settings.max_retries + 1} attempts; last: {last_problem}")


def _retry_after_seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff


def _message_content(response: Any) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise GenerationError(f"unexpected chat completion body: {response.text[:300]}") from error
    if not isinstance(content, str):
        raise GenerationError(f"chat completion without text content: {response.text[:300]}")
    return content


# ------------------------------------------------------------------------------------------ cache


class CachedGenerator:
    """Serve answers from an sqlite cache; ask the wrapped generator only for prompts it has not seen.

    Answers are committed after every batch, including the partial answers of a batch that failed, so
    nothing paid for is asked twice.
    """

    def __init__(self, inner: Generator, path: str | Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, identity TEXT, answer TEXT, created REAL)"
        )
        self._db.commit()
        self.hits = 0
        self.misses = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def params(self) -> Mapping[str, Any]:
        return self.inner.params

    def generate(self, prompts: list[str]) -> list[str]:
        keys = [cache_key(self.identity, self.params, prompt) for prompt in prompts]
        known = self._lookup(set(keys))
        todo: dict[str, int] = {}  # key -> first prompt index; equal prompts are asked once
        for index, key in enumerate(keys):
            if key not in known and key not in todo:
                todo[key] = index
        self.hits += len(prompts) - len(todo)
        self.misses += len(todo)
        if todo:
            todo_keys = list(todo)
            try:
                answers = self.inner.generate([prompts[todo[k]] for k in todo_keys])
            except GenerationError as error:
                fresh = {todo_keys[i]: answer for i, answer in error.partial.items()}
                self._store(fresh)
                known.update(fresh)
                partial = {i: known[k] for i, k in enumerate(keys) if k in known}
                raise GenerationError(str(error), partial=partial) from error
            fresh = dict(zip(todo_keys, answers))
            self._store(fresh)
            known.update(fresh)
        return [known[key] for key in keys]

    def close(self) -> None:
        self._db.close()
        close_inner = getattr(self.inner, "close", None)
        if callable(close_inner):
            close_inner()

    def _lookup(self, keys: set[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        key_list = list(keys)
        for start in range(0, len(key_list), 500):  # stay below sqlite's host-parameter limit
            chunk = key_list[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, answer FROM answers WHERE key IN ({marks})", chunk)
            found.update(dict(rows.fetchall()))
        return found

    def _store(self, answers: Mapping[str, str]) -> None:
        if not answers:
            return
        now = time.time()
        self._db.executemany(
            "INSERT OR REPLACE INTO answers (key, identity, answer, created) VALUES (?, ?, ?, ?)",
            [(key, self.identity, answer, now) for key, answer in answers.items()],
        )
        self._db.commit()
