"""Agent transcript readers: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages.

Accepted file shapes (the same for the three formats):

- a JSON object holding one conversation;
- a JSON array of such objects, or a JSON array of messages (one conversation);
- JSON Lines, one conversation object per line.

A conversation object holds its turns under `messages` (Chat Completions, Anthropic; Anthropic's
`system` prompt beside them) or `input` and `output` (Responses API items; `items` also works), and
may carry `id` (or `conversation_id`, `session_id`), `task`, `outcome` (or a boolean `success`,
`passed`, `resolved`) and `feedback`, at the top level or inside `metadata`. Every other top-level
field (model, tools, ...) is kept in the session metadata. A conversation without an id is named
`<file key>` (single object) or `<file key>#<line or index>`, the file key being the file's stem
unless another input of the import shares it (`reading.file_keys`).

Tool calls become `ToolCall`s at the position of the call, with the matching result or error
attached: `tool_calls` + `tool` messages (by `tool_call_id`), `function_call` +
`function_call_output` items (by `call_id`), `tool_use` + `tool_result` blocks (by `tool_use_id`,
`is_error`). A result that is a JSON document is parsed; a result for a call never made is an error.
Parts that are neither text nor tool traffic (images, reasoning) are counted in the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from myna.errors import TraceFormatError
from myna.traces import strictjson
from myna.traces.formats import PEEK_BYTES, Peek
from myna.traces.model import Event, Message, MessageRole, Outcome, Session, ToolCall
from myna.traces.source import PartBuffer, Source

_CONVERSATION_KEYS = frozenset({"messages", "input", "output", "items", "system"})
_ID_KEYS = ("id", "conversation_id", "session_id")
_OUTCOMES: dict[Any, Outcome] = {
    "success": "success",
    "succeeded": "success",
    "pass": "success",
    "passed": "success",
    "resolved": "success",
    "failure": "failure",
    "failed": "failure",
    "fail": "failure",
    "error": "failure",
    "unknown": "unknown",
}


@dataclass(frozen=True, slots=True)
class Where:
    """Where a conversation sits in its file, for ids and error messages."""

    line: int | None = None
    index: int | None = None


class _Conversation:
    """Builds the events of one conversation; tool results attach to the calls they answer."""

    def __init__(self, source: Source, session_id: str, where: Where) -> None:
        self.source = source
        self.session_id = session_id
        self.where = where
        self.events: list[Event] = []
        self.calls: dict[str, ToolCall] = {}

    def message(self, role: MessageRole, text: str, at: datetime | None = None) -> None:
        if text:
            number = len(self.events)
            self.events.append(Message(f"{self.session_id}/{number}", role, text, at))

    def call(self, call_id: Any, name: Any, arguments: Any, at: datetime | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise self.error("a tool call has no name")
        key = str(call_id) if call_id is not None else f"{self.session_id}/{len(self.events)}"
        call = ToolCall(key, name, _maybe_json(arguments), started_at=at)
        self.calls[key] = call
        self.events.append(call)

    def result(self, call_id: Any, output: Any, *, error: bool = False) -> None:
        call = self.calls.get(str(call_id))
        if call is None:
            raise self.error(f"a tool result answers call {call_id!r}, which was never made")
        if error:
            call.error = output if isinstance(output, str) else json.dumps(output)
        else:
            call.result = _maybe_json(output)

    def skip(self, what: str) -> None:
        self.source.report.skipped[what] += 1

    def error(self, message: str) -> TraceFormatError:
        return self.source.error(message, line=self.where.line, entry=self.where.index)


ConversationReader = Callable[[_Conversation, dict[str, Any]], None]


# ---- shared shell -------------------------------------------------------------------------------


def _read_with(convert: ConversationReader, list_key: str) -> Callable[[Source], Iterator[Session]]:
    def read(source: Source) -> Iterator[Session]:
        for raw, where in _conversation_objects(source, list_key):
            yield from _session(source, raw, where, convert)

    return read


def _conversation_objects(source: Source, list_key: str) -> Iterator[tuple[dict[str, Any], Where]]:
    peek = Peek.of(source.file.read(PEEK_BYTES))
    source.file.seek(0)
    if isinstance(peek.first_value, dict):
        yield from _jsonl_objects(source)
        return
    document = source.load_document()
    if isinstance(document, dict):
        yield document, Where()
    elif isinstance(document, list) and all(isinstance(item, dict) for item in document):
        if document and not (_CONVERSATION_KEYS & document[0].keys()):
            yield {list_key: document}, Where()
        else:
            for index, item in enumerate(document):
                yield item, Where(index=index)
    else:
        raise source.error("expected a conversation object or an array of them")


def _jsonl_objects(source: Source) -> Iterator[tuple[dict[str, Any], Where]]:
    for number, raw in enumerate(source.file, start=1):
        if not raw.strip():
            continue
        try:
            item = strictjson.loads(raw)
        except ValueError as error:
            raise source.error(f"invalid JSON: {error}", line=number) from None
        if not isinstance(item, dict):
            raise source.error("expected one conversation object per line", line=number)
        yield item, Where(line=number)


def _session(
    source: Source, raw: dict[str, Any], where: Where, convert: ConversationReader
) -> Iterator[Session]:
    metadata = dict(raw.get("metadata") or {}) if isinstance(raw.get("metadata"), dict) else {}
    picked = {**metadata, **{key: raw[key] for key in raw if key != "metadata"}}
    session_id = _session_id(picked, source, where)
    conversation = _Conversation(source, session_id, where)
    convert(conversation, raw)
    header = Session(
        id=session_id,
        task=_text_or_none(picked.get("task")),
        outcome=_outcome(picked),
        feedback=_text_or_none(picked.get("feedback")),
        source=source.name,
        metadata=_metadata(raw, metadata),
    )
    buffer = PartBuffer(header, source.options.part_events, source.options.part_bytes)
    source.report.sessions += 1
    for event in conversation.events:
        if source.admit(event):
            part = buffer.add(event, 0)
            if part is not None:
                yield part
    if buffer.events or buffer.parts_yielded == 0:
        yield buffer.flush()


def _session_id(fields: dict[str, Any], source: Source, where: Where) -> str:
    for key in _ID_KEYS:
        value = fields.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    if where.line is not None:
        return f"{source.key}#{where.line}"
    if where.index is not None:
        return f"{source.key}#{where.index}"
    return source.key


_PICKED = frozenset({"task", "outcome", "success", "passed", "resolved", "feedback", "metadata"})


def _metadata(raw: dict[str, Any], nested: dict[str, Any]) -> dict[str, Any]:
    kept = {key: value for key, value in nested.items() if key not in _PICKED}
    kept.update(
        (key, value)
        for key, value in raw.items()
        if key not in _PICKED and key not in _CONVERSATION_KEYS and key not in _ID_KEYS
    )
    return kept


def _outcome(fields: dict[str, Any]) -> Outcome | None:
    outcome = fields.get("outcome")
    if isinstance(outcome, str):
        return _OUTCOMES.get(outcome.strip().lower(), "unknown")
    for key in ("outcome", "success", "passed", "resolved"):
        value = fields.get(key)
        if isinstance(value, bool):
            return "success" if value else "failure"
    return None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _maybe_json(value: Any) -> Any:
    """Tool arguments and results often arrive as JSON text; keep the document when they are."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return strictjson.loads(value)
        except ValueError:
            return value
    return value


