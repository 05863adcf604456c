"""Stage 5: assemble a TPC checkpoint from the training runs, write its model card, verify it, push it.

``python -m training.export --config training/configs/tpc-mini.yaml [--push-to-hub ORG/NAME]``

The checkpoint holds only what training changed (adapters, the special-token rows, ``tpc_config.json``,
``README.md``); base models stay Hub references. Before it is declared done it is loaded with
``TPCCompressor.from_pretrained`` and compresses a sample (prompt-aware, and prompt-agnostic when it has
a CTD), so a broken export fails here rather than for a user.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tpc_core.config import CONFIG_NAME, AgnosticConfig, CSEConfig, CTDConfig, TPCConfig
from training.common.loop import run_stage_cli
from training.request_head import HEAD_FILE
from training.request_head import SUMMARY_FILE as HEAD_SUMMARY

__all__ = ["ExportConfig", "export_checkpoint", "render_model_card", "main"]

logger = logging.getLogger(__name__)
CTD_CONFIG = "ctd_config.json"
_SMOKE_TEXT = ("The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair. Gustave Eiffel's "
               "company designed and built it. The tower is 330 metres tall. Paris is the capital of France. "
               "Millions of people visit it every year. The city also hosts the Louvre museum.")


@dataclass
class ExportConfig:
    """Export settings (the ``export:`` section of a recipe).

    Attributes:
        output_dir: The checkpoint directory to write (replaced if it exists).
        cse_dir: Output of ``training.cse_train`` (a CSE-only checkpoint).
        ctd_dir: Output of ``training.ctd_rl`` or ``training.ctd_sft`` (``ctd_config.json`` + adapter);
            ``None`` keeps ``ctd`` below untrained.
        ctd: Untrained CTD settings, used only when ``ctd_dir`` is ``None`` (``None``: no CTD at all).
        request_head_dir: Output of ``training.request_head`` (the head and its chosen threshold), or ``None``.
        agnostic: Prompt-agnostic settings shipped in the checkpoint (coverage weights); the request head's
            file, threshold and sentence limit come from ``request_head_dir``.
        name: Checkpoint name (``tpc_config.json`` and model card).
        languages: The languages (ISO 639-1) of the training data, declared in ``tpc_config.json`` (a prompt mostly
            in another script gets a one-time notice); ``None``: not declared.
        metrics_paths: JSON files from ``training.evaluate`` whose tables go into the model card.
        notes: Free text for the model card (what was run, on what machine).
        max_size_mb: Refuse a checkpoint larger than this (the package ships tpc-mini: keep it small).
        adapter_dtype: Store the adapters' weights as ``float16`` (half the size; PEFT loads them back in the
            model's dtype) or keep ``float32``.
        verify: Load the result with ``TPCCompressor.from_pretrained`` and compress a sample.
        hub_private: Visibility of a repo created by ``--push-to-hub``.
    """

    output_dir: str
    cse_dir: str
    ctd_dir: str | None = None
    ctd: CTDConfig | None = None
    request_head_dir: str | None = None
    agnostic: AgnosticConfig = field(default_factory=AgnosticConfig)
    name: str = "tpc"
    languages: list[str] | None = None
    metrics_paths: list[str] = field(default_factory=list)
    notes: str = ""
    max_size_mb: float | None = None
    adapter_dtype: Literal["float16", "float32"] = "float16"
    verify: bool = True
    hub_private: bool = False

    def check_paths(self) -> None:
        """Fail before any model loads when an input run is missing."""
        if not (Path(self.cse_dir) / CONFIG_NAME).is_file():
            raise FileNotFoundError(f"cse_dir {self.cse_dir} has no {CONFIG_NAME}; run training.cse_train first.")
        if self.ctd_dir is not None and not (Path(self.ctd_dir) / CTD_CONFIG).is_file():
            raise FileNotFoundError(f"ctd_dir {self.ctd_dir} has no {CTD_CONFIG}; run training.ctd_sft / ctd_rl first.")
        if self.request_head_dir is not None and not (Path(self.request_head_dir) / HEAD_SUMMARY).is_file():
            raise FileNotFoundError(f"request_head_dir {self.request_head_dir} has no {HEAD_SUMMARY}; run "
                                    "training.request_head first.")
        for path in self.metrics_paths:
            if not Path(path).is_file():
                raise FileNotFoundError(f"metrics file {path} not found; run training.evaluate or drop it.")


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _copy_part(source_dir: Path, relative: str | None, target_dir: Path) -> None:
    if relative is None:
        return
    source = source_dir / relative
    if source.is_dir():
        shutil.copytree(source, target_dir / relative, dirs_exist_ok=True)
    elif source.is_file():
        shutil.copy2(source, target_dir / relative)
    else:
        raise FileNotFoundError(f"{source} is referenced by the run's config but missing.")


def export_checkpoint(config: ExportConfig) -> Path:
    """Write, document and verify the checkpoint; returns its directory."""
    config.check_paths()
    output = Path(config.output_dir)
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    cse_dir = Path(config.cse_dir)
    cse = TPCConfig.load(cse_dir).cse
    for part in (cse.adapter_dir, cse.weights_dir, cse.extra_embeddings):
        _copy_part(cse_dir, part, output)
    summaries = {"cse_train": _read_json(cse_dir / "cse_train_summary.json")}
    ctd = config.ctd if config.ctd_dir is None else _copy_ctd(Path(config.ctd_dir), output, summaries)
    _ship_hub_bases(output, cse, ctd)
    if config.adapter_dtype == "float16":
        for adapter in output.rglob("adapter_model.safetensors"):
            _to_float16(adapter)
    agnostic = config.agnostic
    if config.request_head_dir is not None:
        agnostic = _copy_request_head(Path(config.request_head_dir), agnostic, output, summaries)
    metrics = [_read_json(Path(p)) for p in config.metrics_paths]
    tpc = TPCConfig(cse=cse, ctd=ctd, agnostic=agnostic, name=config.name, trained=True,
                    extra={"training": {k: _brief(v) for k, v in summaries.items()}}, languages=config.languages)
    tpc.save(output)
    (output / "README.md").write_text(render_model_card(tpc, summaries, metrics, config.notes), encoding="utf-8")
    size_mb = sum(p.stat().st_size for p in output.rglob("*") if p.is_file()) / 1e6
    if config.max_size_mb is not None and size_mb > config.max_size_mb:
        raise ValueError(f"checkpoint is {size_mb:.1f} MB > max_size_mb {config.max_size_mb}; ship adapters only.")
    if config.verify:
        verify_checkpoint(output, with_ctd=ctd is not None)
    logger.info("exported %s (%.2f MB)", output, size_mb)
    return output


def _copy_ctd(ctd_dir: Path, output: Path, summaries: dict[str, Any]) -> CTDConfig:
    """Copy a CTD run's trained parts; its config, with its stages' summaries added to ``summaries``."""
    ctd = CTDConfig(**_read_json(ctd_dir / CTD_CONFIG))
    for part in (ctd.adapter_dir, ctd.weights_dir):
        _copy_part(ctd_dir, part, output)
    for stage in ("ctd_sft", "ctd_rl"):
        if (ctd_dir / f"{stage}_summary.json").is_file():
            summaries[stage] = _read_json(ctd_dir / f"{stage}_summary.json")
            for earlier in summaries[stage].get("previous_summaries", []):
                summaries.setdefault(earlier["stage"], earlier)
    return ctd


def _ship_hub_bases(output: Path, cse: CSEConfig, ctd: CTDConfig | None) -> None:
    """PEFT records the local path it trained on; the shipped adapter configs name the Hub id instead."""
    for adapter_config, base in ((output / str(cse.adapter_dir) / "adapter_config.json", cse.base_model),
                                 (output / str(ctd.adapter_dir if ctd else None) / "adapter_config.json",
                                  ctd.base_model if ctd else "")):
        if adapter_config.is_file():
            body = json.loads(adapter_config.read_text(encoding="utf-8"))
            body["base_model_name_or_path"] = base
            adapter_config.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")


def _copy_request_head(head_dir: Path, agnostic: AgnosticConfig, output: Path,
                       summaries: dict[str, Any]) -> AgnosticConfig:
    """Copy a fitted request head; the agnostic settings that use it (its threshold and sentence limit)."""
    summaries["request_head"] = _read_json(head_dir / HEAD_SUMMARY)
    shutil.copy2(head_dir / HEAD_FILE, output / HEAD_FILE)
    return replace(agnostic, request_head=HEAD_FILE, request_threshold=summaries["request_head"]["threshold"],
                   max_request_sentences=summaries["request_head"]["config"]["max_sentences"],
                   request_neighbour_threshold=summaries["request_head"].get("neighbour_threshold"))


def _to_float16(path: Path) -> None:
    import torch  # lazy: loads torch
    from safetensors.torch import load_file, save_file  # lazy: loads torch

    tensors = {k: (v.to(torch.float16) if v.is_floating_point() else v) for k, v in load_file(str(path)).items()}
    save_file(tensors, str(path), metadata={"format": "pt"})


def verify_checkpoint(directory: Path, *, with_ctd: bool) -> None:
    """Load with tpc_core and compress a sample; raise if the result is not a proper compression."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    compressor = TPCCompressor.from_pretrained(str(directory), device="cpu", trust_config_paths=True)
    result = compressor.compress(_SMOKE_TEXT, question="How tall is the Eiffel Tower?", rate=0.4)
    if not result.compressed_prompt or result.compressed_tokens > result.budget:
        raise RuntimeError(f"exported checkpoint compressed badly: {result}")
    if with_ctd:
        agnostic = compressor.compress(_SMOKE_TEXT + "\n\nQuestion: How tall is the Eiffel Tower?", rate=0.4)
        if not agnostic.task_description:
            raise RuntimeError("exported checkpoint's CTD wrote no task description.")
        logger.info("CTD description of the smoke prompt: %s", agnostic.task_description)


