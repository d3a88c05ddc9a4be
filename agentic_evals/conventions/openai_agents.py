"""The OpenAI Agents SDK through logfire and OpenLLMetry (Traceloop), where they differ from GenAI.

Both instrumentations are processors of the SDK's own traces, so they record what the SDK does:
tools of one response start in issue order, no tool span has a call id (logfire's Chat Completions
spans keep the issued ones in their `output` JSON, read by `issued_calls`), and a failed tool is a
tool that raised (the SDK tells the model an error occurred; it has no retry signal), whatever
result the span records. The SDK redacts the error itself unless the app sets its own
`failure_error_function`.

logfire names spans after its message templates: `Function: {name}` is a tool call (tool name in
`name`, arguments in `input`, result in `output`), `Agent run: {name!r}` an agent run (`name`), and
`Chat completion with {gen_ai.request.model!r}` a model request without an operation name (counted
by `genai.unlabelled_request`), whose `input` and `output` are the Chat Completions messages: the
prompt is the first user message, the answer the last output message's text. Turn and task spans
repeat token totals in a `usage` JSON, never read.

OpenLLMetry names tool spans `{tool}.tool` (found by `genai.operation_tool_call`) and parents a
sub-agent's run to the trace's root instead of the tool that ran it: `loses_parent_run` says so,
and the agent structure nests such a run inside the call whose time holds it. Its Chat
Completions spans record the input messages (read by `genai`) but no output messages: the final
answer is not in the trace.
"""

from __future__ import annotations

from typing import Any

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .arguments import load_json, recorded_arguments
from .family import Arguments, FailureStage, Family, RunSpans, ToolSpans

LOGFIRE_TOOL_SPAN = 'Function: {name}'
LOGFIRE_CHAT_SPAN = 'Chat completion with {gen_ai.request.model!r}'
LOGFIRE_AGENT_SPAN = 'Agent run: {name!r}'
LOGFIRE_NAME = 'name'
LOGFIRE_INPUT = 'input'
LOGFIRE_OUTPUT = 'output'
TRACELOOP_KIND = 'traceloop.span.kind'
TRACELOOP_TOOL = 'tool'
TRACELOOP_AGENT = 'agent'


def chat_messages(node: SpanNode, key: str) -> list[dict[str, Any]]:
    """The Chat Completions messages a logfire chat span records under `key` (`input`, `output`)."""
    raw = node.attributes.get(key)
    if node.name != LOGFIRE_CHAT_SPAN or not isinstance(raw, str):
        return []
    try:
        value = load_json(raw)
    except ValueError:
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def chat_text(message: dict[str, Any]) -> str | None:
    """A chat message's `content`: the text, or its `text` parts joined by newlines."""
    content = message.get('content')
    if isinstance(content, list):
        texts = [p['text'] for p in content if isinstance(p, dict) and isinstance(p.get('text'), str)]
        content = '\n'.join(texts) if texts else None
    return content if isinstance(content, str) and content else None


def _is_logfire_tool(node: SpanNode) -> bool:
    return node.name == LOGFIRE_TOOL_SPAN


class OpenAIAgents(Family):
    name = 'openai-agents'
    run_spans = RunSpans(names=frozenset({LOGFIRE_AGENT_SPAN}))
    markers = (TRACELOOP_KIND,)
    marker_spans = frozenset({LOGFIRE_TOOL_SPAN, LOGFIRE_AGENT_SPAN, LOGFIRE_CHAT_SPAN})
    tool_spans = ToolSpans(LOGFIRE_NAME, span_names=frozenset({LOGFIRE_TOOL_SPAN}))

    def arguments(self, node: SpanNode) -> Arguments | None:
        return recorded_arguments(node.attributes, (LOGFIRE_INPUT,)) if _is_logfire_tool(node) else None

    def result(self, node: SpanNode) -> str | None:
        return genai.first_str(node.attributes, LOGFIRE_OUTPUT) if _is_logfire_tool(node) else None

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        if _is_logfire_tool(node) or node.attributes.get(TRACELOOP_KIND) == TRACELOOP_TOOL:
            return 'raised'
        return None

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        """From a Chat Completions span's `output` JSON: `[{"tool_calls": [{"id", "function": {"name"}}]}]`."""
        raw = node.attributes.get(LOGFIRE_OUTPUT)
        if node.name != LOGFIRE_CHAT_SPAN or not isinstance(raw, str):
            return None
        try:
            output = load_json(raw)
        except ValueError:
            return None
        found: list[tuple[str, str]] = []
        for message in output if isinstance(output, list) else ():
            calls = message.get('tool_calls') if isinstance(message, dict) else None
            for call in calls if isinstance(calls, list) else ():
                function = call.get('function') if isinstance(call, dict) else None
                name = function.get('name') if isinstance(function, dict) else None
                if isinstance(call_id := call.get('id'), str) and isinstance(name, str):
                    found.append((call_id, name))
        return found

    def loses_parent_run(self, agent: SpanNode) -> bool:
        return agent.attributes.get(TRACELOOP_KIND) == TRACELOOP_AGENT

    def agent_run(self, node: SpanNode) -> str | None:
        if node.name != LOGFIRE_AGENT_SPAN:
            return None
        name = node.attributes.get(LOGFIRE_NAME)
        return name if isinstance(name, str) and name else None

    def span_prompt(self, node: SpanNode) -> str | None:
        user = (chat_text(m) for m in chat_messages(node, LOGFIRE_INPUT) if m.get('role') == 'user')
        return next((text for text in user if text is not None), None)

    def response_text(self, node: SpanNode) -> str | None:
        texts = [text for m in chat_messages(node, LOGFIRE_OUTPUT) if (text := chat_text(m)) is not None]
        return texts[-1] if texts else None


FAMILY = OpenAIAgents()
