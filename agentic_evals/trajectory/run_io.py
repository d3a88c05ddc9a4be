"""The inputs and output of an agent run, read from the spans it recorded.

Scoring a captured trace needs what the case was asked and what it answered, without the run:
pydantic-ai records both on its agent spans (`pydantic_ai.all_messages`, `final_result`), and the
OpenTelemetry GenAI conventions on model-request spans (`gen_ai.input.messages`,
`gen_ai.output.messages`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from ..conventions import genai
from ..conventions.spans import is_agent_span, is_model_request_span

# pydantic-ai agent spans (instrumentation version 2+): the whole conversation and the run's output.
ALL_MESSAGES = 'pydantic_ai.all_messages'
FINAL_RESULT = 'final_result'
INPUT_MESSAGES = 'gen_ai.input.messages'


def _outer_agent_spans(tree: SpanTree) -> list[SpanNode]:
    """Agent runs not nested in another agent run, in start order."""
    found: list[SpanNode] = []
    for node in sorted(tree, key=lambda n: n.start_timestamp):
        if is_agent_span(node) and not any(is_agent_span(a) for a in node.ancestors):
            found.append(node)
    return found


def trace_inputs(tree: SpanTree) -> Any:
    """The first user prompt of the first outermost agent run, or `None` when not recorded.

    Read from `pydantic_ai.all_messages` on the agent span, else from the first model request's
    `gen_ai.input.messages`; text parts of the first user message, joined by newlines.
    """
    agents = _outer_agent_spans(tree)
    candidates = [a.attributes.get(ALL_MESSAGES) for a in agents[:1]]
    candidates += [n.attributes.get(INPUT_MESSAGES) for n in sorted(tree, key=lambda n: n.start_timestamp)]
    for raw in candidates:
        text = _first_user_text(raw)
        if text is not None:
            return text
    return None


def trace_output(tree: SpanTree) -> Any:
    """The output of the last outermost agent run that recorded one, or `None`.

    `final_result` when present (parsed when it is a JSON object or array, as pydantic-ai records
    structured output), else the text parts of the run's last `gen_ai.output.messages`.
    """
    for agent in reversed(_outer_agent_spans(tree)):
        value = agent.attributes.get(FINAL_RESULT)
        if isinstance(value, str):
            if value[:1] in ('{', '['):
                try:
                    return json.loads(value)
                except json.JSONDecodeError:
                    return value
            return value
        text = _last_assistant_text(agent)
        if text is not None:
            return text
    return None


def _messages(raw: object) -> list[dict[str, Any]]:
    if not isinstance(raw, str):
        return []
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _text_of(message: dict[str, Any]) -> str | None:
    parts = message.get('parts')
    texts = [
        str(p.get('content'))
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and p.get('type') == 'text' and p.get('content') is not None
    ]
    return '\n'.join(texts) if texts else None


def _first_user_text(raw: object) -> str | None:
    for message in _messages(raw):
        if message.get('role') == 'user':
            text = _text_of(message)
            if text is not None:
                return text
    return None


def _last_assistant_text(agent: SpanNode) -> str | None:
    requests = [n for n in agent.descendants if is_model_request_span(n)]
    for node in sorted(requests, key=lambda n: n.start_timestamp, reverse=True):
        for message in reversed(_messages(node.attributes.get(genai.OUTPUT_MESSAGES))):
            text = _text_of(message)
            if text is not None:
                return text
    return None
