"""CSE training data: hard negatives from the gold passage and the distractors, and the source mix."""

from __future__ import annotations

import random

from training.cse_train import weighted
from training.curation.converters import hard_negatives, qa_row_to_mcqr
from training.curation.sentences import sentences_of

CONTEXT = (
    "Document [1] (Title: Physics prize) The first Nobel Prize in Physics went to Wilhelm Röntgen. "
    "He received it in 1901. The prize is awarded in Stockholm.\n\n"
    "Document [2] (Title: Literature) The Nobel Prize in Literature has been awarded since 1901. "
    "Poets often win it.\n\n"
    "Document [3] (Title: Cooking) Bread needs flour. Water helps too. Ovens are hot."
)
QUESTION = "who got the first nobel prize in physics"


def _row(**changes):
    row = {"id": "nq-1", "split": "train", "context": CONTEXT, "question": QUESTION, "answers": ["Wilhelm Röntgen"],
           "supporting_sentences": ["The first Nobel Prize in Physics went to Wilhelm Röntgen."], "source": "nq"}
    return {**row, **changes}


def test_hard_negatives_take_the_gold_passage_then_the_lexical_distractors():
    spans, sentences = sentences_of(CONTEXT)
    positive = next(i for i, s in enumerate(sentences) if "Röntgen" in s)
    pool = [i for i in range(len(sentences)) if i != positive]
    chosen = hard_negatives(CONTEXT, spans, sentences, {positive}, pool, QUESTION, 4, random.Random(0))
    texts = [sentences[i] for i in chosen]
    assert len(chosen) == 4 and len(set(chosen)) == 4 and positive not in chosen
    # half the room: the gold passage's other sentences
    assert {"He received it in 1901.", "The prize is awarded in Stockholm."} == set(texts[:2])
    # then the distractor sharing most (rare) question words
    assert "Nobel Prize in Literature" in texts[2]


def test_qa_row_to_mcqr_hard_mode_is_deterministic_and_never_uses_the_answer():
    first, _ = qa_row_to_mcqr(_row(), rng=random.Random(3), max_negatives=4, negatives="hard")
    second, _ = qa_row_to_mcqr(_row(), rng=random.Random(3), max_negatives=4, negatives="hard")
    assert first == second and first is not None
    assert all("Röntgen" not in first["sentences"][i] for i in first["negatives"])
    assert first["negatives"] == sorted(first["negatives"])


def test_weighted_repeats_whole_parts_and_picks_a_fixed_fraction():
    records = [{"group": f"r{i}"} for i in range(400)]
    assert len(weighted(records, 3)) == 1200
    half = weighted(records, 0.5)
    assert 150 < len(half) < 250  # a hash picks about half
    assert [r["group"] for r in half] == [r["group"] for r in weighted(list(reversed(records)), 0.5)][::-1]
    assert len(weighted(records, 1.5)) == 400 + len(half)
