"""A prompt in a language the checkpoint was not trained on: said once, with a checkpoint that serves it if one exists.

A checkpoint declares the languages it was trained on (``tpc_config.json`` ``languages``: ISO 639-1 codes). A
prompt's language is not detected (that needs a model); its *script* is, from its letters' Unicode names, and a
script that none of the checkpoint's languages is written in means the prompt is not in any of them. A prompt
mostly in such a script gets one notice per script and compressor (:class:`LanguageNotice`): a
``TPCRuntimeWarning`` at the caller's line, also logged. A prompt in another language of the same script (French
for an English checkpoint) is not noticed: its script says nothing of it.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from tpc_core.diagnostics.notices import caller_warning

__all__ = ["LANGUAGE_SCRIPTS", "LanguageNotice", "dominant_script", "language_scripts", "script_of"]


LANGUAGE_SCRIPTS: Mapping[str, tuple[str, ...]] = {
    **{code: ("Latin",) for code in ("en", "fr", "de", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "pl", "cs",
                                     "ro", "hu", "tr", "id", "vi", "ca", "sk", "sl", "hr", "et", "lv", "lt", "sw")},
    "zh": ("Han",), "ja": ("Han", "Kana"), "ko": ("Hangul", "Han"), "ar": ("Arabic",), "fa": ("Arabic",),
    "ur": ("Arabic",), "ru": ("Cyrillic",), "uk": ("Cyrillic",), "bg": ("Cyrillic",), "sr": ("Cyrillic", "Latin"),
    "hi": ("Devanagari",), "mr": ("Devanagari",), "ne": ("Devanagari",), "bn": ("Bengali",), "th": ("Thai",),
    "he": ("Hebrew",), "el": ("Greek",), "ta": ("Tamil",), "te": ("Telugu",), "ka": ("Georgian",),
    "hy": ("Armenian",), "am": ("Ethiopic",),
}
"""The scripts each language (ISO 639-1) is written in, as :func:`script_of` names them."""

MOSTLY = 0.5
"""Share of a prompt's letters in one script above which the prompt is in that script."""

_SAMPLE_CHARS = 4000  # of the start of a prompt: enough to tell its script, bounded cost on any prompt
_LETTER = re.compile(r"[^\W\d_]")
_ALIASES = {"CJK": "Han", "HIRAGANA": "Kana", "KATAKANA": "Kana", "HALFWIDTH": "Kana"}


@functools.lru_cache(maxsize=4096)
def script_of(letter: str) -> str:
    """The script of a letter, from its Unicode name: "Latin", "Han", "Kana", "Hangul", "Arabic", "Cyrillic", ...
    ("Unknown" for a letter without a name)."""
    name = unicodedata.name(letter, "")
    if not name:
        return "Unknown"
    if "LATIN" in name.split():  # FULLWIDTH LATIN ..., LATIN SMALL LETTER ...
        return "Latin"
    first = name.split()[0]
    return _ALIASES.get(first, first.title())


def dominant_script(texts: Iterable[str]) -> tuple[str, float] | None:
    """The script most of the letters at the start of ``texts`` are written in, with its share of them; ``None``
    without a letter."""
    letters: Counter[str] = Counter()
    budget = _SAMPLE_CHARS
    for text in texts:
        sample = text[:budget]
        budget -= len(sample)
        if sample.isascii():
            letters["Latin"] += len(_LETTER.findall(sample))
        else:
            for letter, count in Counter(_LETTER.findall(sample)).items():
                letters[script_of(letter)] += count
        if budget <= 0:
            break
    total = sum(letters.values())
    if not total:
        return None
    script, count = letters.most_common(1)[0]
    return script, count / total


def language_scripts(languages: Iterable[str]) -> frozenset[str]:
    """The scripts ``languages`` are written in (codes :data:`LANGUAGE_SCRIPTS` does not know add none)."""
    return frozenset(script for code in languages for script in LANGUAGE_SCRIPTS.get(code.lower(), ()))


class LanguageNotice:
    """Notices, once per script, prompts mostly in a script none of a checkpoint's languages is written in.

    Args:
        checkpoint: The checkpoint's name (for the message).
        languages: The languages it was trained on (ISO 639-1 codes).
        alternatives: Per script, registered checkpoints trained on a language written in it.
    """

    def __init__(self, checkpoint: str, languages: Sequence[str],
                 alternatives: Mapping[str, Sequence[str]] | None = None) -> None:
        self.checkpoint = checkpoint
        self.languages = tuple(languages)
        self.scripts = language_scripts(self.languages)
        self.alternatives = dict(alternatives or {})
        self.noticed: set[str] = set()
        self._lock = threading.Lock()

    def check(self, prompts: Iterable[Sequence[str]]) -> None:
        """Notice (once per script) the first prompt mostly in a script the checkpoint's languages are not written
        in. A prompt of ASCII text only costs a scan of its first characters."""
        for documents in prompts:
            if "Latin" in self.scripts and all(document.isascii() for document in documents):
                continue
            found = dominant_script(documents)
            if found is None or found[1] <= MOSTLY or found[0] in self.scripts or found[0] == "Unknown":
                continue
            with self._lock:
                if found[0] in self.noticed:
                    continue
                self.noticed.add(found[0])
            caller_warning(self.message(found[0]))

    def message(self, script: str) -> str:
        """What the notice says for a prompt mostly in ``script``."""
        names = self.alternatives.get(script, ())
        advice = (f"For {script} text use {' or '.join(repr(name) for name in names)}." if names else
                  f"No registered checkpoint was trained on text in {script} script; one can be trained on such text "
                  "with training/ (training/README.md).")
        return (f"The checkpoint {self.checkpoint!r} was trained on text in {', '.join(self.languages)} (ISO 639-1), "
                f"and this prompt is mostly in {script} script: its sentences may be scored poorly (a question finds "
                f"fewer of the sentences that answer it, and with no question the task is seldom read from the "
                f"prompt). {advice} (This notice is shown once per script.)")