def _time(message: dict[str, Any]) -> datetime | None:
    for key in ("timestamp", "created_at", "time"):
        value = message.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, tz=UTC)
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value)
            except ValueError:
                continue
    return None


def _role(value: Any) -> MessageRole:
    if value in ("system", "developer"):
        return "system"
    if value in ("assistant", "tool"):
        return value  # type: ignore[no-any-return]
    return "user"


def _parts_text(content: Any, conversation: _Conversation, text_types: frozenset[str]) -> str:
    """The text of a content value: a string, or a list of typed parts (others are counted)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in text_types:
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict):
            conversation.skip(f"{part.get('type', 'untyped')}_part")
    return "\n".join(texts)


# ---- OpenAI Chat Completions --------------------------------------------------------------------

_CHAT_TEXT = frozenset({"text", "input_text", "output_text"})


def _convert_chat(conversation: _Conversation, raw: dict[str, Any]) -> None:
    messages = raw.get("messages")
    if not isinstance(messages, list):
        raise conversation.error("expected a `messages` list")
    for message in messages:
        if not isinstance(message, dict):
            raise conversation.error("expected each message to be an object")
        role = message.get("role")
        at = _time(message)
        if role == "tool":
            conversation.result(message.get("tool_call_id"), _tool_output(message, conversation))
        elif role == "function":
            conversation.result(
                _last_call_named(conversation, message.get("name")), message.get("content")
            )
        else:
            conversation.message(
                _role(role), _parts_text(message.get("content"), conversation, _CHAT_TEXT), at
            )
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                conversation.call(
                    call.get("id"), function.get("name"), function.get("arguments"), at
                )
            legacy = message.get("function_call")
            if isinstance(legacy, dict):
                conversation.call(None, legacy.get("name"), legacy.get("arguments"), at)


def _tool_output(message: dict[str, Any], conversation: _Conversation) -> Any:
    content = message.get("content")
    return content if isinstance(content, str) else _parts_text(content, conversation, _CHAT_TEXT)


def _last_call_named(conversation: _Conversation, name: Any) -> str | None:
    for call in reversed(conversation.calls.values()):
        if call.name == name and call.result is None and call.error is None:
            return call.id
    return None


# ---- OpenAI Responses API -----------------------------------------------------------------------


def _convert_responses(conversation: _Conversation, raw: dict[str, Any]) -> None:
    items: list[Any] = []
    for key in ("input", "items", "output"):
        value = raw.get(key)
        if isinstance(value, str):
            items.append({"type": "message", "role": "user", "content": value})
        elif isinstance(value, list):
            items.extend(value)
    if not items:
        raise conversation.error("expected `input`, `output` or `items` with response items")
    for item in items:
        if not isinstance(item, dict):
            raise conversation.error("expected each item to be an object")
        kind = item.get("type", "message" if "role" in item else None)
        at = _time(item)
        if kind == "message":
            text = _parts_text(item.get("content"), conversation, _CHAT_TEXT)
            conversation.message(_role(item.get("role")), text, at)
        elif kind == "function_call":
            conversation.call(
                item.get("call_id") or item.get("id"), item.get("name"), item.get("arguments"), at
            )
        elif kind == "function_call_output":
            conversation.result(item.get("call_id"), item.get("output"))
        else:
            conversation.skip(f"{kind}_item")


# ---- Anthropic Messages -------------------------------------------------------------------------

_ANTHROPIC_TEXT = frozenset({"text"})


def _convert_anthropic(conversation: _Conversation, raw: dict[str, Any]) -> None:
    system = raw.get("system")
    if system:
        conversation.message("system", _parts_text(system, conversation, _ANTHROPIC_TEXT))
    messages = raw.get("messages")
    if not isinstance(messages, list):
        raise conversation.error("expected a `messages` list")
    for message in messages:
        if not isinstance(message, dict):
            raise conversation.error("expected each message to be an object")
        role = _role(message.get("role"))
        at = _time(message)
        content = message.get("content")
        if isinstance(content, str):
            conversation.message(role, content, at)
            continue
        for block in content or ():
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                conversation.message(role, str(block.get("text", "")), at)
            elif kind == "tool_use":
                conversation.call(block.get("id"), block.get("name"), block.get("input"), at)
            elif kind == "tool_result":
                output = block.get("content")
                if isinstance(output, list):
                    output = _parts_text(output, conversation, _ANTHROPIC_TEXT)
                conversation.result(
                    block.get("tool_use_id"), output, error=bool(block.get("is_error"))
                )
            else:
                conversation.skip(f"{kind or 'untyped'}_block")


read_openai_chat = _read_with(_convert_chat, "messages")
read_openai_responses = _read_with(_convert_responses, "input")
read_anthropic = _read_with(_convert_anthropic, "messages")


# ---- detection ----------------------------------------------------------------------------------

_RESPONSES_MARK = re.compile(
    r'"type"\s*:\s*"(?:function_call|function_call_output|input_text|output_text)"'
)
_ANTHROPIC_MARK = re.compile(r'"type"\s*:\s*"(?:tool_use|tool_result)"')
_CHAT_MARK = re.compile(r'"tool_calls"\s*:|"role"\s*:\s*"tool"|"tool_call_id"\s*:')
_MESSAGES_MARK = re.compile(r'"messages"\s*:\s*\[|"role"\s*:\s*"(?:user|assistant|system)"')


def looks_like_openai_responses(peek: Peek) -> bool:
    return peek.text[:1] in ("{", "[") and bool(_RESPONSES_MARK.search(peek.text))


def looks_like_anthropic(peek: Peek) -> bool:
    return peek.text[:1] in ("{", "[") and bool(_ANTHROPIC_MARK.search(peek.text))


def looks_like_openai_chat(peek: Peek) -> bool:
    """Tool-call markers, or failing any, a plain list of role-tagged messages."""
    if peek.text[:1] not in ("{", "["):
        return False
    return bool(_CHAT_MARK.search(peek.text) or _MESSAGES_MARK.search(peek.text))
