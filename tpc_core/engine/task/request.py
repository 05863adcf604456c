"""Extractive task description: find the sentences of a prompt that state its request (no generation).

Most real prompts already write their question or request in words ("Question: ...", "Extract the value
of key ..."). A linear head over the CSE's own context-aware sentence embeddings, plus a few layout
features, scores each sentence's chance of being (part of) that request. Where the best sentence is
confident, the request sentences, verbatim and in order, become the task description and nothing is
generated; elsewhere (a bare document, a summarisation prompt) the CTD writes one.

The head costs one matrix-vector product per prompt: the embeddings are the ones compression computes
anyway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from tpc_core.engine.task.cues import addresses_reader, imperative_start
from tpc_core.engine.task.turns import read_turns, turn_text

__all__ = ["FEATURE_NAMES", "POSITION_CAP", "RequestHead", "asks_for_summary", "complete_request", "content_words",
           "is_grounded", "layout_features", "match_sentences", "pick_request", "request_covered", "request_text",
           "sentence_core"]

_LABEL = re.compile(r"^\W{0,3}(?:[A-Za-z]+(?: [A-Za-z]+)?)\s*:")
_OPTION = re.compile(r"^\s*\(?[A-Ha-h][.):]\s")
# Words a written request starts with (after a label such as "Question:").
_ASK_WORDS = ("what|who|whom|whose|when|where|which|why|how|is|are|was|were|do|does|did|can|could|should|would|will|"
              "has|have|name|list|find|extract|give|tell|identify")
_ASKING = re.compile(rf"^\W{{0,3}}(?:[A-Za-z]+\s*:\s*)?(?:{_ASK_WORDS})\b", re.IGNORECASE)
# Wrapper-independent cues: the same request reads alike as "Question: ...", "<question>...</question>",
# '"question": "..."', "### Question" + a line, or "My question is: ...". Leading markup (tags, quotes, braces,
# heading and list marks) and one short leading label are peeled off before the request cues are looked for.
_LEAD_MARKUP = re.compile(r"^(?:\s+|[\"'`{}\[\],>#*_=|~-]+|</?[A-Za-z][\w.-]*(?:\s[^<>]*)?>)+")
_KEY = re.compile(r"^[\"']?([A-Za-z][\w ]{0,40}?)[\"']?\s*[:=]\s*")
_TAG = re.compile(r"<\s*/?\s*([A-Za-z][\w.-]*)")
_CUE = re.compile(r"\b(?:question|questions|query|queries|task|instruction|instructions|request|ask|asked|input|"
                  r"problem|prompt|q)\b", re.IGNORECASE)
_CUE_LOWER = re.compile(_CUE.pattern)  # the same words in lower case: on a lower-cased ASCII text, a faster search
_ANSWER_CUE = re.compile(r"^\W{0,4}(?:answer|response|output|assistant|a|your (?:answer|choice|reply)|result|summary|"
                         r"label)\b[\w ]{0,20}\W*$", re.IGNORECASE)
# Labels a description drops besides the cues: a speaker's ("User:", "### Human:") and a form's or ticket's field.
_SPEAKER_LABEL = re.compile(r"^[\s#*>_-]{0,6}(?:user|human|me|customer|client|prompter|system|assistant|ai|bot|model)"
                            r"[*_]{0,2}\s*:\s*", re.IGNORECASE)
_FIELD_LABEL = re.compile(r"\b(?:message|issue|subject|body|comment|comments|details|description|inquiry|enquiry|"
                          r"ticket|ask)\b", re.IGNORECASE)
_ASKING_CORE = re.compile(rf"^(?:{_ASK_WORDS}|in which|according to)\b", re.IGNORECASE)
_MARKUP_START = frozenset("<{[\"'#*|`-")
_TRAIL_MARKUP = re.compile(r"(?:[\"'`{}\[\],]|</?[A-Za-z/][\w./-]*>|\[/?[A-Z]+\])$")
# Positions are counted from either end and capped, so a feature means the same in a short prompt and in a
# 10k-token one (and in the head-and-tail views training uses).
POSITION_CAP = 16
FEATURE_NAMES: tuple[str, ...] = (
    "from_start", "from_end", "first_two", "last_two", "question_mark", "label_colon", "option_marker",
    "log_words", "previous_question_mark", "next_question_mark", "previous_option", "next_option",
    "asking_start", "inner_question_mark", "previous_label_colon",
    "cue_label", "previous_cue_only", "asking_core", "markup_start", "short_line", "next_answer_cue",
    "lower_start", "cue_early", "turn_user", "turn_last_user", "turn_other", "addresses_reader",
    "imperative_start",
)


def sentence_core(sentence: str) -> tuple[str, str]:
    """``(label, rest)``: a sentence's leading label (a ``key:`` prefix of at most five words, and the names of
    the tags it opens with) and the text after that label and any leading markup.

    >>> sentence_core('",  "question": "who wrote it"')
    ('question', 'who wrote it"')
    >>> sentence_core("<question>who wrote it</question>")
    ('question question', 'who wrote it</question>')
    """
    text = sentence.strip()
    tags = " ".join(_TAG.findall(text[:60]))
    rest = _LEAD_MARKUP.sub("", text)
    label = ""
    match = _KEY.match(rest)
    if match and len(match.group(1).split()) <= 5:
        label, rest = match.group(1), _LEAD_MARKUP.sub("", rest[match.end():])
    return f"{label} {tags}".strip(), rest


def _without_trailing_markup(sentence: str, *, keep_paired_quotes: bool = False) -> str:
    """The sentence without the closing tags, quotes, braces and ``[/INST]``-style marks at its end, peeled one
    piece at a time (linear in the sentence, never a backtracking regex over all of it).

    With ``keep_paired_quotes`` a closing quote stays where the text has an even number of that quote, so it
    closes a quotation of the text's own (``Key: "a1b2"``) rather than a wrapper's string.
    """
    text = sentence.rstrip()
    while text:
        tail = text[-40:]
        match = _TRAIL_MARKUP.search(tail)
        if match is None:
            break
        piece = match.group(0)
        if keep_paired_quotes and piece in ("\"", "'") and text.count(piece) % 2 == 0:
            break
        text = text[: len(text) - len(tail) + match.start()].rstrip()
    return text


def layout_features(sentences: Sequence[str]) -> torch.Tensor:
    """Layout features of each sentence of one prompt, in :data:`FEATURE_NAMES` order, as an (n, F) tensor.

    Args:
        sentences: The prompt's sentences in order (all documents, flattened).
    """
    count = len(sentences)
    # A question mark counts before closing markup too: "...?</question>", '...?"', "...? [/INST]".
    turns = read_turns(sentences)
    question = [_without_trailing_markup(text).endswith("?") for text in turns.texts]
    option = [_OPTION.match(s) is not None for s in sentences]
    label = [_LABEL.match(s) is not None for s in sentences]
    cores = [sentence_core(s) for s in sentences]
    words = [s.split() for s in sentences]  # split once: read by four features
    roles = turns.roles
    last_user = max((i for i, role in enumerate(roles) if role == "user" and (i == 0 or roles[i - 1] != "user")),
                    default=count)
    cue_only = [len(split) <= 4 and _CUE.search(s) is not None and len(rest.split()) <= 3
                for s, split, (_, rest) in zip(sentences, words, cores)]
    rows = []
    for index, sentence in enumerate(sentences):
        core_label, rest = cores[index]
        stripped, early = sentence.strip(), " ".join(words[index][:8])
        rows.append([
            min(index, POSITION_CAP) / POSITION_CAP,
            min(count - 1 - index, POSITION_CAP) / POSITION_CAP,
            float(index < 2),
            float(index >= count - 2),
            float(question[index]),
            float(label[index]),
            float(option[index]),
            math.log1p(len(words[index])) / 5.0,
            float(index > 0 and question[index - 1]),
            float(index + 1 < count and question[index + 1]),
            float(index > 0 and option[index - 1]),
            float(index + 1 < count and option[index + 1]),
            float(_ASKING.match(sentence) is not None),
            float("?" in sentence.rstrip()[:-1]),
            float(index > 0 and label[index - 1]),
            float(_CUE.search(core_label) is not None),
            float(index > 0 and cue_only[index - 1]),
            float(_ASKING_CORE.match(rest) is not None),
            float(stripped[:1] in _MARKUP_START if stripped else False),
            float(len(words[index]) <= 4),
            float(index + 1 < count and _ANSWER_CUE.match(sentences[index + 1].strip()) is not None),
            float(rest[:1].islower()),
            float((_CUE_LOWER.search(early.lower()) if early.isascii() else _CUE.search(early)) is not None),
            float(roles[index] == "user"),
            float(roles[index] == "user" and index >= last_user),
            float(roles[index] in ("system", "assistant")),
            float(addresses_reader(sentence)),
            float(imperative_start(_LEAD_MARKUP.sub("", stripped)) or imperative_start(rest)),
        ])
    return torch.tensor(rows, dtype=torch.float32).reshape(count, len(FEATURE_NAMES))


@dataclass(frozen=True)
class RequestHead:
    """A small classifier over ``[sentence embedding, layout features]``: logistic regression, or one ReLU
    hidden layer before it when ``hidden_weight`` is set.

    Attributes:
        weight: (d + F,) output weights (or (H,) after a hidden layer).
        bias: Output intercept.
        hidden_weight: Optional (H, d + F) hidden-layer weights.
        hidden_bias: Optional (H,) hidden-layer biases.
    """

    weight: torch.Tensor
    bias: float
    hidden_weight: torch.Tensor | None = None
    hidden_bias: torch.Tensor | None = None

    @property
    def input_width(self) -> int:
        """Width of the input ``[embedding, layout features]`` the head was trained on."""
        return int(self.weight.shape[0] if self.hidden_weight is None else self.hidden_weight.shape[1])

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Raw scores of (n, d + F) inputs."""
        hidden = inputs.float()
        if self.hidden_weight is not None:
            hidden = torch.relu(hidden @ self.hidden_weight.float().T + self.hidden_bias.float())
        return hidden @ self.weight.float() + self.bias

    def probabilities(self, embeddings: torch.Tensor, sentences: Sequence[str]) -> torch.Tensor:
        """Probability that each sentence states the request.

        Args:
            embeddings: (n, d) L2-normalised CSE sentence embeddings of one prompt.
            sentences: The same n sentences' texts.

        Raises:
            ValueError: If the embedding width does not match the head.
        """
        if len(sentences) != len(embeddings):
            raise ValueError(f"{len(embeddings)} embeddings for {len(sentences)} sentences.")
        if not len(sentences):
            return torch.zeros(0)
        inputs = torch.cat([embeddings.float(), layout_features(sentences)], dim=1)
        if inputs.shape[1] != self.input_width:
            raise ValueError(f"The request head expects {self.input_width - len(FEATURE_NAMES)}-d embeddings; "
                             f"the encoder gives {embeddings.shape[1]}-d. Train a head for this encoder.")
        return torch.sigmoid(self.logits(inputs))

    def save(self, path: str | Path) -> None:
        """Write the head as safetensors (``weight``, ``bias``)."""
        from safetensors.torch import save_file

        tensors = {"weight": self.weight.detach().float().contiguous(), "bias": torch.tensor([float(self.bias)])}
        if self.hidden_weight is not None and self.hidden_bias is not None:
            tensors.update(hidden_weight=self.hidden_weight.detach().float().contiguous(),
                           hidden_bias=self.hidden_bias.detach().float().contiguous())
        save_file(tensors, str(path), metadata={"features": ",".join(FEATURE_NAMES)})

    @classmethod
    def load(cls, path: str | Path) -> RequestHead:
        """Read a head written by :meth:`save`.

        Raises:
            ValueError: If the file lacks ``weight`` / ``bias`` or was made with other layout features.
        """
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as handle:
            names = set(handle.keys())
            if not {"weight", "bias"} <= names:
                raise ValueError(f"{path} is not a request head: it holds {sorted(names)}, not weight and bias.")
            features = (handle.metadata() or {}).get("features")
            if features is not None and features != ",".join(FEATURE_NAMES):
                raise ValueError(f"{path} was trained with other layout features ({features}); retrain it.")
            weight, bias = handle.get_tensor("weight"), handle.get_tensor("bias")
            hidden = (handle.get_tensor("hidden_weight"), handle.get_tensor("hidden_bias")) \
                if {"hidden_weight", "hidden_bias"} <= names else (None, None)
        if weight.ndim != 1 or bias.numel() != 1:
            raise ValueError(f"{path}: weight must be 1-D and bias a single number.")
        if hidden[0] is not None and (hidden[0].ndim != 2 or hidden[0].shape[0] != weight.shape[0]
                                      or hidden[1].shape != (weight.shape[0],)):
            raise ValueError(f"{path}: hidden_weight must be (H, d + F) and hidden_bias (H,) with H = len(weight).")
        return cls(weight.float(), float(bias.item()), *hidden)


