"""The one vocabulary of roles and chat-template markers (tpc_core.segmentation.vocabulary): a chat template added as
one entry is read by every reader of a chat (splitting, turn parsing, request placement), and each reader's role
names come from the one table."""

from __future__ import annotations

import doctest

import pytest

from tpc_core.conversation.messages import ACCEPTED_ROLES, read_message
from tpc_core.engine.task.placement import PlaceKind, place_request
from tpc_core.engine.task.turns import chat_turns, sentence_roles
from tpc_core.segmentation import is_turn_marker, split_sentences, vocabulary
from tpc_core.segmentation.vocabulary import (
    CHAT_TEMPLATES,
    ChatTemplate,
    Marker,
    MarkerKind,
    literal,
    read_marker,
    register_chat_template,
    registered,
)

# A template none of the readers was written for: "<|turn>user ... <turn|>".
NEW_TEMPLATE = ChatTemplate("turnbar", (Marker(r"<\|turn>(?:[ \t]*(?P<role>[A-Za-z_][\w.-]*))?", MarkerKind.OPEN),
                                        literal("<turn|>", MarkerKind.CLOSE)))
CHAT = ("<|turn>system\nBe brief.<turn|>\n<|turn>user\nThe match ended late. The crowd cheered loudly for the home "
        "side, who played well all season long. Who won the match?<turn|>\n<|turn>model\n")
SENTENCES = ["<|turn>system", "Be brief.", "<turn|>", "<|turn>user", "The match ended late.",
             "The crowd cheered loudly for the home side, who played well all season long.", "Who won the match?",
             "<turn|>", "<|turn>model"]


def pieces(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


def test_an_unknown_template_is_prose_to_every_reader() -> None:
    assert "turnbar" not in CHAT_TEMPLATES
    assert pieces(CHAT) != SENTENCES
    assert not is_turn_marker("<|turn>user")
    assert [turn.role for turn in chat_turns(CHAT)] == [None]
    place = place_request(CHAT, split_sentences(CHAT))
    assert place is None or place.kind is not PlaceKind.CHAT_TURN


def test_a_template_registered_as_one_entry_is_read_by_splitting_turn_parsing_and_placement() -> None:
    with registered(NEW_TEMPLATE):
        assert pieces(CHAT) == SENTENCES  # every marker a span of its own
        assert [is_turn_marker(piece) for piece in SENTENCES] == [True, False, True, True, False, False, False, True,
                                                                  True]
        assert sentence_roles(SENTENCES) == ["system", "system", "system", "user", "user", "user", "user", "user",
                                             "assistant"]
        assert [(turn.role, turn.content) for turn in chat_turns(CHAT)] == [
            ("system", "Be brief."), ("user", SENTENCES[4] + " " + SENTENCES[5] + " " + SENTENCES[6]),
            ("assistant", "")]
        place = place_request(CHAT, split_sentences(CHAT))  # the latest user turn, opened by the template's token
        assert place is not None and place.kind is PlaceKind.CHAT_TURN and place.candidates[0] == (4, 5, 6)
    assert "turnbar" not in CHAT_TEMPLATES and not is_turn_marker("<|turn>user")  # gone with the block


def test_the_registry_is_read_only_and_a_marker_must_start_with_a_literal() -> None:
    with pytest.raises(TypeError):
        CHAT_TEMPLATES["x"] = NEW_TEMPLATE  # type: ignore[index]
    with pytest.raises(ValueError, match="literal character"):
        register_chat_template(ChatTemplate("bad", (Marker(r"(?:<x>)", MarkerKind.CLOSE),)))
    assert "bad" not in CHAT_TEMPLATES


@pytest.mark.parametrize(("marker", "kind", "role"), [
    ("<|im_start|>user", MarkerKind.OPEN, "user"), ("<|start_header_id|> assistant <|end_header_id|>",
                                                    MarkerKind.OPEN, "assistant"),
    ("[/INST]", MarkerKind.OPEN, "assistant"), ("<</SYS>>", MarkerKind.RESUME, "user"),
    ("<|endoftext|>", MarkerKind.SEPARATOR, None), ("<bos>", MarkerKind.START, None), ("</s>", MarkerKind.CLOSE, None),
    ("### Human:", MarkerKind.OPEN, "human"),
])
def test_each_marker_reads_as_its_kind_and_role(marker: str, kind: MarkerKind, role: str | None) -> None:
    reading = read_marker(marker)
    assert reading is not None and (reading.kind, reading.role) == (kind, role)


def test_a_message_role_is_read_from_the_same_table() -> None:
    accepted = tuple(row.name for row in vocabulary.ROLE_NAMES if row.message)
    assert ACCEPTED_ROLES == accepted
    assert [read_message({"role": name, "content": "x"}, 0).role for name in ("Human", "AI", "model", "developer")] \
        == ["user", "assistant", "assistant", "developer"]
    with pytest.raises(ValueError, match="unknown role 'bot'"):  # a speaker's label, not a message role
        read_message({"role": "bot", "content": "x"}, 0)


def test_a_bold_label_and_a_nameless_opener_read_as_what_they_are() -> None:
    # "**User:**" is a marker (the splitters cut it) and opens the user's turn; "<|im_start|>" naming no role on its
    # line opens no turn of a made-up role.
    assert [(turn.role, turn.content) for turn in chat_turns("**User:** hi there\n**Assistant:** yo")] == [
        ("user", "hi there"), ("assistant", "yo")]
    assert [turn.role for turn in chat_turns("<|im_start|>\nuser\nhi<|im_end|>")] == [None]


def test_vocabulary_doctests() -> None:
    assert doctest.testmod(vocabulary, raise_on_error=True).attempted >= 4


@pytest.mark.parametrize("pattern", [r"<\|zq\|>|<\|zz\|>", r"#?#USER:", r"a*<x>", r"<{0,1}x>"])
def test_a_pattern_the_fast_scan_would_misread_is_refused_when_registered(pattern: str) -> None:
    with pytest.raises(ValueError, match="marker's pattern"):
        register_chat_template(ChatTemplate("probe", (Marker(pattern, MarkerKind.OPEN, "user"),)))
    assert "probe" not in CHAT_TEMPLATES


def test_a_registered_pattern_with_alternatives_inside_a_group_is_found_whole() -> None:
    text = "Hello there. <|zz|> What is up?"
    with registered(ChatTemplate("probe", (Marker(r"<\|(?:zq|zz)\|>", MarkerKind.OPEN, "user"),))):
        assert "<|zz|>" in pieces(text) and is_turn_marker("<|zz|>")
    assert "<|zz|>" not in pieces(text)
