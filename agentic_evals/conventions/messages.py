"""The GenAI conventions' message format: `[{"role": ..., "parts": [{"type": ..., ...}]}]` as JSON text.

Model-request spans record their input and output this way (`gen_ai.input.messages`,
`gen_ai.output.messages`), and pydantic-ai its whole conversation (`pydantic_ai.all_messages`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .arguments import load_json

ROLE = 'role'
USER = 'user'
PARTS = 'parts'
PART_TYPE = 'type'
TEXT = 'text'
CONTENT = 'content'
TOOL_CALL = 'tool_call'
TOOL_CALL_ID = 'id'
NAME = 'name'
ARGUMENTS = 'arguments'
"""A `tool_call` part's arguments: an object (as the conventions' JSON schema has them, e.g.
opentelemetry-util-genai 0.4b0 for the OpenAI instrumentation) or the model's JSON text."""

# Characters every JSON encoder writes as themselves inside a string (Go escapes `<>&`, some
# encoders `/`): an id made of them appears quoted, verbatim, in the text that holds it.
_LITERAL = re.compile(r'[\w.:+=~@#$%^*()!?,;|{}\[\] -]*', re.ASCII)


def parse(raw: object) -> list[dict[str, Any]]:
    """The messages in `raw`; anything else (not text, not JSON, not a list) is no messages."""
    if not isinstance(raw, str):
        return []
    try:
        value = load_json(raw)
    except ValueError:  # not JSON, or nested too deeply
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def text_of(message: dict[str, Any]) -> str | None:
    """The text parts of one message, joined by newlines; `None` when it has none."""
    parts = message.get(PARTS)
    texts = [
        str(p.get(CONTENT))
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and p.get(PART_TYPE) == TEXT and p.get(CONTENT) is not None
    ]
    return '\n'.join(texts) if texts else None


def first_user_text(raw: object) -> str | None:
    for message in parse(raw):
        if message.get(ROLE) == USER:
            text = text_of(message)
            if text is not None:
                return text
    return None


def last_text(raw: object) -> str | None:
    """The text of the last message that has any."""
    for message in reversed(parse(raw)):
        text = text_of(message)
        if text is not None:
            return text
    return None


def tool_calls(raw: object) -> Iterator[tuple[str, str]]:
    """(id, name) of the `tool_call` parts holding both, in order."""
    for part in _tool_call_parts(raw):
        if isinstance(name := part.get(NAME), str):
            yield part[TOOL_CALL_ID], name


def issued_calls(raw: object) -> Iterator[tuple[str | None, str, str | None]]:
    """(id, name, arguments as JSON text) of every `tool_call` part with a text name, in order.

    The id is `None` when the part has none; arguments recorded as text are returned as recorded
    (the model's own text), any other value as compact JSON, and missing ones as `None`.
    """
    for part in _parts(raw, TOOL_CALL):
        name = part.get(NAME)
        if not isinstance(name, str):
            continue
        call_id = part.get(TOOL_CALL_ID)
        arguments = part.get(ARGUMENTS)
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, separators=(',', ':'))
        yield call_id if isinstance(call_id, str) else None, name, arguments


def tool_call_ids(raw: object) -> Iterator[str]:
    """The ids of the `tool_call` parts, in order."""
    for part in _tool_call_parts(raw):
        yield part[TOOL_CALL_ID]


def _tool_call_parts(raw: object) -> Iterator[dict[str, Any]]:
    """The `tool_call` parts holding a text id."""
    for part in _parts(raw, TOOL_CALL):
        if isinstance(part.get(TOOL_CALL_ID), str):
            yield part


def _parts(raw: object, part_type: str) -> Iterator[dict[str, Any]]:
    """Every part of type `part_type` in the messages of `raw`, in order."""
    if not isinstance(raw, str):
        return
    try:
        value = load_json(raw)
    except ValueError:
        return
    for message in value if isinstance(value, list) else ():
        parts = message.get(PARTS) if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get(PART_TYPE) == part_type:
                yield part


def is_literal(text: str) -> bool:
    """Whether `text` appears verbatim, quoted, in any JSON that holds it as a string."""
    return _LITERAL.fullmatch(text) is not None