def pick_request(probabilities: torch.Tensor, threshold: float, max_sentences: int,
                 neighbour_threshold: float | None = None) -> list[int]:
    """Indices (ascending) of the request sentences, or ``[]`` when no sentence reaches ``threshold``.

    At most ``max_sentences`` are taken, the most probable first; a question written twice (before and after
    the context) counts once per occurrence. With ``neighbour_threshold``, a sentence next to a picked one is
    taken too when it reaches that lower bar (and so on outwards): a request written over two sentences ("I need
    some information about X. Is it ...?") often has one sentence the head is sure of and one it is not.
    """
    if not len(probabilities) or float(probabilities.max()) < threshold:
        return []
    ranked = sorted(range(len(probabilities)), key=lambda i: (-float(probabilities[i]), i))
    picked = {i for i in ranked[:max_sentences] if float(probabilities[i]) >= threshold}
    if neighbour_threshold is not None:
        frontier = sorted(picked)
        while frontier and len(picked) < max_sentences:
            index = frontier.pop(0)
            for near in (index - 1, index + 1):
                if 0 <= near < len(probabilities) and near not in picked and len(picked) < max_sentences \
                        and float(probabilities[near]) >= neighbour_threshold:
                    picked.add(near)
                    frontier.append(near)
    return sorted(picked)


