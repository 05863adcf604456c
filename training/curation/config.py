"""Settings of the curation stage (``python -m training.curation --config ...``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from training.curation.ctd import CTDRules
from training.curation.generators import LocalHFSettings, OpenAISettings

__all__ = ["CurationConfig", "LocalHFSettings", "OpenAISettings", "RESUME_INSENSITIVE_KEYS"]


@dataclass
class CurationConfig:
    """What to read, how to generate, where to write.

    ``generator: none`` converts human-annotated QA (``source: qa_jsonl``) without any LLM; ``local_hf`` /
    ``openai`` run Prompts 1-3 over the texts (``text_jsonl``) or the QA contexts (``qa_jsonl``).
    """

    input_path: str
    output_dir: str
    source: Literal["qa_jsonl", "text_jsonl"] = "qa_jsonl"
    split: str = "train"  # qa_jsonl only; anything but "train" is refused
    exclude_dev_overlap: bool = True  # qa_jsonl: skip train rows whose context also occurs in another split
    text_field: str = "text"  # text_jsonl fields
    id_field: str = "id"
    source_field: str = "source"
    generator: Literal["none", "local_hf", "openai"] = "none"
    tasks: list[Literal["ctd", "mcqr"]] = field(default_factory=lambda: ["ctd", "mcqr"])
    # limits
    max_records: int | None = None  # inputs processed (after the split filter)
    min_context_chars: int = 200
    max_context_chars: int | None = None  # longer inputs are skipped
    max_text_chars: int = 12000  # LLM: the text shown with Prompts 1/3 is cut at a sentence boundary
    prompt2_text_chars: int = 2000  # LLM: Prompt 2 sees only this excerpt (it needs the topic, not the text)
    min_sentences: int = 3
    max_negatives: int = 32
    mcqr_window_sentences: int = 40  # LLM: sentences numbered per Prompt-3 request
    mcqr_windows_per_text: int = 1
    mcqr_min_positives: int = 1
    drop_answer_negatives: bool = True  # converters: a segment containing a gold answer is never a negative
    negatives: Literal["random", "hard"] = "random"  # converters: how MCQR negatives are drawn (see converters)
    ctd_rules: CTDRules = field(default_factory=CTDRules)
    # run
    batch_size: int = 8  # inputs per generator round
    cache_path: str | None = None  # default: <output_dir>/generator_cache.sqlite
    overwrite: bool = False  # start over (outputs and state; the generator cache is kept)
    seed: int = 13
    log_every: int = 50
    local_hf: LocalHFSettings = field(default_factory=LocalHFSettings)
    openai: OpenAISettings = field(default_factory=OpenAISettings)

    def __post_init__(self) -> None:
        if self.split != "train":
            raise ValueError(
                f"split={self.split!r}: curation only reads the 'train' split ('dev' is reserved for evaluation)"
            )
        if not self.tasks or len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"tasks={self.tasks!r}: give 'ctd' and/or 'mcqr', each once")
        self._check_generator()
        self._check_numbers()

    def _check_generator(self) -> None:
        """The generator the source needs, with the settings it needs."""
        if self.source == "text_jsonl" and self.generator == "none":
            raise ValueError(
                "source='text_jsonl' needs a generator (local_hf or openai); only QA rows convert without one"
            )
        if self.generator == "local_hf" and not self.local_hf.model:
            raise ValueError("generator='local_hf' needs local_hf.model (a local directory or Hub repo id)")
        if self.generator == "openai" and not self.openai.model:
            raise ValueError("generator='openai' needs openai.model")
        if self.generator == "openai" and not self.openai.base_url.startswith(("http://", "https://")):
            raise ValueError(f"openai.base_url={self.openai.base_url!r} must start with http:// or https://")

    def _check_numbers(self) -> None:
        """Counts at least 1, retries at least 0, rates above 0, temperatures at least 0."""
        positive = {
            "min_sentences": self.min_sentences,
            "max_negatives": self.max_negatives,
            "max_text_chars": self.max_text_chars,
            "prompt2_text_chars": self.prompt2_text_chars,
            "mcqr_window_sentences": self.mcqr_window_sentences,
            "mcqr_windows_per_text": self.mcqr_windows_per_text,
            "mcqr_min_positives": self.mcqr_min_positives,
            "batch_size": self.batch_size,
            "log_every": self.log_every,
            "local_hf.batch_size": self.local_hf.batch_size,
            "local_hf.max_new_tokens": self.local_hf.max_new_tokens,
            "openai.max_tokens": self.openai.max_tokens,
            "openai.concurrency": self.openai.concurrency,
        }
        for key, value in positive.items():
            if value < 1:
                raise ValueError(f"{key}={value!r} must be >= 1")
        for key, value in {"max_records": self.max_records, "max_context_chars": self.max_context_chars}.items():
            if value is not None and value < 1:
                raise ValueError(f"{key}={value!r} must be >= 1 or null")
        if self.openai.max_retries < 0:
            raise ValueError(f"openai.max_retries={self.openai.max_retries!r} must be >= 0")
        if self.openai.requests_per_minute is not None and self.openai.requests_per_minute <= 0:
            raise ValueError(f"openai.requests_per_minute={self.openai.requests_per_minute!r} must be > 0 or null")
        for key, value in {"local_hf.temperature": self.local_hf.temperature,
                           "openai.temperature": self.openai.temperature}.items():
            if value < 0:
                raise ValueError(f"{key}={value!r} must be >= 0")

    def check_paths(self) -> None:
        """Fail before any model loads if the input is missing."""
        if not Path(self.input_path).is_file():
            raise ValueError(f"input_path={self.input_path!r} does not exist or is not a file")

    def resolved_cache_path(self) -> Path:
        return Path(self.cache_path) if self.cache_path else Path(self.output_dir) / "generator_cache.sqlite"


# Settings that change speed or bookkeeping but not the records: a resumed run may change them.
RESUME_INSENSITIVE_KEYS = frozenset(
    {
        "max_records",
        "log_every",
        "overwrite",
        "batch_size",
        "cache_path",
        "local_hf.batch_size",
        "local_hf.device",
        "openai.concurrency",
        "openai.requests_per_minute",
        "openai.timeout_s",
        "openai.max_retries",
        "openai.backoff_s",
        "openai.max_backoff_s",
    }
)
