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
by `genai.unlabelled_request`). Turn and task spans repeat token totals in a `usage` JSON, never read.

OpenLLMetry names tool spans `{tool}.tool` (found by `genai.operation_tool_call`) and parents a
sub-agent's run to the trace's root instead of the tool that ran it (the agent structure nests a
top-level run inside the call whose time it falls in).
"""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .arguments import load_json, recorded_arguments
from .family import Arguments, FailureStage, Family, ToolSpans

LOGFIRE_TOOL_SPAN = 'Function: {name}'
LOGFIRE_CHAT_SPAN = 'Chat completion with {gen_ai.request.model!r}'
LOGFIRE_AGENT_SPAN = 'Agent run: {name!r}'
LOGFIRE_NAME = 'name'
LOGFIRE_INPUT = 'input'
LOGFIRE_OUTPUT = 'output'
TRACELOOP_KIND = 'traceloop.span.kind'
TRACELOOP_TOOL = 'tool'


def _is_logfire_tool(node: SpanNode) -> bool:
    return node.name == LOGFIRE_TOOL_SPAN


class OpenAIAgents(Family):
    name = 'openai-agents'
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

    def agent_run(self, node: SpanNode) -> str | None:
        if node.name != LOGFIRE_AGENT_SPAN:
            return None
        name = node.attributes.get(LOGFIRE_NAME)
        return name if isinstance(name, str) and name else None


FAMILY = OpenAIAgents()