def complete_request(sentences: Sequence[str], picked: Sequence[int]) -> list[int]:
    """The picked sentences with the rest of a multiple-choice request they belong to: its option lines and its
    stem.

    A head that fires on an option line ("A. ...") would otherwise give the options without the question they
    answer, and one that fires on the stem would give the stem without its options. Where a picked sentence is
    an option, the whole run of option lines around it is added, and the sentence before the run (the stem);
    when that sentence is a short line that asks nothing itself ("Select all that apply.", "Question 1."), the
    one before it too. Where a picked sentence, or the short line after it, is followed by options, they are
    added.

    >>> complete_request(["Text.", "Question 1.", "Which of these is red?", "Select all that apply.",
    ...                   "A. ruby", "B. jade"], [4])
    [2, 3, 4, 5]
    """
    chosen = set(picked)
    options = [_OPTION.match(s) is not None for s in sentences]
    for index in sorted(picked):
        if options[index]:
            first = last = index
            while first > 0 and options[first - 1]:
                first -= 1
            while last + 1 < len(sentences) and options[last + 1]:
                last += 1
            chosen.update(range(first, last + 1))
            stem = first - 1
            if stem >= 0:
                chosen.add(stem)
                if stem > 0 and _asks_nothing(sentences[stem]) and not options[stem - 1]:
                    chosen.add(stem - 1)
        else:
            after = index + 1
            if after + 1 < len(sentences) and not options[after] and _asks_nothing(sentences[after]) \
                    and options[after + 1]:
                chosen.add(after)
                after += 1
            while after < len(sentences) and options[after]:
                chosen.add(after)
                after += 1
    return sorted(chosen)


