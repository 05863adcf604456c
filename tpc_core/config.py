"""The TPC checkpoint configuration: ``tpc_config.json``.

A TPC checkpoint is a directory (or Hub repo) holding this file plus, optionally, the trained parts
(PEFT adapters, full weights, the rows of the added special-token embeddings). Base models are referenced
by Hub id and revision, so a checkpoint carries only what training changed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["CONFIG_NAME", "DEFAULT_HEAD_FRACTION", "FORMAT_VERSION", "HUB_ID", "AgnosticConfig", "CSEConfig",
           "CTDConfig", "ScorerConfig", "TPCConfig", "check_field_types"]

CONFIG_NAME = "tpc_config.json"
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
FORMAT_VERSION = 1
# Share of a long prompt's CTD input taken from its head (instructions and questions sit at either end).
DEFAULT_HEAD_FRACTION = 0.25
_T = TypeVar("_T")
_UnionType = type(int | None)


_KINDS: dict[Any, tuple[str, tuple[type, ...]]] = {
    int: ("an int", (int,)), float: ("a number", (int, float)), bool: ("a bool", (bool,)), str: ("a str", (str,)),
}


def check_field_types(instance: Any, section: str) -> None:
    """Raise a ``ValueError`` naming ``section.key`` for a value of the wrong JSON type (e.g. ``"512"`` for 512).

    Only scalar fields are checked (int, float, bool, str, each optionally ``None``); a bool is not a number.
    """
    hints = typing.get_type_hints(type(instance))
    for item in dataclasses.fields(instance):
        hint = hints[item.name]
        options = set(typing.get_args(hint)) if typing.get_origin(hint) in (typing.Union, _UnionType) else {hint}
        nullable = type(None) in options
        scalar = [option for option in options if option in _KINDS]
        if len(scalar) != 1:
            continue
        label, accepted = _KINDS[scalar[0]]
        value = getattr(instance, item.name)
        if value is None and nullable:
            continue
        if not isinstance(value, accepted) or (scalar[0] is not bool and isinstance(value, bool)):
            raise ValueError(f"{section}.{item.name} must be {label}{' or null' if nullable else ''}, got "
                             f"{type(value).__name__} {value!r}.")


def _from_dict(cls: type[_T], data: dict[str, Any], where: str) -> _T:
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(data).__name__}.")
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"Unknown key(s) {unknown} in {where}; known keys: {sorted(known)}.")
    return cls(**data)


@dataclass
class CSEConfig:
    """Context-aware Sentence Encoder settings.

    Attributes:
        base_model: Hub id or path (relative to the checkpoint) of the base encoder or decoder.
        base_revision: Hub revision of the base model (a commit hash pins it).
        architecture: "encoder" (BERT-like), "decoder" (made bidirectional, LLM2Vec-style) or "auto".
        weights_dir: Checkpoint sub-directory with full fine-tuned weights (replaces ``base_model``).
        adapter_dir: Checkpoint sub-directory with a PEFT (LoRA) adapter for the base model.
        extra_embeddings: Checkpoint file (safetensors) with trained rows of the added special tokens.
        adapter_repo: Hub repo of a PEFT (LoRA) adapter for the base model (instead of ``adapter_dir``);
            see ``tpc_core.loading.hub_cse``.
        adapter_revision: Hub revision of ``adapter_repo`` (a commit hash pins it).
        adapter_allow_bin: Accept an adapter published only as ``adapter_model.bin``, read with
            ``torch.load(weights_only=True)`` (never a full unpickler). Off: safetensors only.
        tokenizer_repo: Hub repo of the tokenizer (default: the base model's).
        tokenizer_revision: Hub revision of ``tokenizer_repo``.
        pooling: "marker" (hidden state at ``<end_of_sent>`` / ``<end_of_question>``), "mean"
            (mean over the sentence's own tokens, computed inside its context window) or "cpc" (CPC's
            representation: "mean" over windows without any special token, no BOS, and the question's
            mean over its own tokens, encoded alone without special tokens).
        use_special_tokens: Insert the markers after every sentence and question.
        end_of_sentence_token: Marker appended to every sentence.
        end_of_question_token: Marker appended to the question.
        max_window_tokens: Tokens per encoder window (model's limit, special tokens included).
        window_overlap_tokens: Context shared by consecutive windows, so no sentence sits at a cut.
        batch_size: Windows per forward pass.
    """

    base_model: str
    base_revision: str | None = None
    architecture: str = "auto"
    weights_dir: str | None = None
    adapter_dir: str | None = None
    extra_embeddings: str | None = None
    adapter_repo: str | None = None
    adapter_revision: str | None = None
    adapter_allow_bin: bool = False
    tokenizer_repo: str | None = None
    tokenizer_revision: str | None = None
    pooling: str = "marker"
    use_special_tokens: bool = True
    end_of_sentence_token: str = "<end_of_sent>"
    end_of_question_token: str = "<end_of_question>"
    max_window_tokens: int = 512
    window_overlap_tokens: int = 128
    batch_size: int = 8

    def __post_init__(self) -> None:
        check_field_types(self, "cse")
        if self.architecture not in {"auto", "encoder", "decoder"}:
            raise ValueError(f"cse.architecture must be 'auto', 'encoder' or 'decoder', got {self.architecture!r}.")
        if self.pooling not in {"marker", "mean", "cpc"}:
            raise ValueError(f"cse.pooling must be 'marker', 'mean' or 'cpc', got {self.pooling!r}.")
        if self.pooling == "marker" and not self.use_special_tokens:
            raise ValueError("cse.pooling='marker' needs use_special_tokens=True.")
        if self.pooling == "cpc" and self.use_special_tokens:
            raise ValueError("cse.pooling='cpc' adds no markers: set use_special_tokens=False.")
        self._check_hub_parts()
        if self.max_window_tokens < 16:
            raise ValueError(f"cse.max_window_tokens must be >= 16, got {self.max_window_tokens}.")
        if not 0 <= self.window_overlap_tokens < self.max_window_tokens // 2:
            raise ValueError("cse.window_overlap_tokens must be >= 0 and < max_window_tokens / 2.")
        if self.batch_size < 1:
            raise ValueError("cse.batch_size must be >= 1.")

    def _check_hub_parts(self) -> None:
        """Hub parts are Hub ids (never paths: a checkpoint must not reach outside itself)."""
        keys = ("adapter_repo", "tokenizer_repo") + (("base_model",) if self.from_hub_parts else ())
        for key in keys:
            value = getattr(self, key)
            if value is not None and not (isinstance(value, str) and HUB_ID.match(value) and ".." not in value):
                raise ValueError(f"cse.{key} must be a Hub repo id like 'org/name', got {value!r}.")
        if self.adapter_repo and (self.adapter_dir or self.weights_dir):
            raise ValueError("cse.adapter_repo excludes cse.adapter_dir and cse.weights_dir: give one adapter source.")
        if self.adapter_revision and not self.adapter_repo:
            raise ValueError("cse.adapter_revision needs cse.adapter_repo.")
        if self.tokenizer_revision and not self.tokenizer_repo:
            raise ValueError("cse.tokenizer_revision needs cse.tokenizer_repo.")
        if not isinstance(self.adapter_allow_bin, bool):
            raise ValueError(f"cse.adapter_allow_bin must be true or false, got {self.adapter_allow_bin!r}.")

    @property
    def from_hub_parts(self) -> bool:
        """Whether the CSE is assembled from Hub repos (base + adapter + tokenizer; ``tpc_core.loading.hub_cse``)."""
        return self.adapter_repo is not None or self.tokenizer_repo is not None


@dataclass
class CTDConfig:
    """Context-relevant Task Descriptor settings.

    Attributes:
        base_model: Hub id or path of the causal LM.
        base_revision: Hub revision of the base model.
        weights_dir: Checkpoint sub-directory with full fine-tuned weights.
        adapter_dir: Checkpoint sub-directory with a PEFT (LoRA) adapter.
        instruction: User-turn instruction placed before the prompt.
        response_prefix: Start of the assistant turn; the model continues it. Small instruct models answer
            the prompt instead of describing its task without it.
        max_input_tokens: Prompts longer than this keep their head and tail (see ``tpc_core.engine.task.ctd``).
        head_fraction: Share of ``max_input_tokens`` taken from the head of a long prompt.
        max_new_tokens: Length limit of the task description.
        do_sample: Sample instead of greedy decoding (off: deterministic by default).
        batch_size: Prompts per generate call.
    """

    base_model: str
    base_revision: str | None = None
    weights_dir: str | None = None
    adapter_dir: str | None = None
    # Measured on dev prompts with SmolLM2-135M: asking to restate the question word for word recovers a
    # hidden question far more often than asking for a free description.
    instruction: str = (
        "Read the following prompt and state, in one sentence, exactly what it asks for. If it contains a "
        "question or a request, repeat that question word for word. Do not answer it.\n\nPrompt:\n"
    )
    response_prefix: str = "The prompt asks:"
    max_input_tokens: int = 1024
    head_fraction: float = DEFAULT_HEAD_FRACTION
    max_new_tokens: int = 48
    do_sample: bool = False
    batch_size: int = 4

    def __post_init__(self) -> None:
        check_field_types(self, "ctd")
        if self.max_input_tokens < 32:
            raise ValueError(f"ctd.max_input_tokens must be >= 32, got {self.max_input_tokens}.")
        if not 0.0 <= self.head_fraction <= 1.0:
            raise ValueError(f"ctd.head_fraction must be in [0, 1], got {self.head_fraction}.")
        if self.max_new_tokens < 1 or self.batch_size < 1:
            raise ValueError("ctd.max_new_tokens and ctd.batch_size must be >= 1.")


@dataclass
class AgnosticConfig:
    """Prompt-agnostic settings: how the task description is found and how sentences are then chosen.

    Attributes:
        request_head: Checkpoint file (safetensors) of the extractive request head
            (``tpc_core.engine.task.request_sequence``); ``None``: always generate with the CTD.
        request_threshold: A prompt whose best sentence reaches this probability has a written request:
            those sentences are the task description and nothing is generated.
        max_request_sentences: At most this many sentences form an extracted request.
        request_neighbour_threshold: A sentence next to an extracted one joins the request when it reaches this
            lower probability (a request written over two sentences); ``None``: off.
        centrality_weight: Prompts with no written request (a bare document, a summarisation prompt): weight
            of a sentence's cosine to the prompt's mean sentence embedding in its score.
        position_weight: The same prompts: weight of ``1 / sqrt(1 + k)`` for the k-th sentence of its
            section (a document, or a ``Passage k:`` / ``Document [k]`` / markdown-heading block).
        redundancy: The same prompts: MMR penalty on a candidate's highest cosine to a kept sentence.
        relevance_weight: The same prompts: weight of the cosine to the generated description.
        match_share: A generated description that restates sentences of the prompt (at least this share of
            its content words in one sentence and its neighbours,
            ``tpc_core.engine.task.grounding.match_sentences``) is replaced by those sentences as written, and the
            prompt is scored by relevance like an extracted request (``"matched"``; a request for a summary keeps
            the coverage settings); ``0``: off.
        fallback_description: Used instead of a generated description that the prompt does not ground
            (``tpc_core.engine.task.grounding.is_grounded``): the CTD must not invent a question the prompt never
            asks.
        salience_head: Checkpoint file (safetensors) of the salience model: a lead correction
            (``tpc_core.engine.scoring.lead.LeadCorrection``: lead-per-passage plus a learned correction) or an
            embedding head (``tpc_core.engine.scoring.salience.SalienceHead``); the file's metadata says which.
            Where set, prompts selected by coverage are scored by it instead of the hand-set weights above (which
            then apply only to checkpoints without one). ``None``: the hand-set weights.
        salience_lead_weight: Weight of the passage-lead prior blended with an embedding head's score
            (``z(head) + w * z(prior)``); 0: the head alone. A lead correction has the prior built in.
        lead_correction: Checkpoint file (safetensors) of a lead correction that scores prompts writing no request
            (bare documents, index-time rows) where ``salience_head`` names an embedding head, which then serves
            prompts that ask in writing for a summary. ``None``: ``salience_head`` serves both.
    """

    request_head: str | None = None
    request_threshold: float = 0.5
    max_request_sentences: int = 8
    request_neighbour_threshold: float | None = None
    relevance_weight: float = 1.0
    centrality_weight: float = 0.0
    position_weight: float = 0.0
    redundancy: float = 0.0
    match_share: float = 0.0
    fallback_description: str = "Summarise the main points of the text."
    salience_head: str | None = None
    salience_lead_weight: float = 0.0
    lead_correction: str | None = None

    def __post_init__(self) -> None:
        check_field_types(self, "agnostic")
        if not isinstance(self.fallback_description, str) or not self.fallback_description.strip():
            raise ValueError("agnostic.fallback_description must be a non-empty string.")
        if not 0.0 < self.request_threshold <= 1.0:
            raise ValueError(f"agnostic.request_threshold must be in (0, 1], got {self.request_threshold}.")
        if self.max_request_sentences < 1:
            raise ValueError("agnostic.max_request_sentences must be >= 1.")
        neighbour = self.request_neighbour_threshold
        if neighbour is not None and not 0.0 < neighbour <= self.request_threshold:
            raise ValueError("agnostic.request_neighbour_threshold must be in (0, request_threshold], "
                             f"got {neighbour}.")
        for key in ("relevance_weight", "centrality_weight", "position_weight", "redundancy", "salience_lead_weight"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"agnostic.{key} must be a number >= 0, got {value!r}.")
        if not 0.0 <= self.match_share <= 1.0:
            raise ValueError(f"agnostic.match_share must be in [0, 1], got {self.match_share}.")
        for key in ("salience_head", "lead_correction"):
            value = getattr(self, key)
            if value is not None and not value.strip():
                raise ValueError(f"agnostic.{key} must be a file name inside the checkpoint, or null.")

    @property
    def uses_coverage(self) -> bool:
        """Whether question-less prompts are scored with more than relevance (a salience head, or weights)."""
        return bool(self.salience_head or self.lead_correction or self.centrality_weight or self.position_weight
                    or self.redundancy)


@dataclass
class ScorerConfig:
    """How a sentence is scored against the task description: the paper's R (Eq. 1).

    Only types are checked here (this module imports nothing of the engine); the name is checked against the
    engine's table ``tpc_core.engine.scoring.scorers.SCORERS`` when the checkpoint loads (``build_scorer``).

    Attributes:
        name: A key of ``tpc_core.engine.scoring.scorers.SCORERS``. ``"pooled_cosine"``: the cosine of the pooled CSE
            sentence and description embeddings (the paper's R; what checkpoints without this section use).
            ``"cosine_bm25"``: that cosine fused with BM25 of the sentence against the description over the
            prompt's own sentences, so exact names, numbers and rare words count
            (``tpc_core.engine.scoring.scorers.CosineBM25``).
        lexical_weight: ``cosine_bm25`` only: weight of the BM25 z-score against the cosine z-score.
    """

    name: str = "pooled_cosine"
    lexical_weight: float = 0.3

    def __post_init__(self) -> None:
        check_field_types(self, "scorer")
        if not self.name.strip():
            raise ValueError("scorer.name must be a non-empty scorer name (tpc_core.engine.scoring.scorers.SCORERS), "
                             f"got {self.name!r}.")
        if not math.isfinite(self.lexical_weight) or self.lexical_weight < 0:
            raise ValueError(f"scorer.lexical_weight must be a finite number >= 0, got {self.lexical_weight!r}.")

    def overridden(self, scorer: str | ScorerConfig) -> ScorerConfig:
        """``from_pretrained(scorer=...)``: a name keeps this config's other settings; a config replaces it."""
        if isinstance(scorer, ScorerConfig):
            return scorer
        if isinstance(scorer, str):
            return dataclasses.replace(self, name=scorer)  # validated by __post_init__
        raise TypeError(f"scorer must be a scorer name or a ScorerConfig, got {type(scorer).__name__}.")


@dataclass
class TPCConfig:
    """A whole TPC checkpoint: CSE, optional CTD, and default compression settings.

    Attributes:
        cse: Sentence encoder settings.
        ctd: Task descriptor settings; ``None`` means prompt-aware use only (unless a request head finds the
            request in the prompt).
        agnostic: Prompt-agnostic settings (extractive request head, coverage-aware selection).
        scorer: How sentences are scored against the task description (default: the paper's pooled cosine).
        splitter: Default sentence splitter (see ``tpc_core.segmentation``).
        name: Human-readable name of the checkpoint.
        trained: Whether the CSE/CTD were fine-tuned with ``training/`` (False: zero-shot bases).
        languages: The languages (ISO 639-1 codes, e.g. ``["en"]``) the checkpoint was trained on; a prompt mostly
            in a script none of them is written in gets a one-time notice
            (:mod:`tpc_core.diagnostics.language`). ``None``: not declared (no notice); left out of the file.
        format_version: Version of this file's schema.
    """

    cse: CSEConfig
    ctd: CTDConfig | None = None
    agnostic: AgnosticConfig = field(default_factory=AgnosticConfig)
    scorer: ScorerConfig = field(default_factory=ScorerConfig)
    splitter: str = "nupunkt"
    name: str = "tpc"
    trained: bool = False
    format_version: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    languages: list[str] | None = None

    def __post_init__(self) -> None:
        check_field_types(self, "tpc_config")
        if self.languages is not None and (not isinstance(self.languages, list) or not all(
                isinstance(code, str) and code.strip() for code in self.languages)):
            raise ValueError(f"tpc_config.languages must be a list of language codes (e.g. [\"en\"]) or null, got "
                             f"{self.languages!r}.")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TPCConfig:
        """Build and validate a config from a parsed ``tpc_config.json``."""
        if not isinstance(data, dict) or "cse" not in data:
            raise ValueError(f"{CONFIG_NAME} must be an object with at least a 'cse' section.")
        version = data.get("format_version", FORMAT_VERSION)
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValueError(f"tpc_config.format_version must be an int, got {type(version).__name__} {version!r}.")
        if version > FORMAT_VERSION:
            raise ValueError(f"{CONFIG_NAME} has format_version {version}; this tpc-langchain reads up to "
                             f"{FORMAT_VERSION}. Upgrade: pip install -U tpc-langchain.")
        body = dict(data)
        body["cse"] = _from_dict(CSEConfig, data["cse"], "tpc_config.cse")
        body["ctd"] = None if data.get("ctd") is None else _from_dict(CTDConfig, data["ctd"], "tpc_config.ctd")
        body["agnostic"] = _from_dict(AgnosticConfig, data.get("agnostic") or {}, "tpc_config.agnostic")
        body["scorer"] = _from_dict(ScorerConfig, data.get("scorer") or {}, "tpc_config.scorer")
        return _from_dict(cls, body, CONFIG_NAME)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable form written to ``tpc_config.json`` (``languages`` only where declared, so a file
        that declares none reads in versions that know no such key)."""
        data = dataclasses.asdict(self)
        if self.languages is None:
            del data["languages"]
        return data

    @classmethod
    def load(cls, directory: str | Path) -> TPCConfig:
        """Read ``tpc_config.json`` from a checkpoint directory."""
        path = Path(directory) / CONFIG_NAME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as error:
            raise FileNotFoundError(f"{directory} is not a TPC checkpoint: it has no {CONFIG_NAME}.") from error
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}.") from error
        return cls.from_dict(data)

    def save(self, directory: str | Path) -> Path:
        """Write ``tpc_config.json`` into ``directory`` (created if needed)."""
        path = Path(directory) / CONFIG_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path
