"""Strands Agents: GenAI-convention spans, with its content in span events by default.

Strands names and attributes its spans after the GenAI conventions, so `genai` reads the calls,
requests, tokens and agents. What Strands adds:

- By default it records a tool's arguments and result only in the tool span's events:
  `gen_ai.tool.message` (`content`: the arguments) and `gen_ai.choice` (`message`: the result),
  and an agent's prompt in its span's `gen_ai.user.message` event. `events` has the trace readers
  copy them onto the span. With
  `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` they are the conventions' own
  `gen_ai.tool.call.arguments` and `.result` instead.
- A result is a list of content blocks (`[{"text": "..."}]`); the tool's text is read out of it.
- A model response is in the `chat` span's `gen_ai.choice` event too (`message`: content blocks,
  `toolUse` or `text`): the run's answer is its text. The user prompt is only in a
  `gen_ai.user.message` event, which the readers do not copy, so this route gives no inputs.
- A failed call is a tool that raised: Strands has no retry signal of its own (its tool wrapper
  turns the exception into an error result for the model).

Its tool spans are known by `gen_ai.tool.status`, which only Strands sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .arguments import load_json, recorded_arguments
from .family import Arguments, FailureStage, Family

TOOL_STATUS = 'gen_ai.tool.status'
"""`success` or `error`, on every Strands tool span: the family's marker."""
TOOL_MESSAGE_EVENT = 'gen_ai.tool.message'
CHOICE_EVENT = 'gen_ai.choice'
EVENT_ARGUMENTS = 'gen_ai.tool.message.content'
"""Where the readers put the tool span's `gen_ai.tool.message` event's `content` (its arguments)."""
EVENT_RESULT = 'gen_ai.choice.message'
"""Where the readers put the tool span's `gen_ai.choice` event's `message` (its result)."""
USER_MESSAGE_EVENT = 'gen_ai.user.message'
EVENT_USER_MESSAGE = 'gen_ai.user.message.content'
"""Where the readers put an agent span's `gen_ai.user.message` event's `content` (its prompt)."""
TEXT = 'text'


def content_text(raw: str) -> str:
    """The text of a list of content blocks, joined by newlines; `raw` itself for anything else."""
    try:
        blocks = load_json(raw)
    except ValueError:
        return raw
    if not isinstance(blocks, list) or not blocks:
        return raw
    texts = [text for block in blocks if isinstance(block, dict) and isinstance(text := block.get(TEXT), str)]
    if len(texts) != len(blocks):
        return raw  # not only text blocks (an image, a JSON block): kept as recorded
    return '\n'.join(texts)


def response_blocks_text(raw: str) -> str | None:
    """The text blocks of a response's content blocks, joined by newlines; `None` when it has none
    (a response of `toolUse` blocks only)."""
    try:
        blocks = load_json(raw)
    except ValueError:
        return None
    if not isinstance(blocks, list):
        return None
    texts = [b[TEXT] for b in blocks if isinstance(b, dict) and isinstance(b.get(TEXT), str)]
    return '\n'.join(texts) if texts else None


class Strands(Family):
    name = 'strands'
    content_switch = 'Strands records arguments in span events: keep them when exporting'
    markers = (TOOL_STATUS,)
    events: ClassVar[Mapping[str, Mapping[str, str]]] = {
        TOOL_MESSAGE_EVENT: {'content': EVENT_ARGUMENTS},
        CHOICE_EVENT: {'message': EVENT_RESULT},
        USER_MESSAGE_EVENT: {'content': EVENT_USER_MESSAGE},
    }

    def arguments(self, node: SpanNode) -> Arguments | None:
        if TOOL_STATUS not in node.attributes:
            return None
        return recorded_arguments(node.attributes, (genai.TOOL_CALL_ARGUMENTS, EVENT_ARGUMENTS))

    def result(self, node: SpanNode) -> str | None:
        if TOOL_STATUS not in node.attributes:
            return None
        raw = genai.first_str(node.attributes, genai.TOOL_CALL_RESULT, EVENT_RESULT)
        return None if raw is None else content_text(raw)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if TOOL_STATUS in node.attributes else None

    def run_prompt(self, agent: SpanNode) -> str | None:
        """The default route keeps an agent's prompt only in its span's `gen_ai.user.message` event."""
        raw = agent.attributes.get(EVENT_USER_MESSAGE)
        return content_text(raw) if isinstance(raw, str) else None

    def response_text(self, node: SpanNode) -> str | None:
        raw = node.attributes.get(EVENT_RESULT)
        return response_blocks_text(raw) if isinstance(raw, str) and TOOL_STATUS not in node.attributes else None


FAMILY = Strands()
