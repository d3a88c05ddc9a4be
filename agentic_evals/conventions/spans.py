"""Which spans are agent runs and model requests, and why a tool call failed, across families.

Tool spans are classified inline in `agentic_evals.extract`'s walk (the hot path), from the same
constants: a `running tool` / `running output function` / `execute_tool ...` span carrying
`gen_ai.tool.name`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic_evals.otel.span_tree import SpanNode

from . import genai, pydantic_ai


def is_agent_span(node: SpanNode) -> bool:
    name = node.name
    return (
        name == pydantic_ai.V2_AGENT_SPAN
        or name == genai.AGENT_SPAN_PREFIX
        or name.startswith(genai.AGENT_SPAN_PREFIX + ' ')
        or node.attributes.get(genai.OPERATION_NAME) == 'invoke_agent'
    )


def agent_name(node: SpanNode) -> str:
    for key in (genai.AGENT_NAME, pydantic_ai.V2_AGENT_NAME):
        value = node.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    prefix = genai.AGENT_SPAN_PREFIX + ' '
    return node.name[len(prefix) :] if node.name.startswith(prefix) else 'agent'


def is_model_request_span(node: SpanNode) -> bool:
    return (
        genai.REQUEST_MODEL in node.attributes
        and node.attributes.get(genai.OPERATION_NAME) in genai.MODEL_REQUEST_OPERATIONS
    )


def failure_stage(node: SpanNode) -> Literal['validation', 'retry', 'raised']:
    attrs = node.attributes
    msg = attrs.get(pydantic_ai.LOGFIRE_MSG)
    if (
        attrs.get(pydantic_ai.FAILURE_STAGE) == 'validation'
        or attrs.get(pydantic_ai.RETRY_CAUSE) == 'validation_error'
        or (isinstance(msg, str) and msg.startswith(pydantic_ai.INVALID_TOOL_CALL_MSG_PREFIX))
    ):
        return 'validation'
    if attrs.get(pydantic_ai.RETRY_CAUSE) == 'model_retry':
        return 'retry'
    # Before 2.60 the only sign of `ModelRetry` is a result on a failed span: pydantic-ai records
    # the retry prompt as the result, while a tool that raised never returned one.
    if first_str(attrs, genai.TOOL_CALL_RESULT, pydantic_ai.V2_TOOL_RESULT) is not None:
        return 'retry'
    return 'raised'


def first_str(attrs: Mapping[str, object], *keys: str) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str):
            return value
    return None
