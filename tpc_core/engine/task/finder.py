"""Finding the task a prompt is compressed for, when it comes with no question.

A :class:`~tpc_core.engine.values.Task` is a value (with the other stage values). The caller's question makes one
directly (:meth:`Task.from_question`); for a prompt with no question, :class:`TaskFinder` finds one (the prompt's
written request, the CTD's description matched back to the prompt or checked against it, or the checkpoint's
fallback). Scoring then only computes scores for the task it is given (:mod:`tpc_core.engine.scoring.scorers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tpc_core.engine.task.asking import propose, unplaced
from tpc_core.engine.task.cues import is_generic, pointer_direction
from tpc_core.engine.task.grounding import contradicts, is_grounded, match_sentences
from tpc_core.engine.task.placement import PlaceKind, place_request, reads_as_request, without_request_label
from tpc_core.engine.task.request.text import asks_for_summary, complete_request, pick_request, request_text
from tpc_core.engine.values import Segmented, Selection, Task, TaskSource

if TYPE_CHECKING:
    import torch

    from tpc_core.config import AgnosticConfig
    from tpc_core.engine.task.request_sequence import SequenceRequestHead

__all__ = ["MATERIAL_SHARE", "Describe", "FoundRequest", "Located", "ReadPrompts", "Selection", "Task", "TaskFinder",
           "TaskSource"]


@dataclass(frozen=True)
class FoundRequest:
    """The request a prompt writes, as the request head finds it (:meth:`TaskFinder.find_request`).

    Attributes:
        spans: The character spans of the sentences that state it, ascending, in the prompt's own offsets.
        text: The request's own words (:func:`~tpc_core.engine.task.request.text.request_text`: no wrapper, label or
            template token).
        kept: The spans of every sentence compression keeps for the request, whatever its score (``spans`` among
            them), ascending.
        material: The spans among ``kept`` that are questions proposed inside the material
            (:data:`MATERIAL_SHARE` caps the budget they take).
    """

    spans: tuple[tuple[int, int], ...]
    text: str
    kept: tuple[tuple[int, int], ...] = ()
    material: tuple[tuple[int, int], ...] = ()


Describe = Callable[[list[str]], list[str]]
"""Writes a description of each whole prompt (the CTD's ``describe``)."""

ReadPrompts = Callable[[list[str]], "tuple[list[Segmented], list[torch.Tensor]]"]
"""Segments whole prompts and embeds their sentences (what :meth:`TaskFinder.descriptions` needs for the head)."""

ReadLazily = Callable[[list[str]], "tuple[list[Segmented], Sequence[torch.Tensor | Callable[[], torch.Tensor]]]"]
"""Segments whole prompts, each with its embeddings or what computes them (what :meth:`TaskFinder.find_request`
takes: a prompt whose structure places one request is never embedded)."""


# How far each kind of place is trusted to state the request (lower: more): a label or the user's own turn says so.
_TRUST = {PlaceKind.LABEL: 0, PlaceKind.CHAT_TURN: 0, PlaceKind.ASKING: 1, PlaceKind.LAST_BLOCK: 1,
          PlaceKind.FIRST_BLOCK: 2, PlaceKind.LAST_SENTENCE: 3}
# What each kind of place adds to the head's probability when the head chooses among candidates: position is one
# feature, not the rule.
_PRIOR = {PlaceKind.LABEL: 0.3, PlaceKind.CHAT_TURN: 0.3, PlaceKind.ASKING: 0.1, PlaceKind.LAST_BLOCK: 0.1,
          PlaceKind.FIRST_BLOCK: 0.1, PlaceKind.LAST_SENTENCE: 0.0}
#: The most of a prompt's budget that questions proposed inside the material take when none states the request.
MATERIAL_SHARE = 0.15


@dataclass(frozen=True)
class Located:
    """Where a prompt writes its request (:meth:`TaskFinder.place`).

    Attributes:
        primary: Flat indices of the sentences that state the request (the task description); empty where the
            prompt only points at a request it never writes.
        kept: Flat indices of every sentence compression keeps for the request, whatever its score.
        material: Those of ``kept`` that are questions proposed inside the material (capped by
            :data:`MATERIAL_SHARE`).
    """

    primary: tuple[int, ...]
    kept: tuple[int, ...]
    material: tuple[int, ...]


class TaskFinder:
    """Finds the task of prompts that come with no question: the one home of prompt-agnostic policy.

    Built once when a checkpoint loads, from its ``agnostic`` settings, its request head and its CTD. For each
    prompt, in order:

    1. **extracted**: the request head scores every sentence (on the context embeddings compression computes
       anyway); where the best reaches ``request_threshold``, the request sentences, without their wrapper, are
       the description. Nothing is generated.
    2. **coverage**: no request found, a head but no CTD: no description; coverage alone selects.
    3. Otherwise the CTD describes the whole prompt. Its description is
       **matched** when it restates prompt sentences (``match_share``): those sentences, as written, replace it;
       **generated** when the prompt grounds its content words and the description does not contradict it
       (:func:`~tpc_core.engine.task.grounding.contradicts`: an opposite, a negation, a changed name or number);
       else **fallback**: the checkpoint's neutral description replaces invented or inverted text.

    With ``describe_bare=False`` step 3 is skipped: a prompt with no question and no request found by the head
    (every question-less prompt when the checkpoint has no head) gets the **fallback** task at once, the same task
    the CTD's ungrounded descriptions lead to, without spending a generation (the slowest step by far on a CPU)
    whose result is mostly thrown away. Prompts that write their request (extracted) are unchanged. Index-time
    compression (``tpc compress-corpus``) skips by default.

    Selection: by relevance for a question, an extracted request and a matched one; by coverage (when the
    checkpoint sets coverage weights) for a generated or fallback description, for no description, and for a
    matched request that asks for a summary ("Summarise …": cosine to "summarise" ranks nothing).

    Args:
        settings: The checkpoint's ``agnostic`` settings.
        head: Its request head (its ``probabilities`` rank a prompt's sentences), or ``None`` (then every
            question-less prompt is described by the CTD).
        describe: Its CTD's ``describe`` (loaded on first call), or ``None`` when the checkpoint has no CTD.
        name: The checkpoint's name, for error messages.
    """

    def __init__(self, settings: AgnosticConfig, head: SequenceRequestHead | None, describe: Describe | None, *,
                 name: str = "tpc") -> None:
        self.settings = settings
        self.head = head
        self.describe = describe
        self.name = name

    def descriptions(self, texts: Sequence[str], read: ReadPrompts, *, separator: str) -> list[str]:
        """The task description of each whole prompt (``TPCCompressor.describe_task``).

        With a head: the cascade of :meth:`find` (the written request; else the CTD's description, matched,
        generated or fallback). Without one: the CTD's description of every prompt, as written.

        Args:
            texts: Whole prompts.
            read: Segments and embeds prompts; called only when the checkpoint has a head.
            separator: See :meth:`find`.

        Raises:
            ValueError: A description must be generated and the checkpoint has no CTD.
        """
        if not texts:
            return []
        if self.head is None:  # no extractive path: the CTD describes every prompt
            if self.describe is None:
                raise ValueError(f"Checkpoint {self.name!r} has no task descriptor (ctd); pass a question.")
            return self.describe(list(texts))
        prompts, embeddings = read(list(texts))
        tasks = self.find(prompts, embeddings, [None] * len(prompts), separator=separator)
        if any(task.source is TaskSource.COVERAGE for task in tasks):  # a head but no CTD to describe the rest
            raise ValueError(f"Checkpoint {self.name!r} has no task descriptor (ctd) to describe a prompt with no "
                             f"written request.")
        return [task.description or "" for task in tasks]

    def find(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor | Callable[[], torch.Tensor]],
             questions: Sequence[str | None], *, separator: str, describe_bare: bool = True) -> list[Task]:
        """The task of each prompt: its question where the caller gave one, else the cascade above.

        Args:
            prompts: Segmented prompts.
            embeddings: Each prompt's sentence embeddings, flat (n_sentences, d), in sentence order, or what
                computes them (called only where the request head ranks: a bare document is never embedded here).
            questions: The caller's question for each prompt, or ``None``.
            separator: Joins a prompt's documents into the text the CTD reads.
            describe_bare: Whether the CTD describes a prompt with no written request (``False``: the fallback
                task, no generation).

        Raises:
            ValueError: A prompt needs a generated description and the checkpoint has neither a CTD nor a head.
        """
        tasks: list[Task | None] = [Task.from_question(q) if q is not None else self._extract(p, e)
                                    for p, e, q in zip(prompts, embeddings, questions)]
        missing = [k for k, task in enumerate(tasks) if task is None]
        if missing and self.describe is None and self.head is not None:
            for k in missing:
                tasks[k] = Task(None, TaskSource.COVERAGE, self._whole_text_selection())
        elif missing and not describe_bare:
            for k in missing:
                tasks[k] = dataclasses.replace(self._fallback(), missed=unplaced(prompts[k]))
        elif missing:
            if self.describe is None:
                raise ValueError("This checkpoint has no task descriptor (ctd) and no request head: pass a question.")
            texts = [separator.join(prompts[k].documents) for k in missing]
            for k, text, description in zip(missing, texts, self.describe(texts)):
                judged = self._judge(description, text, prompts[k].sentences)
                tasks[k] = dataclasses.replace(judged, missed=unplaced(prompts[k])) \
                    if judged.source is TaskSource.FALLBACK else judged
        return [task for task in tasks if task is not None]

    def find_request(self, prompt: str, read: ReadPrompts | ReadLazily) -> FoundRequest | None:
        """The request ``prompt`` writes, as compression places it (its structure, then the head), without the
        CTD; ``None`` when none is placed, or the prompt is blank.

        Args:
            prompt: One whole prompt (one document).
            read: Segments and embeds prompts (the compressor's default splitter and counter); it may give, for the
                embeddings, what computes them: called only where the head ranks.
        """
        if not prompt.strip():
            return None
        prompts, embeddings = read([prompt])
        found = self.place(prompts[0], embeddings[0])
        if found is None:
            return None
        primary = found.primary or found.kept  # a pointer at nothing written is the only request there is
        spans = prompts[0].spans[0]
        return FoundRequest(tuple(spans[i] for i in primary), request_text(prompts[0].sentences, primary),
                            kept=tuple(spans[i] for i in found.kept), material=tuple(spans[i] for i in found.material))

    def locate(self, prompt: Segmented, embeddings: torch.Tensor | Callable[[], torch.Tensor] | None,
               ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``(primary, kept)``: the sentences that state the prompt's request (the task description: its parts that
        carry content) and every sentence compression keeps for it, as flat indices; ``None`` when the prompt asks
        nothing that can be placed. ``primary`` is empty where the prompt only points at a request it never writes
        ("Now answer the question." and nothing else that asks). See :meth:`place`."""
        located = self.place(prompt, embeddings)
        return None if located is None else (located.primary, located.kept)

    def place(self, prompt: Segmented, embeddings: torch.Tensor | Callable[[], torch.Tensor] | None,
              ) -> Located | None:
        """Where the prompt writes its request, and what compression keeps for it; ``None`` when nothing is placed.

        Structure places the request (:func:`~tpc_core.engine.task.placement.place_request`, on the last document
        that places one): every candidate place is kept, and a whole chat turn longer than
        ``max_request_sentences`` is cut to the sentences the head believes ask (:meth:`_structural`). More
        candidates are proposed and kept besides (:func:`~tpc_core.engine.task.asking.propose`): the paragraph
        beside a generic closing or opening line, and sentences that ask the reader wherever they stand; those
        inside the material are kept up to :data:`MATERIAL_SHARE` of the budget. They add to what structure keeps
        and never replace it. A candidate that only points at the request ("Now answer the question.") or asks
        for nothing in particular ("Answer briefly.") is kept and is never the request: among the candidates that
        carry content, the head (where the checkpoint has one) chooses the one that states it, each kind of
        place adding a small prior (:meth:`_choose`); without one, the most trusted kind.
        """
        sentences = prompt.sentences
        if not sentences:
            return None
        found = None
        offset = 0
        for document, spans in zip(prompt.documents, prompt.spans):
            place = place_request(document, spans)
            if place is not None:
                found = (offset, place)
            offset += len(spans)
        proposed = propose(prompt)
        if found is None and not proposed:  # structure decides whether the prompt asks: a bare document places nothing
            return None
        limit = self.settings.max_request_sentences
        structural = ([tuple(found[0] + k for k in candidate) for candidate in found[1].candidates]
                      if found is not None else [])
        kinds = list(found[1].kinds) if found is not None else []
        every = [*structural, *(p.sentences for p in proposed)]
        generic = [is_generic(request_text(sentences, list(candidate))) for candidate in every]
        needs_head = len(structural) > 1 or generic.count(False) > 1 or any(
            kind is PlaceKind.CHAT_TURN and len(candidate) > limit for candidate, kind in zip(structural, kinds))
        probabilities = (self.head.probabilities(embeddings() if callable(embeddings) else embeddings, sentences)
                         if needs_head and self.head is not None and embeddings is not None else None)
        # the head ranks only where there is a choice: only then are lazy embeddings computed
        placed = [self._within(candidate, kind, probabilities) for candidate, kind in zip(structural, kinds)]
        kept = set(self._structural(sentences, placed, kinds, probabilities)[1]) if placed else set()
        # what structure keeps is kept whatever the head chooses below
        candidates = [*placed, *(p.sentences for p in proposed)]
        all_kinds = [*kinds, *(p.kind for p in proposed)]
        content = [k for k, flag in enumerate(generic) if not flag]
        kept |= {i for k, flag in enumerate(generic) if flag for i in candidates[k]}
        kept |= {i for p in proposed if not p.material for i in p.sentences}
        if not content:  # a pointer with nothing it points at: kept, and the prompt asks nothing else
            return Located((), tuple(sorted(kept)), ())
        chosen = content[self._choose([candidates[k] for k in content], [all_kinds[k] for k in content],
                                      probabilities)]
        primary = [candidates[chosen]]
        for k, flag in enumerate(generic):  # a pointer to several requests ("the questions above") keeps them all
            if flag:
                side, several = pointer_direction(request_text(sentences, list(candidates[k])))
                if several:
                    primary += [candidates[j] for j in content if side == 0 or (candidates[j][0] - candidates[k][0])
                                * side > 0]
        request = complete_request(sentences, sorted({i for candidate in primary for i in candidate}))
        kept |= set(request)
        material = self._material_kept(prompt, [p.sentences for p in proposed if p.material], kept, probabilities)
        kept |= set(material)
        return Located(tuple(_with_content(sentences, request)), tuple(sorted(kept)), material)

    @staticmethod
    def _structural(sentences: Sequence[str], placed: Sequence[tuple[int, ...]], kinds: Sequence[PlaceKind],
                    probabilities: torch.Tensor | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(primary, kept)`` from structure's places alone: the most trusted kind of place states the request
        (among several of that kind, the one holding the head's most probable sentence), and every place is kept."""
        rank = min(_TRUST[kind] for kind in kinds)
        trusted = tuple(c for c, kind in zip(placed, kinds) if _TRUST[kind] == rank)
        primary = trusted[0]
        if probabilities is not None and len(trusted) > 1:  # the trusted place the head believes most
            best = [float(probabilities[list(candidate)].max()) for candidate in trusted]
            primary = trusted[best.index(max(best))]
        primary = tuple(complete_request(sentences, list(primary)))
        return primary, tuple(sorted({k for candidate in (*placed, primary) for k in candidate}))

    def _choose(self, candidates: Sequence[tuple[int, ...]], kinds: Sequence[PlaceKind],
                probabilities: torch.Tensor | None) -> int:
        """Which candidate states the request: the one holding the head's most probable sentence, each candidate's
        probability raised by how far its kind of place is trusted (:data:`_PRIOR`); without a head, the most
        trusted kind, the first of it."""
        if probabilities is None:
            ranks = [_TRUST[kind] for kind in kinds]
            return ranks.index(min(ranks))
        scores = [float(probabilities[list(candidate)].max()) + _PRIOR[kind] for candidate, kind in
                  zip(candidates, kinds)]
        return scores.index(max(scores))

    @staticmethod
    def _material_kept(prompt: Segmented, proposed: Sequence[tuple[int, ...]], kept: set[int],
                       probabilities: torch.Tensor | None) -> tuple[int, ...]:
        """The proposed questions inside the material that are kept: the head's most probable first, while they
        take at most :data:`MATERIAL_SHARE` of the prompt's budget (one already kept costs nothing)."""
        counts = [count for document in prompt.counts for count in document]
        order = sorted(proposed, key=lambda c: -float(probabilities[list(c)].max()) if probabilities is not None
                       else c[0])
        room = MATERIAL_SHARE * prompt.budget
        taken: list[int] = []
        for candidate in order:
            cost = sum(counts[i] for i in candidate if i not in kept)
            if cost <= room:
                room -= cost
                taken += candidate
        return tuple(sorted(set(taken)))

    def _within(self, candidate: tuple[int, ...], kind: PlaceKind, probabilities: torch.Tensor | None,
                ) -> tuple[int, ...]:
        """A whole chat turn placed for want of anything sharper, cut to the sentences that ask where it is longer
        than ``max_request_sentences``: the head's most probable sentence and its confident neighbours (without
        a head, the turn's last sentences). Every other candidate is kept as placed."""
        limit = self.settings.max_request_sentences
        if kind is not PlaceKind.CHAT_TURN or len(candidate) <= limit:
            return candidate
        if probabilities is None:
            return candidate[-limit:]
        inside = probabilities[list(candidate)]
        picked = pick_request(inside, float(inside.max()), limit, self.settings.request_neighbour_threshold)
        return tuple(candidate[j] for j in picked)

    def _extract(self, prompt: Segmented, embeddings: torch.Tensor | Callable[[], torch.Tensor]) -> Task | None:
        """The prompt's written request, where it is placed: kept verbatim, and the task description."""
        found = self.locate(prompt, embeddings)
        if found is None:
            return None
        primary, kept = found
        if not primary:  # only a pointer, at nothing written: kept, and the prompt is read as asking nothing else
            fallback = self._fallback()
            return Task(fallback.description, fallback.source, fallback.selection, request=kept,
                        missed=unplaced(prompt, kept))
        description = without_request_label(request_text(prompt.sentences, primary))
        selection = self._whole_text_selection() if asks_for_summary(description) else Selection.RELEVANCE
        return Task(description, TaskSource.EXTRACTED, selection, request=kept)

    def _judge(self, description: str, text: str, sentences: Sequence[str]) -> Task:
        """A generated description: matched, generated or fallback."""
        settings = self.settings
        if self.head is not None and not is_grounded(description, text):
            return self._fallback()
        matched = (match_sentences(description, sentences, share=settings.match_share,
                                   max_sentences=settings.max_request_sentences) if settings.match_share else [])
        if matched and not _asks(request_text(sentences, matched)):
            # structure placed no request here, so a restated sentence must itself ask: a CTD that restates a
            # statement of a bare document has invented a request (the document is then selected as one)
            return self._fallback()
        if matched:  # the request as written, not the CTD's paraphrase of it
            request = request_text(sentences, matched)
            return Task(request, TaskSource.MATCHED,
                        self._whole_text_selection() if asks_for_summary(request) else Selection.RELEVANCE,
                        request=tuple(matched))
        if self.head is not None and contradicts(description, text):  # turned around, or another name: worse
            # than no description (a checkpoint without a head is the paper's CTD mode: its description as written)
            return self._fallback()
        return Task(description, TaskSource.GENERATED, self._whole_text_selection())

    def _fallback(self) -> Task:
        """The checkpoint's neutral description, selected as a prompt that asks for no specific fact."""
        return Task(self.settings.fallback_description, TaskSource.FALLBACK, self._whole_text_selection())

    def _whole_text_selection(self) -> Selection:
        """How a prompt that asks for no specific fact is selected: coverage, where the checkpoint sets it."""
        return Selection.COVERAGE if self.settings.uses_coverage else Selection.RELEVANCE


def _asks(text: str) -> bool:
    """Whether ``text`` reads as a request, or its part after a colon does ("I have a question: which river ...")."""
    return reads_as_request(text) or any(reads_as_request(part) for part in text.split(":")[1:] if part.strip())


def _with_content(sentences: Sequence[str], request: Sequence[int]) -> list[int]:
    """The sentences of a request that carry content (a generic part, "Answer briefly.", adds nothing to what the
    request is scored against); all of them where none does."""
    parts = [i for i in request if not is_generic(request_text(sentences, [i]))]
    return parts or list(request)
