"""Context-relevant Task Descriptor (CTD): a small causal LM writes what the prompt asks for (paper §3.2).

Input rule for long prompts: a prompt over ``max_input_tokens`` keeps its first ``head_fraction`` of that
budget and fills the rest from its end, joined by a "[...]" line. Instructions and questions of real
prompts sit at their start or end (LongBench templates put the question last), so head and tail carry
the task while the middle is mostly context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from tpc_core.config import DEFAULT_HEAD_FRACTION, CTDConfig
from tpc_core.engine.cancellation import check_cancelled, generation_stop

__all__ = ["DEFAULT_HEAD_FRACTION", "ELISION", "REPETITION_PENALTY", "TaskDescriptor", "bound_prompt",
           "build_chat_text", "finish_description", "generation_options"]

ELISION = "\n[...]\n"
# Small instruct LMs loop on a phrase of the prompt without it; training's sampling uses the same value.
REPETITION_PENALTY = 1.15


def generation_options(config: CTDConfig, pad_token_id: int | None, *,
                       max_new_tokens: int | None = None) -> dict[str, Any]:
    """``generate`` keyword arguments of the CTD: the config's length and sampling, the shared penalty."""
    options: dict[str, Any] = {"max_new_tokens": max_new_tokens or config.max_new_tokens,
                               "do_sample": config.do_sample, "pad_token_id": pad_token_id,
                               "repetition_penalty": REPETITION_PENALTY}
    if not config.do_sample:
        options.update(temperature=None, top_p=None, top_k=None)
    return options


def bound_prompt(prompt: str, tokenizer: Any, max_input_tokens: int, head_fraction: float) -> str:
    """Shorten ``prompt`` to at most ``max_input_tokens`` tokens by keeping its head and tail (see module doc)."""
    encoding = tokenizer(prompt, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = encoding["offset_mapping"]
    if len(offsets) <= max_input_tokens:
        return prompt
    head = int(max_input_tokens * head_fraction)
    tail = max_input_tokens - head
    head_text = prompt[: offsets[head - 1][1]] if head else ""
    tail_text = prompt[offsets[len(offsets) - tail][0]:] if tail else ""
    return head_text + ELISION + tail_text


class TaskDescriptor:
    """Generates task descriptions with a causal LM, deterministically unless the config samples.

    Args:
        model: A ``AutoModelForCausalLM`` (any adapter already merged), on ``device``.
        tokenizer: Its tokenizer, left-padded, with a chat template if the model is a chat model.
        config: CTD settings.
        device: Where the model lives.
    """

    def __init__(self, model: Any, tokenizer: Any, config: CTDConfig, device: torch.device):
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self.device = device

    def build_chat_inputs(self, prompt: str) -> str:
        """The exact text the LM sees for ``prompt``; ``training/`` appends the target to this."""
        bounded = bound_prompt(prompt, self.tokenizer, self.config.max_input_tokens, self.config.head_fraction)
        return build_chat_text(self.tokenizer, self.config, bounded)

    def describe(self, prompts: Sequence[str], *, max_new_tokens: int | None = None) -> list[str]:
        """One task description per prompt (batched, ``config.batch_size`` at a time)."""
        descriptions: list[str] = []
        for first in range(0, len(prompts), self.config.batch_size):
            batch = [self.build_chat_inputs(p) for p in prompts[first: first + self.config.batch_size]]
            descriptions.extend(self._generate(batch, max_new_tokens or self.config.max_new_tokens))
        return descriptions

    def _generate(self, texts: list[str], max_new_tokens: int) -> list[str]:
        inputs = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        options = generation_options(self.config, self.tokenizer.pad_token_id, max_new_tokens=max_new_tokens)
        check_cancelled()
        with torch.inference_mode():
            output = self.model.generate(**inputs, **options, stopping_criteria=generation_stop())
        check_cancelled()  # generation ended early because the work was abandoned: its text is not a description
        new_tokens = output[:, inputs["input_ids"].shape[1]:].cpu()  # the one copy to the host
        return [finish_description(self.config.response_prefix, text)
                for text in self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)]


def build_chat_text(tokenizer: Any, config: CTDConfig, prompt: str) -> str:
    """Chat-formatted CTD input ending with the response prefix the model continues."""
    user_turn = config.instruction + prompt
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template([{"role": "user", "content": user_turn}], tokenize=False,
                                             add_generation_prompt=True)
    else:
        text = f"{user_turn}\n\n"
    return text + config.response_prefix


def finish_description(prefix: str, continuation: str) -> str:
    """Prefix + the first line of the continuation, trimmed to whole sentences where possible."""
    first_line = continuation.strip().split("\n", 1)[0].strip()
    if "." in first_line[:-1]:
        first_line = first_line[: first_line.rfind(".") + 1] if first_line.rfind(".") > 20 else first_line
    joiner = "" if not first_line or first_line[0] in ",.;:" else " "
    return (prefix + joiner + first_line).strip()
