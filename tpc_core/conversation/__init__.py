"""A conversation compressed under one budget (:func:`~.compress.compress_conversation`): chat messages read by their
shape (:mod:`.messages`), the latest user turn that carries material (:mod:`.user_turn`). Above the engine: it runs
one engine call over the messages it compresses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "ConversationResult": "tpc_core.conversation.compress",
    "compress_conversation": "tpc_core.conversation.compress",
    "task_turn": "tpc_core.conversation.compress",
    "Message": "tpc_core.conversation.messages",
    "read_message": "tpc_core.conversation.messages",
    "read_messages": "tpc_core.conversation.messages",
    "rebuild_message": "tpc_core.conversation.messages",
    "ToolCall": "tpc_core.conversation.messages",
    "tool_calls_by_id": "tpc_core.conversation.messages",
    "ToolResult": "tpc_core.conversation.tool_results",
    "ToolResultLedger": "tpc_core.conversation.tool_results",
    "compress_tool_text": "tpc_core.conversation.tool_results",
    "compress_tool_texts": "tpc_core.conversation.tool_results",
    "compress_tool_texts_together": "tpc_core.conversation.tool_results",
    "emptied_note": "tpc_core.conversation.tool_results",
    "kept_nothing": "tpc_core.conversation.tool_results",
    "tool_share": "tpc_core.conversation.tool_results",
    "tool_question": "tpc_core.conversation.tool_results",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["ConversationResult", "Message", "ToolCall", "ToolResult", "ToolResultLedger", "compress_conversation",
           "compress_tool_text", "compress_tool_texts", "compress_tool_texts_together", "emptied_note", "kept_nothing",
           "read_message", "read_messages", "rebuild_message", "task_turn", "tool_calls_by_id", "tool_question",
           "tool_share"]

if TYPE_CHECKING:
    from tpc_core.conversation.compress import ConversationResult as ConversationResult
    from tpc_core.conversation.compress import compress_conversation as compress_conversation
    from tpc_core.conversation.compress import task_turn as task_turn
    from tpc_core.conversation.messages import Message as Message
    from tpc_core.conversation.messages import ToolCall as ToolCall
    from tpc_core.conversation.messages import read_message as read_message
    from tpc_core.conversation.messages import read_messages as read_messages
    from tpc_core.conversation.messages import rebuild_message as rebuild_message
    from tpc_core.conversation.messages import tool_calls_by_id as tool_calls_by_id
    from tpc_core.conversation.tool_results import ToolResult as ToolResult
    from tpc_core.conversation.tool_results import ToolResultLedger as ToolResultLedger
    from tpc_core.conversation.tool_results import compress_tool_text as compress_tool_text
    from tpc_core.conversation.tool_results import compress_tool_texts as compress_tool_texts
    from tpc_core.conversation.tool_results import compress_tool_texts_together as compress_tool_texts_together
    from tpc_core.conversation.tool_results import emptied_note as emptied_note
    from tpc_core.conversation.tool_results import kept_nothing as kept_nothing
    from tpc_core.conversation.tool_results import tool_question as tool_question
    from tpc_core.conversation.tool_results import tool_share as tool_share
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
