"""LangSmith's OpenTelemetry mode (`LANGSMITH_TRACING_MODE=otel`), as it traces LangChain/LangGraph.

Every span carries `langsmith.span.kind` (`chain`, `llm`, `tool`, ...), the family's marker. Tool
and model spans use GenAI names where LangSmith has them (`gen_ai.tool.name`,
`gen_ai.tool.call.id`, `gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.*`), so
`genai` finds the calls (by their `execute_tool` operation: the spans are named after the tool)
and the requests. What LangSmith keeps its own way:

- A run's inputs and outputs are JSON in `gen_ai.prompt` / `gen_ai.completion`: a tool's
  arguments object, and `{"output": <ToolMessage>}` whose `content` is the tool's text.
- A LangGraph graph is one agent, named by its span: the `chain` span of the graph itself, tagged
  `ls_integration=langgraph` like everything inside it, but with no `graph:step:N` tag (which its
  node runs have) and not inside another LangGraph chain (as a node's own runnables are). A graph
  invoked inside a tool inherits the calling node's metadata, so the parent decides, not that.
- `RunnableSequence` chains repeat their model request's `gen_ai.usage.*` but name no model, so
  they are never requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_evals.otel.span_tree import SpanNode

from .arguments import load_json, recorded_arguments
from .family import Arguments, Family

SPAN_KIND = 'langsmith.span.kind'
TOOL = 'tool'
LLM = 'llm'
TOOL_CALLS = 'tool_calls'
CHAIN = 'chain'
INPUTS = 'gen_ai.prompt'
OUTPUTS = 'gen_ai.completion'
INTEGRATION = 'langsmith.metadata.ls_integration'
LANGGRAPH = 'langgraph'
TAGS = 'langsmith.span.tags'
STEP_TAG = 'graph:step:'
OUTPUT = 'output'
CONTENT = 'content'


def tool_output(raw: str) -> str | None:
    """The text of `{"output": {"content": "..."}}` (a ToolMessage), the output itself when it is
    text, `None` for the `{}` a failed tool records, and `raw` for anything else."""
    try:
        value = load_json(raw)
    except ValueError:
        return raw
    if value == {}:
        return None
    output = value.get(OUTPUT) if isinstance(value, dict) else None
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(content := output.get(CONTENT), str):
        return content
    return raw


def issued_calls(raw: object) -> list[tuple[str, str]]:
    """(id, name) of the calls in an LLMResult: `generations[0][0].message.kwargs.tool_calls`."""
    if not isinstance(raw, str) or TOOL_CALLS not in raw:
        return []
    try:
        result = load_json(raw)
        calls = result['generations'][0][0]['message']['kwargs'][TOOL_CALLS]
    except (ValueError, KeyError, IndexError, TypeError):
        return []
    return [
        (call['id'], call['name'])
        for call in calls
        if isinstance(calls, list)
        if isinstance(call, dict) and isinstance(call.get('id'), str) and isinstance(call.get('name'), str)
    ]


class LangSmith(Family):
    name = 'langsmith'
    markers = (SPAN_KIND,)

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        if node.attributes.get(SPAN_KIND) != LLM:
            return None
        return issued_calls(node.attributes.get(OUTPUTS))

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        found = self.issued_calls(node)
        return None if found is None else [call_id for call_id, _ in found]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        if not any(node.attributes.get(SPAN_KIND) == LLM for node in nodes):
            return None
        return [
            raw
            if node.attributes.get(SPAN_KIND) == LLM and isinstance(raw := node.attributes.get(OUTPUTS), str)
            else None
            for node in nodes
        ]

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        found = self.issued_call_ids(node)
        return None if found is None else {call_id: position for position, call_id in enumerate(found)}

    def arguments(self, node: SpanNode) -> Arguments | None:
        if node.attributes.get(SPAN_KIND) != TOOL:
            return None
        return recorded_arguments(node.attributes, (INPUTS,))

    def result(self, node: SpanNode) -> str | None:
        attributes = node.attributes
        raw = attributes.get(OUTPUTS)
        if attributes.get(SPAN_KIND) != TOOL or not isinstance(raw, str):
            return None
        return tool_output(raw)

    def agent_run(self, node: SpanNode) -> str | None:
        attributes = node.attributes
        if attributes.get(SPAN_KIND) != CHAIN or attributes.get(INTEGRATION) != LANGGRAPH:
            return None
        tags = attributes.get(TAGS)
        if isinstance(tags, str) and STEP_TAG in tags:
            return None  # a node of a graph, not the graph
        if isinstance(tags, (list, tuple)) and any(isinstance(t, str) and t.startswith(STEP_TAG) for t in tags):
            return None
        parent = node.parent
        if parent is not None and parent.attributes.get(SPAN_KIND) == CHAIN:
            return None  # a runnable inside a node (`call_model`, `RunnableSequence`, ...)
        name = node.name
        return name if isinstance(name, str) and name else None


FAMILY = LangSmith()