def _asks_nothing(sentence: str) -> bool:
    """A short line that is no question itself: "Select all that apply.", "Question 1.", "Choose one."."""
    text = _without_trailing_markup(sentence)
    return len(text.split()) <= 6 and not text.endswith(("?", ":"))


def request_text(sentences: Sequence[str], picked: Sequence[int]) -> str:
    """The picked sentences as a task description: the request's own words, each sentence without the wrapper
    around it, joined by spaces, each distinct text once (a repeated question is stated once).

    The wrapper is the prompt's format: chat-template tokens and anything of the next turn after them
    (:func:`tpc_core.engine.task.turns.turn_text`), a speaker's label ("User:", "### Human:"), leading and trailing
    markup (tags, quotes, braces, heading marks) and a leading label that names the request or its field
    ("Question:", ``"question":``, "My question is:", "Customer request:", "Message:"): the CSE compares the request
    itself. A label that is part of the request ("Key: ...") is kept. A picked label or marker alone contributes
    nothing; if every one is, the picked sentences that are not markers are used as written.

    >>> request_text(['  "question": "Who wrote it?"'], [0]), request_text(['Key: "a1b2"'], [0])
    ('Who wrote it?', 'Key: "a1b2"')
    >>> request_text(["User:", "when did it start?<|im_end|>", "A. 1909", "B. 1910"], [0, 1])
    'when did it start? A. 1909 B. 1910'
    """
    picked = complete_request(sentences, picked)
    seen: dict[str, None] = {}
    for index in picked:
        text = _SPEAKER_LABEL.sub("", turn_text(sentences[index]), count=1)
        label, rest = sentence_core(text)
        if not (label and (_CUE.search(label) or _FIELD_LABEL.search(label))):
            rest = _LEAD_MARKUP.sub("", text.strip())
        text = " ".join(_without_trailing_markup(rest, keep_paired_quotes=True).split())
        if text:
            seen.setdefault(text, None)
    if not seen:
        written = [sentences[i] for i in picked if turn_text(sentences[i])] or [sentences[i] for i in picked]
        return " ".join(dict.fromkeys(" ".join(sentence.split()) for sentence in written))
    return " ".join(seen)


