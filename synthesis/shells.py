"""Shells: what a generated prompt is written as (the shell axis), given its filled slots.

Four families: chat templates with their real special tokens (ChatML, Llama 3, Llama 2, Mistral, Gemma, Phi-3,
``User:/Assistant:`` and ``Human:/AI:`` transcripts), key-value formats (YAML, JSON, TOML, INI, ``key: value``
lines), markup (markdown, HTML, XML), and documents (an e-mail thread with a quoted reply, a support ticket, a
web form, meeting notes, a code file whose comment or docstring asks, a memo, plain labelled text). Each shell
lays out the same slots (:class:`Slots`): request, material, header lines, distractor notes, system text, at the
drawn position (:data:`SHELL_POSITIONS`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from synthesis.markers import template_token
from synthesis.parts import NAMES, READ_LINES, Piece, PromptBuilder, cased, json_escape, key_name
from tpc_core.segmentation.vocabulary import MarkerKind

__all__ = ["CHAT_TEMPLATES", "SHELLS", "SHELL_FAMILIES", "SHELL_POSITIONS", "Slots", "halves", "material_escaped",
           "one_line_request", "render_shell"]


@dataclass(frozen=True)
class Slots:
    """What a shell lays out.

    Attributes:
        request: The request with the instructions around it (empty for a bare prompt).
        labelled: Whether the request is shown under its field label (key-value and XML shells always key it).
        vocabulary: ``(request label, material label)``.
        casing: How labels are written (:data:`synthesis.parts.CASINGS`).
        material: The material, as it is to appear (before escaping).
        position: Where the request stands (one of the shell's :data:`SHELL_POSITIONS`).
        header: Metadata lines, ``"Key: value"``.
        before: Distractor lines right before the request.
        after: Notes at the end of the prompt (or of the user's turn).
        system: A system prompt or rules, or ``None``.
    """

    request: tuple[Piece, ...]
    labelled: bool
    vocabulary: tuple[str, str]
    casing: str
    material: str
    position: str
    header: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    system: str | None = None

    def request_block(self) -> list[Piece]:
        """Distractors, the label (when labelled) and the request."""
        pieces: list[Piece] = [(f"{line}\n", False) for line in self.before]
        if self.labelled and self.request:
            label = cased(self.vocabulary[0], self.casing)
            pieces.append((f"{label} " if self.casing == "bracket" else f"{label}: ", False))
        return pieces + list(self.request)

    def material_label(self) -> str:
        return cased(self.vocabulary[1], self.casing)


def halves(material: str) -> tuple[str, str] | None:
    """The material cut at the blank line nearest its middle (``None`` when it has no blank line)."""
    blocks = material.split("\n\n")
    if len(blocks) < 2:
        return None
    middle = len(blocks) // 2
    return "\n\n".join(blocks[:middle]), "\n\n".join(blocks[middle:])


def _ordered(slots: Slots, material_part: list[Piece], request: list[Piece] | None = None,
             gap: str = "\n\n") -> list[Piece]:
    """The request block (``request``, else :meth:`Slots.request_block`) and the material in the slot's position:
    ``before`` / ``turn_start``, ``between`` (the material's halves around it), else after."""
    request = slots.request_block() if request is None else request
    if not request:
        return material_part
    if slots.position in ("before", "turn_start"):
        return [*request, (gap, False), *material_part]
    if slots.position == "between":
        split = halves(slots.material)
        if split is not None:
            return [(f"{split[0]}{gap}", False), *request, (f"{gap}{split[1]}", False)]
    return [*material_part, (gap, False), *request]


def _notes(slots: Slots, separator: str = "\n\n") -> list[Piece]:
    return [(f"{separator}{' '.join(slots.after)}", False)] if slots.after else []


# ------------------------------------------------------------------ chat templates
Turn = tuple[str, list[Piece]]


def _chat_turns(slots: Slots, rng: random.Random) -> list[Turn]:
    """User / assistant turns: one user turn holding request and material, or (``own_turn``) the material in a
    first turn, an acknowledgement, and the request in the last turn."""
    header = [("\n".join(slots.header) + "\n\n", False)] if slots.header else []
    material: list[Piece] = [(f"{rng.choice(READ_LINES)}\n\n{slots.material}", False)]
    if slots.position == "own_turn":
        ack = rng.choice(("Thanks, I have read it.", "Got it. What would you like to know?", "Okay."))
        return [("user", [*header, *material]), ("assistant", [(ack, False)]),
                ("user", [*slots.request_block(), *_notes(slots)])]
    if slots.position == "between":
        material = [(slots.material, False)]
    return [("user", [*header, *_ordered(slots, material), *_notes(slots)])]


def _role_turns(template: str, after_open: str, after_close: str, *, assistant: str = "assistant",
                system_turn: bool = True) -> Callable[[str | None, list[Turn]], list[Piece]]:
    """A template whose turns open with a token naming the role and close with one token (ChatML, Llama 3, Phi-3,
    Gemma): the tokens are the library's (:func:`synthesis.markers.template_token`), the line breaks after them
    this shell's. Without a system turn, the system text opens the first user turn."""
    def opener(role: str) -> str:
        return template_token(template, MarkerKind.OPEN, role) + after_open

    close = template_token(template, MarkerKind.CLOSE) + after_close
    bos = template_token(template, MarkerKind.START)

    def render(system: str | None, turns: list[Turn]) -> list[Piece]:
        pieces: list[Piece] = [(bos, False)]
        if system and system_turn:
            pieces.append((f"{opener('system')}{system}{close}", False))
        elif system:
            turns = [(turns[0][0], [(f"{system}\n\n", False), *turns[0][1]]), *turns[1:]]
        for role, content in turns:
            pieces += [(opener(assistant if role == "assistant" else role), False), *content, (close, False)]
        return [*pieces, (opener(assistant), False)]
    return render


def _inst(system_block: bool) -> Callable[[str | None, list[Turn]], list[Piece]]:
    """Llama 2 (``<<SYS>>`` inside the first ``[INST]``) and Mistral (system text merged into it), with the
    library's ``llama2`` tokens."""
    start = template_token("llama2", MarkerKind.START)
    user = template_token("llama2", MarkerKind.OPEN, "user")
    answer = template_token("llama2", MarkerKind.OPEN, "assistant")
    system_open = template_token("llama2", MarkerKind.OPEN, "system")
    system_close = template_token("llama2", MarkerKind.RESUME)
    end = template_token("llama2", MarkerKind.CLOSE)

    def render(system: str | None, turns: list[Turn]) -> list[Piece]:
        pieces: list[Piece] = [(f"{start}{user} ", False)]
        if system:
            block = f"{system_open}\n{system}\n{system_close}\n\n" if system_block else f"{system}\n\n"
            pieces.append((block, False))
        for role, content in turns:
            if role == "assistant":
                after = f" {end}{start}{user} " if system_block else f"{end}{user} "
                pieces += [(" ", False), *content, (after, False)]
            else:
                pieces += [*content, (f" {answer}", False)]
        return pieces
    return render


def _transcript(user: str, bot: str) -> Callable[[str | None, list[Turn]], list[Piece]]:
    def render(system: str | None, turns: list[Turn]) -> list[Piece]:
        pieces: list[Piece] = [(f"System: {system}\n\n", False)] if system else []
        for role, content in turns:
            pieces += [(f"{bot if role == 'assistant' else user}: ", False), *content, ("\n\n", False)]
        return [*pieces, (f"{bot}:", False)]
    return render


CHAT_TEMPLATES: Mapping[str, Callable[[str | None, list[Turn]], list[Piece]]] = {
    "chatml": _role_turns("chatml", "\n", "\n"),
    "llama3": _role_turns("llama3", "\n\n", ""),
    "phi3": _role_turns("phi3", "\n", "\n"),
    "gemma": _role_turns("gemma", "\n", "\n", assistant="model", system_turn=False),
    "llama2": _inst(system_block=True),
    "mistral": _inst(system_block=False),  # Mistral's instruction format writes Llama 2's tokens
    "user_assistant": _transcript("User", "Assistant"),
    "human_ai": _transcript("Human", "AI"),
}
"""The chat shells: every special token a chat shell writes is one of the library's
(``tpc_core.segmentation.vocabulary.CHAT_TEMPLATES``); the transcripts write role labels."""


# ------------------------------------------------------------------ key-value formats
def _kv_items(slots: Slots) -> list[tuple[str, list[Piece] | str, bool]]:
    """``(key, value, is material)`` in order: header fields, rules, request and material by position, notes."""
    items: list[tuple[str, list[Piece] | str, bool]] = []
    for line in slots.header:
        key, _, value = line.partition(":")
        items.append((key_name(key.strip("# ")), value.strip(), False))
    if slots.system:
        items.append(("instructions", slots.system, False))
    body: list[tuple[str, list[Piece] | str, bool]] = []
    if slots.before:
        body.append(("comment", " ".join(slots.before), False))
    if slots.request:
        body.append((key_name(slots.vocabulary[0]), list(slots.request), False))
    material = (key_name(slots.vocabulary[1]), slots.material, True)
    items += [*body, material] if slots.position == "before" else [material, *body]
    if slots.after:
        items.append(("remarks", " ".join(slots.after), False))  # not "notes": a material label
    return items


def _value(value: list[Piece] | str) -> list[Piece]:
    return [(value, False)] if isinstance(value, str) else value


def _json(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new().text("{\n")
    items = _kv_items(slots)
    for number, (key, value, _) in enumerate(items):
        b.text(f'  "{key}": "').add(_value(value), escape=json_escape).text('"' + (",\n" if number < len(items) - 1
                                                                                  else "\n"))
    return b.text("}")


def _yaml(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new()
    for key, value, is_material in _kv_items(slots):
        if is_material:
            body = "\n".join(f"  {line}" if line.strip() else "" for line in str(value).split("\n"))
            b.text(f"{key}: |\n{body}\n")
        else:
            text = "".join(t for t, _ in _value(value))
            quoted = any(mark in text for mark in (": ", " #", "'")) or text[:1] in "&*!|>%@`[{-?,"
            b.text(f'{key}: {chr(34) if quoted else ""}').add(_value(value)).text(f'{chr(34) if quoted else ""}\n')
    return b


def _toml(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new().text(f"[{rng.choice(('prompt', 'task', 'request'))}]\n")
    for key, value, is_material in _kv_items(slots):
        if is_material and "'''" not in str(value):
            b.text(f"{key} = '''\n{value}\n'''\n")
        else:
            b.text(f'{key} = "').add(_value(value), escape=json_escape).text('"\n')
    return b


def _ini(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new().text(f"[{rng.choice(('task', 'job', 'query'))}]\n")
    for key, value, is_material in _kv_items(slots):
        if is_material:
            body = "\n".join(f"    {line}" if line.strip() else "" for line in str(value).split("\n"))
            b.text(f"{key} =\n{body}\n")
        else:
            b.text(f"{key} = ").add(_value(value)).text("\n")
    return b


def _key_value(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new()
    for key, value, is_material in _kv_items(slots):
        b.text(f"{key}:\n{value}\n" if is_material else f"{key}: ").add([] if is_material else _value(value))
        if not is_material:
            b.text("\n")
    return b


# ------------------------------------------------------------------ markup
def _markdown(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new()
    if slots.header:
        b.text("---\n" + "\n".join(slots.header) + "\n---\n\n" if rng.random() < 0.5
               else "\n".join(f"- {line}" for line in slots.header) + "\n\n")
    if slots.system:
        b.text(f"# Instructions\n{slots.system}\n\n")
    label, material_label = slots.vocabulary
    request = [(f"{line}\n", False) for line in slots.before]
    request += [(f"## {label}\n\n", False)] if slots.labelled else []
    request += list(slots.request)
    material: list[Piece] = [(f"## {material_label}\n\n{slots.material}", False)]
    if slots.position == "before":
        parts = [*request, ("\n\n", False), *material] if slots.request else material
    elif slots.position == "between" and slots.request and halves(slots.material):
        first, second = halves(slots.material) or ("", "")
        parts = [(f"## {material_label}\n\n{first}\n\n", False), *request, (f"\n\n{second}", False)]
    else:
        parts = [*material, ("\n\n", False), *request] if slots.request else material
    return b.add(parts).add(_notes(slots))


def _html(slots: Slots, rng: random.Random) -> PromptBuilder:
    label, material_label = slots.vocabulary
    b = PromptBuilder.new().text("<!DOCTYPE html>\n<html>\n<body>\n")
    b.text("".join(f'<p class="meta">{line}</p>\n' for line in slots.header))
    if slots.system:
        b.text(f"<p><strong>{slots.system}</strong></p>\n")
    request: list[Piece] = [(f"<p>{line}</p>\n", False) for line in slots.before]
    request += [(f"<h2>{label}</h2>\n", False)] if slots.labelled else []
    request += [("<p>", False), *slots.request, ("</p>\n", False)] if slots.request else []
    material: list[Piece] = [(f'<h2>{material_label}</h2>\n<div class="{key_name(material_label)}">\n'
                              f"{slots.material}\n</div>\n", False)]
    b.add([*request, *material] if slots.position == "before" else [*material, *request])
    b.add([(f"<p><em>{' '.join(slots.after)}</em></p>\n", False)] if slots.after else [])
    return b.text("</body>\n</html>")


def _meta_tag(line: str) -> str:
    """A header line's key as an XML tag."""
    return key_name(line.partition(":")[0].strip("# "))


def _xml(slots: Slots, rng: random.Random) -> PromptBuilder:
    tag, material_tag = (key_name(label) for label in slots.vocabulary)
    root = rng.choice(("prompt", "input", "task"))
    b = PromptBuilder.new().text(f"<{root}>\n")
    if slots.header:
        meta = "".join(f"  <{_meta_tag(line)}>{line.partition(':')[2].strip()}</{_meta_tag(line)}>\n"
                       for line in slots.header)
        b.text("<meta>\n" + meta + "</meta>\n")
    if slots.system:
        b.text(f"<instructions>{slots.system}</instructions>\n")
    request: list[Piece] = [(f"<note>{line}</note>\n", False) for line in slots.before]
    request += [(f"<{tag}>", False), *slots.request, (f"</{tag}>\n", False)] if slots.request else []
    material: list[Piece] = [(f"<{material_tag}>\n{slots.material}\n</{material_tag}>\n", False)]
    b.add([*request, *material] if slots.position == "before" else [*material, *request])
    b.add([(f"<note>{' '.join(slots.after)}</note>\n", False)] if slots.after else [])
    return b.text(f"</{root}>")


# ------------------------------------------------------------------ documents
def _email_thread(slots: Slots, rng: random.Random) -> PromptBuilder:
    sender, other = rng.sample(NAMES, 2)
    b = PromptBuilder.new().text(f"From: {sender} <{sender.split()[0].lower()}@example.com>\nTo: research-desk\n")
    b.text("".join(f"{line}\n" for line in slots.header if not line.startswith(("From:", "To:"))))
    if slots.position == "subject" and slots.request:
        b.text("Subject: ").add(slots.request).text(f"\n\nHi,\n\n{rng.choice(('See subject.', 'As above.'))} "
                                                    f"Notes below.\n\n")
        body: list[Piece] = [(slots.material, False)]
    else:
        b.text(f"Subject: {rng.choice(('Quick question', 'Need your help', 'Re: the notes', 'Fact check'))}\n\n"
               f"Hi {rng.choice(('team', 'all', 'Lee', 'there'))},\n\n")
        body = _ordered(slots, [(f"---------- Forwarded message ----------\n{slots.material}", False)])
    b.add(body).text(f"\n\n{rng.choice(('Thanks!', 'Best,', 'Cheers,'))}\n{sender.split()[0]}")
    b.add(_notes(slots, "\n"))
    quoted = rng.choice(("Any update on this?", "Did you get my last message?", "Can we talk tomorrow?"))
    return b.text(f"\n\n> On {rng.randint(1, 28)} May, {other} wrote:\n> {quoted}\n> {other.split()[0]}")


def _ticket(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new().text(f"Ticket #{rng.randint(10000, 99999)} | Priority: "
                                 f"{rng.choice(('High', 'Low', 'Normal'))} | Customer: {rng.choice(NAMES)}\n")
    b.text("".join(f"{line}\n" for line in slots.header)).text("Status: Open\n\n")
    label = rng.choice(("Customer request: ", "Description:\n", "Message from customer: "))
    request = [*[(f"{line}\n", False) for line in slots.before], (label, False), *slots.request] if slots.request \
        else []
    material: list[Piece] = [(f"{rng.choice(('Knowledge base article', 'Attachment', 'Related docs'))}:\n"
                              f"{slots.material}", False)]
    b.add(_ordered(slots, material, request))
    note = " ".join(slots.after) or rng.choice(("none", "check the docs first.", "customer is waiting."))
    return b.text(f"\n\nInternal notes: {note}")


def _form(slots: Slots, rng: random.Random) -> PromptBuilder:
    name = rng.choice(NAMES)
    email = f"{name.split()[0].lower()}@example.org"
    b = PromptBuilder.new().text(f"Contact form submission\nName: {name}\nEmail: {email}\n"
                                 f"Topic: {rng.choice(('General question', 'Research', 'Other'))}\n")
    b.text("".join(f"{line}\n" for line in slots.header))
    label = cased(slots.vocabulary[0], slots.casing) if slots.labelled else rng.choice(("Your question", "Message"))
    request = [(f"{label}: ", False), *slots.request] if slots.request else []
    b.add(_ordered(slots, [(f"Attached text:\n{slots.material}", False)], request, gap="\n")).text("\n")
    return b.text(f"Consent to contact: yes{' '.join([''] + list(slots.after))}")


def _meeting(slots: Slots, rng: random.Random) -> PromptBuilder:
    attendees = ", ".join(n.split()[0] for n in rng.sample(NAMES, 3))
    b = PromptBuilder.new().text(f"Meeting notes, {rng.randint(1, 28)} March\nAttendees: {attendees}\n")
    b.text("".join(f"{line}\n" for line in slots.header)).text("\n")
    lead = rng.choice(("Open question for the research desk: ", "Action item: ", "Agenda:\n1. "))
    request = [*[(f"{line}\n", False) for line in slots.before], (lead, False), *slots.request] if slots.request else []
    b.add(_ordered(slots, [(f"Discussion:\n{slots.material}", False)], request))
    return b.add(_notes(slots, "\n")).text(f"\nNext meeting: {rng.choice(('Thursday', 'next week', 'TBC'))}")


def _code_comment(slots: Slots, rng: random.Random) -> PromptBuilder:
    name = rng.choice(("NOTES", "SOURCE_TEXT", "DOC", "REFERENCE"))
    b = PromptBuilder.new().text(f'"""{rng.choice(("Lookup helper.", "Research notes.", "Quiz tool."))}"""\n\n')
    material = f'{name} = """\n{slots.material}\n"""\n'
    if slots.position == "before":
        request: list[Piece] = [(f"# TODO({rng.choice(NAMES).split()[0].lower()}): ", False), *slots.request,
                                ("\n", False)] if slots.request else []
        b.add(request).text(material)
    else:
        b.text(material)
        if slots.request:
            b.text('\n\ndef answer() -> str:\n    """').add(slots.request)
            b.text('"""\n    raise NotImplementedError\n')
    return b.add([(f"\n# {' '.join(slots.after)}\n", False)] if slots.after else [])


def _memo(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new().text(f"MEMORANDUM\nTO: Research desk\nFROM: {rng.choice(NAMES)}\n"
                                 f"DATE: {rng.randint(1, 28)} June\nRE: {rng.choice(('Fact check', 'Open point'))}\n")
    b.text("".join(f"{line}\n" for line in slots.header)).text("\n")
    request = [*[(f"{line}\n", False) for line in slots.before], ("ACTION REQUESTED: ", False), *slots.request] \
        if slots.request else []
    return b.add(_ordered(slots, [(slots.material, False)], request)).add(_notes(slots))


def _plain(slots: Slots, rng: random.Random) -> PromptBuilder:
    b = PromptBuilder.new().text("".join(f"{line}\n" for line in slots.header) + ("\n" if slots.header else ""))
    if slots.system:
        b.text(f"{slots.system}\n\n")
    material = f"{slots.material_label()}:\n{slots.material}" if slots.labelled else slots.material
    return b.add(_ordered(slots, [(material, False)])).add(_notes(slots))


_DOCUMENTS: Mapping[str, Callable[[Slots, random.Random], PromptBuilder]] = {
    "email_thread": _email_thread, "ticket": _ticket, "form": _form, "meeting": _meeting,
    "code_comment": _code_comment, "memo": _memo, "plain": _plain,
}
_KV: Mapping[str, Callable[[Slots, random.Random], PromptBuilder]] = {
    "yaml": _yaml, "json": _json, "toml": _toml, "ini": _ini, "key_value": _key_value}
_MARKUP: Mapping[str, Callable[[Slots, random.Random], PromptBuilder]] = {
    "markdown": _markdown, "html": _html, "xml": _xml}
SHELL_FAMILIES: Mapping[str, tuple[str, ...]] = {
    "chat": tuple(CHAT_TEMPLATES), "key_value": tuple(_KV), "markup": tuple(_MARKUP), "document": tuple(_DOCUMENTS)}
SHELLS: tuple[str, ...] = tuple(name for names in SHELL_FAMILIES.values() for name in names)
SHELL_POSITIONS: Mapping[str, tuple[str, ...]] = {
    **{name: ("turn_start", "turn_end", "between", "own_turn") for name in CHAT_TEMPLATES},
    **{name: ("before", "after") for name in (*_KV, "html", "xml", "form", "code_comment")},
    **{name: ("before", "between", "after") for name in ("markdown", "ticket", "meeting", "memo", "plain")},
    "email_thread": ("before", "between", "after", "subject"),
}


def one_line_request(shell: str, position: str) -> bool:
    """Whether the request must be one line without double quotes (key-value values, subject lines, comments)."""
    return shell in _KV or position == "subject" or shell == "code_comment"


def material_escaped(shell: str, material: str) -> bool:
    """Whether the material appears JSON-escaped in the prompt (JSON; TOML when it holds ``'''``)."""
    return shell == "json" or (shell == "toml" and "'''" in material)


def render_shell(shell: str, slots: Slots, rng: random.Random) -> tuple[str, list[tuple[int, int]]]:
    """The prompt and its request spans.

    Raises:
        ValueError: An unknown shell, or a position the shell does not support.
    """
    if shell not in SHELL_POSITIONS:
        raise ValueError(f"unknown shell {shell!r}; expected one of {SHELLS}")
    if slots.position not in SHELL_POSITIONS[shell]:
        raise ValueError(f"shell {shell} has no position {slots.position!r}; expected one of {SHELL_POSITIONS[shell]}")
    if shell in CHAT_TEMPLATES:
        return PromptBuilder.new().add(CHAT_TEMPLATES[shell](slots.system, _chat_turns(slots, rng))).build()
    renderer = {**_KV, **_MARKUP, **_DOCUMENTS}[shell]
    return renderer(slots, rng).build()

