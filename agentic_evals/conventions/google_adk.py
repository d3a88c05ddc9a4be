"""Google ADK's span conventions that differ from the OpenTelemetry GenAI ones (ADK 2.x).

ADK follows the GenAI conventions (read by `genai`); what it does its own way:

- After parallel calls it emits a synthetic `execute_tool (merged)` span summarising calls that
  have spans of their own: not a call.
- A failed tool records `error.type=TOOL_ERROR`; with an `on_tool_error_callback`, the callback's
  answer is recorded as the result. The tool raised all the same: the stage is `raised`, not the
  `retry` a failed span with a result would otherwise read as.
- A tool that returns anything but a dict is recorded wrapped, `{"result": ...}`: the result is
  the tool's own text again.
- Span schema v1 (`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`) keeps a call's arguments and response
  in `gcp.vertex.agent.tool_call_args` / `.tool_response` (on by default), and each request twice:
  `call_llm` (no operation name) around a `generate_content` span with the same tokens, which
  alone is counted (see `genai.unlabelled_request`). The request's conversation and the response
  are only on the `call_llm` span, as Gemini JSON (`gcp.vertex.agent.llm_request` `contents`,
  `.llm_response` `content`): the prompt and the answer are read from there.
"""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .arguments import load_json, recorded_arguments
from .family import Arguments, FailureStage, Family, ToolSpans

MERGED_TOOLS_NAME = '(merged tools)'
ERROR_TYPE = 'error.type'
TOOL_ERROR = 'TOOL_ERROR'
V1_ARGUMENTS = 'gcp.vertex.agent.tool_call_args'
V1_RESPONSE = 'gcp.vertex.agent.tool_response'
V1_LLM_REQUEST = 'gcp.vertex.agent.llm_request'
V1_LLM_RESPONSE = 'gcp.vertex.agent.llm_response'
V1_CALL_LLM = 'call_llm'
GEMINI = 'gcp.gemini'
"""The provider name ADK's schema v2 model spans carry."""
WRAPPED_RESULT = 'result'
"""The key ADK wraps a tool's non-dict return value in."""


def unwrapped(raw: str) -> str:
    """A result `{"result": "text"}` as `text`; anything else as recorded."""
    if not raw.startswith('{"result"'):
        return raw
    try:
        value = load_json(raw)
    except ValueError:
        return raw
    if isinstance(value, dict) and len(value) == 1 and isinstance(text := value.get(WRAPPED_RESULT), str):
        return text
    return raw


def content_text(content: object) -> str | None:
    """The text parts of one Gemini `Content` (`{"role", "parts": [{"text": ...}]}`), joined by
    newlines; thoughts are not the answer, so they are left out."""
    parts = content.get('parts') if isinstance(content, dict) else None
    texts = [
        p['text']
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and isinstance(p.get('text'), str) and not p.get('thought')
    ]
    return '\n'.join(texts) if texts else None


def _v1_json(node: SpanNode, key: str) -> dict[str, object] | None:
    raw = node.attributes.get(key)
    try:
        value = load_json(raw) if isinstance(raw, str) and raw.startswith('{') else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _is_adk_tool(node: SpanNode) -> bool:
    attributes = node.attributes
    return attributes.get(ERROR_TYPE) == TOOL_ERROR or V1_RESPONSE in attributes or genai.TOOL_TYPE in attributes


class GoogleADK(Family):
    name = 'google-adk'
    markers = (V1_ARGUMENTS, V1_RESPONSE, V1_LLM_RESPONSE)

    def recognises(self, node: SpanNode) -> bool:
        return (
            super().recognises(node)
            or node.attributes.get(ERROR_TYPE) == TOOL_ERROR
            or (node.attributes.get(genai.PROVIDER_NAME) == GEMINI)
        )

    tool_spans = ToolSpans(genai.TOOL_NAME, not_calls=frozenset({MERGED_TOOLS_NAME}))

    def arguments(self, node: SpanNode) -> Arguments | None:
        if V1_ARGUMENTS not in node.attributes:
            return None
        return recorded_arguments(node.attributes, (V1_ARGUMENTS,))

    def result(self, node: SpanNode) -> str | None:
        if not _is_adk_tool(node):
            return None
        raw = genai.first_str(node.attributes, genai.TOOL_CALL_RESULT, V1_RESPONSE)
        return None if raw is None else unwrapped(raw)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if node.attributes.get(ERROR_TYPE) == TOOL_ERROR else None

    def span_prompt(self, node: SpanNode) -> str | None:
        """Schema v1: the first user text in a `call_llm` request's `contents`."""
        request = _v1_json(node, V1_LLM_REQUEST) if node.name == V1_CALL_LLM else None
        contents = request.get('contents') if request is not None else None
        for content in contents if isinstance(contents, list) else ():
            if isinstance(content, dict) and content.get('role') == 'user' and (text := content_text(content)):
                return text
        return None

    def response_text(self, node: SpanNode) -> str | None:
        """Schema v1: the request counted is `generate_content`, but its response is recorded only
        on the `call_llm` span around it."""
        parent = node.parent
        if parent is None or parent.name != V1_CALL_LLM:
            return None
        response = _v1_json(parent, V1_LLM_RESPONSE)
        return None if response is None else content_text(response.get('content'))


FAMILY = GoogleADK()
