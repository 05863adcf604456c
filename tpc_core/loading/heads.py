"""The checkpoint's small trained heads, read from the files its config names: one loader for every head.

``tpc_config.json``'s ``agnostic`` section may name a request head (``request_head``: finds the prompt's own
request, the structural :class:`tpc_core.engine.task.request_sequence.SequenceRequestHead`; a per-sentence head
file is refused with the version that dropped it) and a salience head (``salience_head``: scores sentences for
coverage, :class:`tpc_core.engine.scoring.salience.SalienceHead`). Both are single safetensors files of a few
hundred kB, loaded when the compressor is built so a bad path fails at load time; like every config path they
stay inside the checkpoint (:func:`tpc_core.loading.paths.inside_checkpoint`: no absolute path, no ``..`` out
of it, no link out of it). The engine only runs heads; it never reads a file. The scoring heads (salience head,
lead correction) share one file format (:class:`tpc_core.engine.scoring.head.ScoringHead`) and one table,
:data:`HEADS`, which the file's ``kind`` is looked up in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from safetensors import SafetensorError

from tpc_core.engine.scoring.head import ScoringHead, head_metadata
from tpc_core.engine.scoring.lead import LeadCorrection
from tpc_core.engine.scoring.salience import Salience, SalienceHead, SalienceModel
from tpc_core.engine.task.request_sequence import SequenceRequestHead
from tpc_core.loading.paths import inside_checkpoint

if TYPE_CHECKING:
    from tpc_core.config import AgnosticConfig

__all__ = ["HEADS", "UNMARKED", "AnyHead", "load_head", "load_lead_correction", "load_request_head", "load_salience",
           "load_salience_head"]

Head = TypeVar("Head")
_Loaded = TypeVar("_Loaded", covariant=True)


class HeadFile(Protocol[_Loaded]):
    """What :func:`load_head` reads a head with: a class (or reader) whose ``load(path)`` returns the head."""

    def load(self, path: Path) -> _Loaded:
        """The head stored at ``path`` (raising ``ValueError`` when the file is not one)."""
        ...


def load_head(head_type: HeadFile[Head], reference: str | None, checkpoint_dir: Path, what: str) -> Head | None:
    """The head a config names, read from inside the checkpoint, or ``None`` when the config names none.

    Args:
        head_type: The head class; its ``load(path)`` reads and checks the file.
        reference: The config's value: a path relative to the checkpoint, or ``None``.
        checkpoint_dir: The checkpoint directory the path is confined to.
        what: The config key, for messages (``"agnostic.salience_head"``).

    Raises:
        ValueError: The path leaves the checkpoint (absolute, ``..``, a link out), or the file is not such a head.
        FileNotFoundError: The config names a head the checkpoint lacks.
    """
    if reference is None:
        return None
    path = inside_checkpoint(Path(checkpoint_dir), reference, what)
    if not path.is_file():
        raise FileNotFoundError(f"The checkpoint names {what} {reference!r} but {path} is missing.")
    try:
        return head_type.load(path)
    except SafetensorError as error:
        raise ValueError(f"The checkpoint's {what} {path} is not a safetensors file ({error}); a Git LFS pointer? "
                         "Fetch the real file (git lfs pull) or download the checkpoint again.") from error


def load_request_head(config: AgnosticConfig, checkpoint_dir: Path) -> SequenceRequestHead | None:
    """The checkpoint's request head, or ``None`` when it has none (see :func:`load_head`).

    Raises:
        ValueError: Besides :func:`load_head`'s reasons, the file holds a per-sentence request head, whose
            inference was dropped (:data:`tpc_core.engine.task.request.DROPPED_PER_SENTENCE_HEAD`).
    """
    return load_head(SequenceRequestHead, config.request_head, checkpoint_dir, "agnostic.request_head")


HEADS: dict[str, type[ScoringHead]] = {
    SalienceHead.kind: SalienceHead,
    LeadCorrection.kind: LeadCorrection,
}
"""Every scoring head a checkpoint file can hold, by its kind: a new head is its own module (a subclass of
:class:`tpc_core.engine.scoring.head.ScoringHead`) and one entry here. A file's metadata names its kind; a file
whose kind is none of these is read as a salience head (:data:`UNMARKED`), whose files name their training recipe
there instead."""

UNMARKED = SalienceHead.kind
"""The kind of a head file whose metadata names no kind of :data:`HEADS`."""


class AnyHead:
    """Reads any head of :data:`HEADS`: the file's metadata says which."""

    @staticmethod
    def load(path: Path) -> ScoringHead:
        """The head stored at ``path``, read by the class its metadata's ``kind`` names.

        Raises:
            ValueError: The file is not a head of that kind (see :meth:`ScoringHead.load`).
        """
        kind = head_metadata(path).get("kind", UNMARKED)
        return HEADS.get(kind, HEADS[UNMARKED]).load(path)


def load_salience_head(config: AgnosticConfig, checkpoint_dir: Path) -> SalienceModel | None:
    """The checkpoint's salience model (a :class:`LeadCorrection`, or an embedding :class:`SalienceHead`), or
    ``None`` when it has none: coverage then uses the config's weights."""
    model = load_head(AnyHead, config.salience_head, checkpoint_dir, "agnostic.salience_head")
    if model is not None and not isinstance(model, SalienceHead | LeadCorrection):
        raise ValueError(f"agnostic.salience_head names a {model.what}, which scores no salience.")
    return model


def load_lead_correction(config: AgnosticConfig, checkpoint_dir: Path) -> LeadCorrection | None:
    """The checkpoint's lead correction (``agnostic.lead_correction``), or ``None`` when it names none."""
    return load_head(LeadCorrection, config.lead_correction, checkpoint_dir, "agnostic.lead_correction")


def load_salience(config: AgnosticConfig, checkpoint_dir: Path) -> Salience | None:
    """The checkpoint's salience models together (``agnostic.salience_head`` and ``agnostic.lead_correction``), or
    ``None`` when it names neither."""
    return Salience.of(load_salience_head(config, checkpoint_dir), load_lead_correction(config, checkpoint_dir))
