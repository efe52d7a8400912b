"""Stage 1: read recorded interactions (HAR, canonical JSONL, agent transcripts) into one model."""

from myna.traces.model import Body, Event, Exchange, Message, Session, ToolCall

__all__ = ["Body", "Event", "Exchange", "Message", "Session", "ToolCall"]
