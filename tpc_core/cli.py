"""Command line: ``tpc compress FILE|- [...]``, ``tpc compress-corpus IN OUT``, ``tpc models`` and ``tpc info``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tpc_core.loading.device_names import check_device_string
from tpc_core.loading.registry import DEFAULT_MODEL, REGISTRY, check_checkpoint_name
from tpc_core.options import CompressOptions
from tpc_core.options.surfaces import add_option_flags, flag_options

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The ``tpc`` argument parser."""
    from tpc_core import __version__

    # No prefix matching (allow_abbrev=False, on every command): a typo such as --rat is an error, never another flag.
    parser = argparse.ArgumentParser(prog="tpc", description="Task-agnostic Prompt Compression (TPC).",
                                     allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"tpc-langchain {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    compress = commands.add_parser("compress", help="Compress a text file (or - for standard input).",
                                   allow_abbrev=False)
    compress.add_argument("file", help="Path of a UTF-8 text file, or - to read standard input. An empty or "
                                       "whitespace-only input is an error (exit code 2), where the Python API "
                                       "returns an empty result.")
    compress.add_argument("--question", "-q", default=None,
                          help="The question (prompt-aware). Without it the prompt's written request is the task; a "
                               "bare document gets the fallback task (--describe-bare: the CTD describes it).")
    add_option_flags(compress)  # one flag per option of CompressOptions that the command line reaches
    compress.add_argument("--model", "-m", default=DEFAULT_MODEL,
                          help=f"Checkpoint: {', '.join(REGISTRY)}, a local directory or a Hub repo id.")
    compress.add_argument("--token-counter", default=None,
                          help="Count tokens with this tokenizer (name/path or tiktoken name); default: the CSE's.")
    compress.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available).")
    compress.add_argument("--local-files-only", action="store_true", help="Never use the network.")
    compress.add_argument("--json", action="store_true", help="Print the whole result as JSON.")
    compress.add_argument("--html", metavar="OUT.html", default=None,
                          help="Also write a standalone HTML page of the result: the prompt as sent, kept sentences "
                               "highlighted, dropped ones dimmed, each shaded by its score (UTF-8; the normal "
                               "output is printed as well).")
    commands.add_parser("models", help="List the registered names: what each is and whether it is published.",
                        allow_abbrev=False)
    from tpc_core.corpus.local import add_corpus_parser

    add_corpus_parser(commands)
    info = commands.add_parser("info", help="Show the model, device and versions.", allow_abbrev=False)
    info.add_argument("--model", "-m", default=DEFAULT_MODEL)
    info.add_argument("--device", default=None)
    return parser


class InputError(ValueError):
    """The command's input cannot be compressed (reported before any model loads)."""


def _read_input(path: str) -> str:
    if path == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            raise InputError(f"no such file: {path}") from None
        except IsADirectoryError:
            raise InputError(f"{path} is a directory; give a text file or - for standard input") from None
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text") from None
    if not text.strip():
        raise InputError(f"{'standard input' if path == '-' else path} is empty: nothing to compress")
    return text


def _check_html_path(path: str | None) -> None:
    """Fail before the model loads if the HTML page could not be written where asked."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise InputError(f"--html {path} is a directory; give a file name such as {target / 'result.html'}")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"--html {path}: the directory {folder} does not exist; create it first")


def _quiet_loading() -> None:
    """A CLI's stderr is for the user: no Hub download bars, no transformers log chatter. (Weight-loading bars
    and loading deprecation warnings are silenced by the library itself, ``tpc_core.loading.quiet``.)"""
    from huggingface_hub.utils import disable_progress_bars
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    disable_progress_bars()


def registry_lines() -> list[str]:
    """One line per registered name, with what the registry says about it (``tpc models``)."""
    from tpc_core.loading.registry import unpublished_message

    lines = []
    for model in REGISTRY.values():
        if not model.published:
            lines.append(f"{model.name}: unpublished. {unpublished_message(model)}")
        elif model.hub_cse is not None:
            parts = model.hub_cse
            lines.append(f"{model.name}: {model.description} Hub parts: base {parts.base}, adapter {parts.adapter}, "
                         f"tokenizer {parts.tokenizer}.")
        else:
            lines.append(f"{model.name}: {model.description}")
    return lines


def _checked_inputs(args: argparse.Namespace) -> tuple[str | None, dict[str, Any]]:
    """What needs no model, checked before the heavy imports and the (slow) model load: the checkpoint name, the
    device string, and for ``compress`` its options, its input text (returned) and the HTML path.

    Raises:
        ValueError, TypeError, FileNotFoundError: What is wrong, in words for the user.
    """
    check_checkpoint_name(args.model)
    if args.device is not None:
        check_device_string(args.device)
    if args.command != "compress":
        return None, {}
    options = flag_options(args)
    CompressOptions.build(**options)
    text = _read_input(args.file)
    _check_html_path(args.html)
    return text, options


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tpc`` command; exit code 2 for every usage or input error."""
    args = build_parser().parse_args(argv)
    if args.command == "models":
        print("\n".join(registry_lines()))
        return 0
    if args.command == "compress-corpus":  # its own checks (before any model loads) and exit codes
        from tpc_core.corpus.local import run_corpus_command

        _quiet_loading()
        return run_corpus_command(args)
    try:
        text, options = _checked_inputs(args)
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"tpc: error: {error}", file=sys.stderr)
        return 2
    _quiet_loading()
    from tpc_core.compressor import TPCCompressor

    try:
        compressor = TPCCompressor.from_pretrained(args.model, device=args.device,
                                                   local_files_only=getattr(args, "local_files_only", False))
        if args.command == "info":
            print(json.dumps(compressor.info(), indent=2))
            return 0
        assert text is not None  # the commands left ("compress") read their input before the model loaded
        result = compressor.compress(text, question=args.question, token_counter=args.token_counter, **options)
    except (ValueError, TypeError, OSError, ImportError) as error:
        print(f"tpc: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(result.compressed_prompt)
        ratio = f"{result.ratio:.1f}x" if result.compressed_tokens else "all removed"
        print(f"\n[tpc] {result.origin_tokens} -> {result.compressed_tokens} tokens ({ratio}); "
              f"task: {result.task_description}", file=sys.stderr)
    if args.html is not None:  # after the normal output, so a failed write does not lose the compression
        try:
            Path(args.html).write_text(result.to_html(standalone=True), encoding="utf-8")
        except OSError as error:
            print(f"tpc: error: cannot write {args.html}: {error}", file=sys.stderr)
            return 2
        print(f"[tpc] HTML view written to {args.html}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