_STOP = frozenset("a an the of in on at to for from by with and or but is are was were be been this that these those it its "
                  "what which who whom whose when where why how do does did can could should would will i you he she "
                  "we they me my your our their prompt asks ask question answer text".split())


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: lower-cased, stop words and the descriptor's framing words out.

    >>> content_words("What is the value of the key?")
    ['value', 'key']
    """
    return [w for w in re.findall(r"\w+", text.lower()) if w not in _STOP and len(w) > 1]


def request_covered(request: str, description: str | None, *, share: float = 0.8) -> bool:
    """Whether a task description keeps a written request: at least ``share`` of the request's distinct content
    words occur in it (the measure of ``benchmarks.request_found``).

    >>> request_covered("Highlight the parts that name the lawyer.", "Highlight the parts that name a lawyer")
    True
    >>> request_covered("Highlight the parts that name the lawyer.", "Summarise the main points of the text.")
    False
    """
    words = set(content_words(request))
    if not words:
        return True
    present = set(content_words(description or ""))
    return len(words & present) >= share * len(words)


def match_sentences(description: str, sentences: Sequence[str], *, share: float, min_words: int = 2,
                    max_sentences: int = 8) -> list[int]:
    """The sentences of the prompt that a generated description restates, if it restates some.

    The CTD often paraphrases a written request it found ("The prompt asks: Who plays Sheila Carter?" for
    "I have a question: who plays sheila carter on the bold and the beautiful") and a paraphrase loses words
    the request had. The sentence holding the most of the description's content words (at least
    ``min_words``; the first wins ties) is taken, then its neighbours while each adds ``min_words`` more of
    them (a question's options, a request written over two sentences), at most ``max_sentences`` in all.

    Returns:
        Their indices, ascending, when they hold at least ``share`` of the description's content words;
        otherwise ``[]``.

    >>> match_sentences("The prompt asks: Who plays Sheila Carter?",
    ...                 ["Some text.", "I have a question: who plays sheila carter on the show"], share=0.8)
    [1]
    """
    words = set(content_words(description))
    if len(words) < min_words or not sentences:
        return []
    present = [words & set(content_words(sentence)) for sentence in sentences]
    best = max(range(len(sentences)), key=lambda i: (len(present[i]), -i))
    if len(present[best]) < min_words:
        return []
    low, high, covered = best, best, set(present[best])
    while high - low + 1 < max_sentences:
        gains = [(len(present[i] - covered), i) for i in (low - 1, high + 1) if 0 <= i < len(sentences)]
        gain, index = max(gains, default=(0, -1))
        if gain < min_words:
            break
        covered |= present[index]
        low, high = min(low, index), max(high, index)
    return list(range(low, high + 1)) if len(covered) >= share * len(words) else []


_SUMMARY_WORDS = re.compile(r"\b(?:summar\w*|overview|gist|main points|key points|tl;?dr|digest|recap|outline)\b",
                            re.IGNORECASE)


def asks_for_summary(request: str) -> bool:
    """Whether a written request asks for a summary of the whole text ("Summarise …", "the gist", "main points").

    A matched request of that kind keeps the coverage selection that prompts with no question get (cosine to
    "summarise" does not rank sentences); any other matched request (a question, a key to look up) is scored
    by relevance, like an extracted one.

    >>> asks_for_summary("Summarise the report in five bullet points."), asks_for_summary("What are the main points?")
    (True, True)
    >>> asks_for_summary("who plays sheila carter"), asks_for_summary('Key: "3180d3d4"')
    (False, False)
    """
    return bool(_SUMMARY_WORDS.search(request))


def is_grounded(description: str, prompt: str, *, min_words: int = 2, share: float = 0.8) -> bool:
    """Whether a generated description restates something the prompt writes.

    At least ``min_words`` of its content words (stop words and the descriptor's own framing words left out),
    and at least ``share`` of them, must occur in the prompt. "What is this?" or an invented question about
    a bare document is not grounded; a restated question, key or field list is.
    """
    words = content_words(description)
    if len(words) < min_words:
        return False
    present = set(re.findall(r"\w+", prompt.lower()))
    return sum(w in present for w in words) >= share * len(words)
