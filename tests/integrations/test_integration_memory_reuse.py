"""LlamaIndex's TPCChatMemory reuses what it read: a ``get`` after one more turn encodes only that turn's text
(the real tpc-mini; the encoder's own ``encode_contexts`` is counted as it runs)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer

from tests.core.conversation.test_conversations import PARAGRAPHS
from tpc_core.segmentation import split_sentences
from tpc_integrations.llama_index import TPCChatMemory

REPLY = ("The first clause names the parties. The second fixes the rent and the day it is due. A third clause says "
         "who repairs what, and a fourth how the lease ends.")


def _sentences_encoded(compressor, monkeypatch) -> list[int]:
    """The number of sentences each ``encode_contexts`` call of the compressor's encoder reads (the call runs)."""
    counts: list[int] = []
    real = compressor.encoder.encode_contexts

    def counting(contexts):
        counts.append(sum(len(context) for context in contexts))
        return real(contexts)

    monkeypatch.setattr(compressor.encoder, "encode_contexts", counting)
    return counts


def test_a_get_after_one_more_turn_encodes_only_that_turn(compressor, monkeypatch):
    first_question = "What does the text say about the rent being late?"
    chat = [ChatMessage(role="user", content="Read this.\n\n" + "\n\n".join(PARAGRAPHS[:4])),
            ChatMessage(role="assistant", content="\n\n".join(PARAGRAPHS[4:])),
            ChatMessage(role="user", content=first_question)]
    memory = TPCChatMemory(compressor=compressor, target_tokens=300,
                           memory=ChatMemoryBuffer.from_defaults(chat_history=chat, token_limit=10 ** 6))
    counts = _sentences_encoded(compressor, monkeypatch)
    memory.get()  # reads the history (or finds it in the compressor's cache, filled by an earlier test)
    memory.put(ChatMessage(role="assistant", content=REPLY))
    memory.put(ChatMessage(role="user", content="Who repairs the roof?"))
    counts.clear()
    memory.get()
    second = sum(counts)
    new_turn = len(split_sentences(first_question)) + len(split_sentences(REPLY))
    history = sum(len(split_sentences(message.content)) for message in chat)
    assert 0 < second <= new_turn < history, (second, new_turn, history)
