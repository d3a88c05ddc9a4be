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
- A run's prompt and answer are LangChain messages in those JSONs: the graph's input state's first
  `human` message and its output state's last message when it is an `ai` one with text; a model
  request's `{"messages": [[...]]}` and its LLMResult (`generations[0][0]`), serialised as
  `{"lc": 1, "kwargs": {...}}` constructors.
- `RunnableSequence` chains repeat their model request's `gen_ai.usage.*` but name no model, so
  they are never requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode

from .arguments import load_json, recorded_arguments
from .family import Arguments, Family, RunSpans

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


HUMAN = ('human', 'user')
AI = ('ai', 'assistant')


def _json_at(node: SpanNode, key: str) -> Any:
    raw = node.attributes.get(key)
    try:
        return load_json(raw) if isinstance(raw, str) else None
    except ValueError:
        return None


def message_text(message: object, types: tuple[str, ...]) -> str | None:
    """The text of a LangChain message of one of `types` (a dict, its `lc` constructor or a
    `(type, text)` pair); `None` for another type or a message without text."""
    if isinstance(message, list) and len(message) == 2:
        kind, content = message
    elif isinstance(message, dict):
        fields = message.get('kwargs') if message.get('lc') else message
        fields = fields if isinstance(fields, dict) else {}
        kind, content = fields.get('type'), fields.get(CONTENT)
    else:
        return None
    if kind not in types:
        return None
    if isinstance(content, list):  # content blocks
        texts = [b if isinstance(b, str) else b.get('text') for b in content if isinstance(b, (str, dict))]
        content = '\n'.join(t for t in texts if isinstance(t, str)) or None
    return content if isinstance(content, str) and content else None


def _messages(value: object) -> list[Any]:
    messages = value.get('messages') if isinstance(value, dict) else None
    if isinstance(messages, list) and messages and isinstance(messages[0], list):
        messages = messages[0]  # a chat model's input: one list of messages per prompt
    return messages if isinstance(messages, list) else []


def first_human_text(value: object) -> str | None:
    return next((t for m in _messages(value) if (t := message_text(m, HUMAN)) is not None), None)


class LangSmith(Family):
    name = 'langsmith'
    run_spans = RunSpans(keys={SPAN_KIND: frozenset({CHAIN})})
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

    def run_prompt(self, agent: SpanNode) -> str | None:
        """The first human message of a graph's input state."""
        return first_human_text(_json_at(agent, INPUTS)) if agent.attributes.get(SPAN_KIND) == CHAIN else None

    def run_output(self, agent: SpanNode) -> Any:
        """The graph's output state's last message, when the agent answered with text."""
        if agent.attributes.get(SPAN_KIND) != CHAIN:
            return None
        messages = _messages(_json_at(agent, OUTPUTS))
        return message_text(messages[-1], AI) if messages else None

    def span_prompt(self, node: SpanNode) -> str | None:
        return first_human_text(_json_at(node, INPUTS)) if node.attributes.get(SPAN_KIND) == LLM else None

    def response_text(self, node: SpanNode) -> str | None:
        """The text of an LLMResult's first generation (its message's content, else its `text`)."""
        result = _json_at(node, OUTPUTS) if node.attributes.get(SPAN_KIND) == LLM else None
        if not isinstance(result, dict):
            return None
        try:
            generation = result['generations'][0][0]
        except (KeyError, IndexError, TypeError):
            return None
        if not isinstance(generation, dict):
            return None
        text = message_text(generation.get('message'), AI)
        if text is None and isinstance(plain := generation.get('text'), str) and plain:
            text = plain
        return text


FAMILY = LangSmith()