def _brief(summary: dict[str, Any]) -> dict[str, Any]:
    keep = ("command", "records", "steps", "train_seconds", "total_seconds", "first_loss", "last_loss", "data",
            "mean_reward_by_iteration", "examples", "prompts", "threshold", "neighbour_threshold",
            "held_out_families", "layouts", "instructions")
    return {k: summary[k] for k in keep if k in summary}


def _rounded(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def _hyper_parameters(summary: dict[str, Any]) -> str:
    config = summary.get("config", {})
    train = config.get("train")
    lora = config.get("lora", {})
    parts = []
    if train:  # a stage that fine-tunes a model (the request head is fitted on frozen embeddings instead)
        parts += [f"lr {train.get('learning_rate')}", f"epochs {train.get('epochs')}",
                  f"batch {train.get('batch_size')} (micro {train.get('micro_batch_size')})",
                  f"LoRA r={lora.get('r')} alpha={lora.get('alpha')}" if lora.get("enabled") else "full fine-tuning"]
    for key in ("temperature", "hard_negatives", "mntp_weight", "candidates", "iterations", "max_input_tokens",
                "hidden", "l2", "view_sentences", "layout_records", "layout_without_request", "layout_key_lookups"):
        if key in config:
            parts.append(f"{key} {config[key]}")
    return ", ".join(parts) or "none recorded"


def render_model_card(config: TPCConfig, summaries: dict[str, dict[str, Any]], metrics: Sequence[dict[str, Any]],
                      notes: str = "") -> str:
    """The checkpoint's README.md: bases, data, hyper-parameters, commands, times, measured metrics."""
    cse = config.cse
    ctd = config.ctd
    lines = ["---", "library_name: tpc-langchain", "tags: [prompt-compression, tpc]",
             f"base_model: [{cse.base_model}" + (f", {ctd.base_model}]" if ctd else "]"), "---", "",
             f"# {config.name}", "",
             "A Task-agnostic Prompt Compression (TPC) checkpoint for `tpc-langchain`. It holds only what training "
             "changed; the base models are loaded from their own packages or the Hub.", "",
             "```python", "from tpc_core import TPCCompressor",
             f"compressor = TPCCompressor.from_pretrained(\"{config.name}\")  # or this directory / Hub repo id",
             "# question=None: the CTD describes the task",
             "result = compressor.compress(long_text, question=None, rate=0.2)",
             "```", "", "## Components", "", *_component_lines(config), "", "## Training", ""]
    for stage, summary in summaries.items():
        if summary:
            lines += _stage_lines(stage, summary)
    if metrics:
        lines += _metric_lines(metrics)
    if notes:
        lines += ["## Notes", "", notes.strip(), ""]
    lines += ["## Configuration", "", "```json", json.dumps(asdict(config), indent=2, default=str), "```", ""]
    return "\n".join(lines)


def _component_lines(config: TPCConfig) -> list[str]:
    """The model card's components: the CSE, the scorer, the CTD and the request head."""
    cse = config.cse
    ctd = config.ctd
    lines = [f"- **CSE** (sentence encoder): `{cse.base_model}` ({cse.architecture}), pooling `{cse.pooling}`, "
             f"special tokens {'on' if cse.use_special_tokens else 'off'}, windows of {cse.max_window_tokens} tokens "
             f"overlapping by {cse.window_overlap_tokens}; trained parts: "
             f"{', '.join(p for p in (cse.adapter_dir, cse.weights_dir, cse.extra_embeddings) if p) or 'none'}."]
    scorer = config.scorer
    lines.append("- **Scorer** (`scorer` in `tpc_config.json`): "
                 + ("the cosine of pooled CSE sentence and description embeddings (the paper's R)."
                    if scorer.name == "pooled_cosine" else
                    f"`{scorer.name}`: the pooled-CSE cosine fused with BM25 over the prompt's own sentences, "
                    f"z(cosine) + {scorer.lexical_weight} z(BM25), so exact names, numbers and rare words count; "
                    "`from_pretrained(..., scorer=\"pooled_cosine\")` restores the paper's cosine."))
    if ctd:
        lines.append(f"- **CTD** (task descriptor): `{ctd.base_model}`, inputs bounded to {ctd.max_input_tokens} "
                     f"tokens, response prefix \"{ctd.response_prefix}\"; trained parts: "
                     f"{', '.join(p for p in (ctd.adapter_dir, ctd.weights_dir) if p) or 'none (zero-shot)'}.")
    if config.agnostic.request_head:
        lines.append(_request_head_line(config.agnostic))
    return lines


def _request_head_line(agnostic: AgnosticConfig) -> str:
    matched = ""
    if agnostic.match_share:
        matched = (f" (a description that restates prompt sentences, ≥ {agnostic.match_share} of its content "
                   "words, is replaced by those sentences; a summary request keeps coverage)")
    return (f"- **Request head** (`{agnostic.request_head}`): finds the sentences that state the prompt's "
            f"request; at probability ≥ {agnostic.request_threshold} (at most "
            f"{agnostic.max_request_sentences} sentences) they are the task description and nothing is "
            "generated; otherwise the CTD writes one"
            + matched
            + f" and sentences are chosen with relevance {agnostic.relevance_weight}, centrality "
            f"{agnostic.centrality_weight}, section lead {agnostic.position_weight} and redundancy penalty "
            f"{agnostic.redundancy}.")


def _stage_lines(stage: str, summary: dict[str, Any]) -> list[str]:
    """One training stage's section: command, data, hyper-parameters, steps, time, losses."""
    data = summary.get("data", {})
    lines = [f"### {stage}", "",
             f"- command: `{summary.get('command', '?')}`",
             f"- data: `{data.get('path', '?')}` ({data.get('records', '?')} records, sha256[:16] "
             f"{data.get('sha256_16', '?')}); used: {summary.get('records', summary.get('prompts', '?'))}",
             f"- hyper-parameters: {_hyper_parameters(summary)}",
             f"- optimiser steps: {summary.get('steps', '?')}; training time: "
             f"{summary.get('train_seconds', summary.get('total_seconds', '?'))} s (all resumed segments), "
             f"last invocation {summary.get('total_seconds', '?')} s wall, on {summary.get('processes', 1)} "
             "process(es)",
             f"- loss (first → last optimiser step): {_rounded(summary.get('first_loss'))} → "
             f"{_rounded(summary.get('last_loss'))}"]
    if "mean_reward_by_iteration" in summary:
        lines.append(f"- mean reward by iteration (−KL): {summary['mean_reward_by_iteration']}")
    if "held_out_families" in summary:
        lines.append(f"- threshold {summary['threshold']} (chosen on held-out train records: "
                     f"{summary['threshold_choice']}); held-out template families: {summary['held_out_families']}")
    lines.append("")
    return lines


def _metric_lines(metrics: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["## Measured (dev split, evidence recall: share of gold supporting sentences kept)", "",
             "| method | setting | prompt template | evidence recall | answer retention | samples | rate |",
             "|---|---|---|---|---|---|---|"]
    for report in metrics:
        for row in report.get("rows", []):
            lines.append(f"| {row['method']} | {row['setting']} | {row.get('family', 'longbench')} | "
                         f"{row['evidence_recall']:.3f} | {row['answer_retention']:.3f} | {row['samples']} | "
                         f"{report.get('rate')} |")
    lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m training.export``)."""
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--push-to-hub", metavar="REPO_ID", default=None, help="upload the checkpoint here")

    def run(config: ExportConfig, args: argparse.Namespace) -> None:
        directory = export_checkpoint(config)
        if args.push_to_hub:
            from tpc_core import TPCCompressor  # lazy: loads torch

            url = TPCCompressor.from_pretrained(str(directory), device="cpu", trust_config_paths=True).push_to_hub(
                args.push_to_hub, private=config.hub_private)
            logger.info("pushed to %s", url)

    return run_stage_cli(argv, prog="python -m training.export", section="export", extra_arguments=extra,
                         description="Assemble, document and verify a TPC checkpoint.", config_class=ExportConfig,
                         run=run)


if __name__ == "__main__":
    sys.exit(main())
