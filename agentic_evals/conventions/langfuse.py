"""The Langfuse SDKs (Python 3+, JavaScript 4+), which record observations as OpenTelemetry spans.

Every span a Langfuse SDK makes carries `langfuse.observation.type` (`span`, `generation`, `agent`,
`tool`, `chain`, `retriever`, `embedding`, `evaluator`, `guardrail`, `event`), the family's marker.
The observation's name is the span's name; its input and output are `langfuse.observation.input` /
`output`, each the value as JSON text, except that a Python string is written as itself (so text
that is not JSON is the value). Measured on langfuse 5.2.0 (`fixtures/frameworks/langfuse/`).

- **Calls** are `tool` observations, named by the span. A call failed when its level is `ERROR`
  (`@observe` sets it, with `status_message`, when the function raises, and so does the LangChain
  handler's `on_tool_error`; the SDK also sets the span's status to ERROR): stage `raised`, and no
  output is recorded.
- **Arguments** are the input. Python's `@observe` records `{"args": [...], "kwargs": {...}}`, with
  no parameter names for the positional values: the keyword arguments are the call's arguments,
  and positional values are reported as arguments the trace does not name. Any other JSON object
  is the arguments (JavaScript's `observe` of a one-object function, the LangChain handler's tool
  input); anything else is reported.
- **Results** are the output as recorded (text as itself, anything else as its JSON), except the
  LangChain handler's ToolMessage (`{"type": "tool", "tool_call_id", "content", ...}`): its text.
- **Call ids**: the LangChain handler's `tool_call_id` run metadata, else its ToolMessage's; `@observe`
  records none, and the call id is recovered from the issuing generation's output.
- **Model requests** are `generation` observations: model `langfuse.observation.model.name`, tokens
  from the `langfuse.observation.usage_details` JSON as Langfuse counts them (input: every usage
  type whose name holds `input`, output likewise; OpenAI's `prompt_tokens` / `completion_tokens`
  when no type holds either), cost from `langfuse.observation.cost_details` (`total`, else the sum).
- **Issued calls** are read from a generation's output in the formats users and Langfuse's own
  integrations record: an OpenAI Chat Completions message (`tool_calls[].function`, or a list of
  messages), OpenAI Responses items (`function_call`), Anthropic content blocks (`tool_use`) and
  LangChain's `tool_calls` (`name`, `args`).
- **Agent runs** are `agent` observations, named by the span, except a LangGraph node the LangChain
  handler types `agent` because it is named so (its `langgraph_node` metadata is its own name: one
  turn of its graph); and a LangGraph graph's `chain` observation (`ls_integration` metadata
  `langgraph`) that starts a graph run: a root, or under anything but a chain or agent (a tool).
- **A run's prompt and answer**: the agent's input when it is one text (itself, the only value
  `@observe` recorded, or the first user message of the messages or state it holds), else the first
  user message of a generation's input; the agent's output (of a state with messages, the last
  message's text when it is the AI's), else the last generation's text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .arguments import load_json, parse_arguments
from .family import (
    IGNORED,
    MODEL_REQUEST,
    Answer,
    Arguments,
    Classifier,
    FailureStage,
    Family,
    IssuedCall,
    RequestFacts,
    RunSpans,
)

# Span attributes of langfuse (Python SDK 3.0+, `LangfuseOtelSpanAttributes`; JavaScript SDK 4.0+).
OBSERVATION_TYPE = 'langfuse.observation.type'
OBSERVATION_INPUT = 'langfuse.observation.input'
OBSERVATION_OUTPUT = 'langfuse.observation.output'
OBSERVATION_LEVEL = 'langfuse.observation.level'
OBSERVATION_STATUS_MESSAGE = 'langfuse.observation.status_message'
MODEL_NAME = 'langfuse.observation.model.name'
USAGE_DETAILS = 'langfuse.observation.usage_details'
COST_DETAILS = 'langfuse.observation.cost_details'
TRACE_NAME = 'langfuse.trace.name'
METADATA_PREFIX = 'langfuse.observation.metadata.'
"""One attribute per metadata key; the value JSON text (Python SDK 5: every value; before, strings as themselves)."""

# `langfuse.observation.type` values (the agent, tool, ... types since Python SDK 3.3).
GENERATION = 'generation'
TOOL = 'tool'
AGENT = 'agent'
CHAIN = 'chain'
ERROR_LEVEL = 'ERROR'

# Python `@observe`'s input: the function's positional and keyword arguments.
ARGS = 'args'
KWARGS = 'kwargs'
DECORATOR_INPUT = frozenset({ARGS, KWARGS})

# usage_details: Langfuse's usage types are free names; its UI counts every name holding `input`
# as input and every name holding `output` as output. OpenAI's raw usage is also accepted.
INPUT = 'input'
OUTPUT = 'output'
TOTAL = 'total'
PROMPT_TOKENS = 'prompt_tokens'
COMPLETION_TOKENS = 'completion_tokens'
CACHE_READ_MARKS = ('cache_read', 'cached')
CACHE_WRITE_MARKS = ('cache_creation', 'cache_write')
CACHED_DETAILS = ('prompt_tokens_details', 'input_tokens_details')
"""OpenAI's nested details, whose `cached_tokens` are part of the input count."""
CACHED_TOKENS = 'cached_tokens'

# Message formats in generation inputs and outputs.
ROLE = 'role'
USER = 'user'
CONTENT = 'content'
TEXT = 'text'
TOOL_CALLS = 'tool_calls'
FUNCTION = 'function'
TYPE = 'type'
NAME = 'name'
ID = 'id'
ARGUMENTS = 'arguments'
MESSAGES = 'messages'
RESPONSES_CALL = 'function_call'
RESPONSES_CALL_ID = 'call_id'
ANTHROPIC_CALL = 'tool_use'
ANTHROPIC_INPUT = 'input'
LANGCHAIN_ARGS = 'args'

# Langfuse's LangChain callback handler (`langfuse.langchain.CallbackHandler`): LangChain's run
# metadata as observation metadata, a tool's output as the ToolMessage's fields.
TOOL_CALL_ID_METADATA = METADATA_PREFIX + 'tool_call_id'
INTEGRATION_METADATA = METADATA_PREFIX + 'ls_integration'
LANGGRAPH_NODE_METADATA = METADATA_PREFIX + 'langgraph_node'
LANGGRAPH = 'langgraph'
TOOL_MESSAGE = 'tool'
TOOL_CALL_ID = 'tool_call_id'
HUMAN = ('user', 'human')
AI = ('assistant', 'ai')

POSITIONAL = 'were recorded as positional values {values!r}, and the trace does not record the parameter names'
NOT_AN_OBJECT = 'were recorded as {kind} {value!r}, and the trace does not record the parameter names'


def _type(node: SpanNode) -> object:
    return node.attributes.get(OBSERVATION_TYPE)


def _text(node: SpanNode, key: str) -> str | None:
    value = node.attributes.get(key)
    return value if isinstance(value, str) else None


def _decoded(text: str | None) -> Any:
    """A recorded input or output: parsed when it is JSON, else the text itself (Python writes a
    string as itself); `None` when nothing was recorded."""
    if text is None:
        return None
    try:
        return load_json(text)
    except ValueError:
        return text


def _metadata(node: SpanNode, key: str) -> Any:
    return _decoded(_text(node, key))


def _number(value: object) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return value if math.isfinite(value) and value >= 0 else None
    except OverflowError:  # an int too big for a float
        return None


# -- arguments ---------------------------------------------------------------------------------------


def tool_arguments(node: SpanNode) -> Arguments | None:
    """A tool observation's input as arguments (see the module docstring)."""
    raw = node.attributes.get(OBSERVATION_INPUT)
    if raw is None:
        return None
    if not isinstance(raw, str):
        return Arguments(None, None, f'were recorded as {type(raw).__name__} {raw!r}, not as text.')
    value = _decoded(raw)
    if isinstance(value, dict) and value.keys() == DECORATOR_INPUT:
        args, kwargs = value[ARGS], value[KWARGS]
        if isinstance(args, list) and isinstance(kwargs, dict):
            if args:
                return Arguments(None, raw, POSITIONAL.format(values=args))
            return Arguments(kwargs, raw, None)
    if isinstance(value, dict):
        parsed, problem = parse_arguments(raw)  # the shared parser's depth and error rules
        return Arguments(parsed, raw, problem)
    kind = 'text' if isinstance(value, str) else type(value).__name__
    return Arguments(None, raw, NOT_AN_OBJECT.format(kind=kind, value=value))


def tool_message(node: SpanNode) -> dict[str, Any] | None:
    """The ToolMessage fields the LangChain handler records as a tool's output, else `None`."""
    value = _decoded(_text(node, OBSERVATION_OUTPUT))
    if isinstance(value, dict) and value.get(TYPE) == TOOL_MESSAGE and TOOL_CALL_ID in value and CONTENT in value:
        return value
    return None


def tool_result(node: SpanNode) -> str | None:
    message = tool_message(node)
    if message is not None:
        content = message[CONTENT]
        text = content if isinstance(content, str) else _content_text(content)
        if text is not None:
            return text
    return _text(node, OBSERVATION_OUTPUT)


def tool_call_id(node: SpanNode) -> str | None:
    """The call id the LangChain handler records: the run's `tool_call_id` metadata, else the ToolMessage's."""
    call_id = _metadata(node, TOOL_CALL_ID_METADATA)
    if not isinstance(call_id, str):
        message = tool_message(node)
        call_id = None if message is None else message[TOOL_CALL_ID]
    return call_id if isinstance(call_id, str) and call_id else None


def langgraph_run(node: SpanNode) -> bool:
    """A LangGraph graph's own `chain` observation (the LangChain handler's): it starts a graph run
    when it is a root or its parent is no chain or agent observation (a tool, a span of the user's)."""
    if _type(node) != CHAIN or _metadata(node, INTEGRATION_METADATA) != LANGGRAPH:
        return False
    parent = node.parent
    return parent is None or _type(parent) not in (CHAIN, AGENT)


def langgraph_node(node: SpanNode) -> bool:
    """An observation that is one run of a LangGraph node (the handler types a node named `agent` as
    an agent): its metadata names it as the node it is."""
    node_name: object = _metadata(node, LANGGRAPH_NODE_METADATA)
    return node_name == node.name


# -- usage -------------------------------------------------------------------------------------------


def _details(node: SpanNode, key: str) -> dict[str, Any] | None:
    value = _decoded(_text(node, key))
    return value if isinstance(value, dict) else None


def usage(node: SpanNode) -> dict[str, int | float]:
    """Tokens and cost of a generation, by pydantic-evals' metric names (module docstring)."""
    found: dict[str, int | float] = {}
    details = _details(node, USAGE_DETAILS)
    if details is not None:
        counts = {k: n for k, v in details.items() if (n := _number(v)) is not None}
        inputs = [k for k in counts if INPUT in k]
        outputs = [k for k in counts if OUTPUT in k and INPUT not in k]
        found[genai.INPUT_TOKENS_METRIC] = sum(counts[k] for k in inputs) if inputs else counts.get(PROMPT_TOKENS, 0)
        found[genai.OUTPUT_TOKENS_METRIC] = (
            sum(counts[k] for k in outputs) if outputs else counts.get(COMPLETION_TOKENS, 0)
        )
        cache_read = sum(counts[k] for k in inputs if any(mark in k for mark in CACHE_READ_MARKS))
        for nested in CACHED_DETAILS:
            inner = details.get(nested)
            if isinstance(inner, dict) and (cached := _number(inner.get(CACHED_TOKENS))) is not None:
                cache_read += cached
        cache_write = sum(counts[k] for k in inputs if any(mark in k for mark in CACHE_WRITE_MARKS))
        if cache_read:
            found[genai.CACHE_READ_TOKENS_METRIC] = cache_read
        if cache_write:
            found[genai.CACHE_WRITE_TOKENS_METRIC] = cache_write
    costs = _details(node, COST_DETAILS)
    if costs is not None:
        numbers = {k: n for k, v in costs.items() if (n := _number(v)) is not None}
        if numbers:
            found[genai.COST_METRIC] = float(numbers[TOTAL] if TOTAL in numbers else sum(numbers.values()))
    return found


# -- messages ----------------------------------------------------------------------------------------


def _content_text(content: object) -> str | None:
    """A message's content: the text, or its text parts (`text`, `output_text`) joined by newlines."""
    if isinstance(content, list):
        texts = [p[TEXT] for p in content if isinstance(p, dict) and isinstance(p.get(TEXT), str)]
        content = '\n'.join(texts) if texts else None
    return content if isinstance(content, str) and content else None


def _messages(value: object) -> list[Any]:
    """The messages of an input or output: a list, `{"messages": [...]}`, or one message."""
    if isinstance(value, dict):
        inner = value.get(MESSAGES)
        value = inner if isinstance(inner, list) else [value]
    return value if isinstance(value, list) else []


def message_text(message: object, roles: tuple[str, ...]) -> str | None:
    """The text of a message in one of `roles`: OpenAI's `role`, LangChain's `type`, or a LangChain
    `(role, text)` pair; `None` for another role or a message without text."""
    if isinstance(message, list) and len(message) == 2:
        role, content = message
    elif isinstance(message, dict):
        role, content = message.get(ROLE, message.get(TYPE)), message.get(CONTENT)
    else:
        return None
    return _content_text(content) if role in roles else None


def first_user_text(value: object) -> str | None:
    return next((t for m in _messages(value) if (t := message_text(m, HUMAN)) is not None), None)


def _arguments_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    return None if value is None else json.dumps(value)


def _issued_by(item: dict[str, Any]) -> list[IssuedCall]:
    """The calls one output message or item issued, in order."""
    found: list[IssuedCall] = []
    if item.get(TYPE) == RESPONSES_CALL:  # OpenAI Responses item
        call_id, name = item.get(RESPONSES_CALL_ID), item.get(NAME)
        if isinstance(name, str):
            found.append(
                IssuedCall(call_id if isinstance(call_id, str) else None, name, _arguments_text(item.get(ARGUMENTS)))
            )
        return found
    calls = item.get(TOOL_CALLS)
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue
        function = call.get(FUNCTION)
        if isinstance(function, dict):  # OpenAI Chat Completions
            name, arguments = function.get(NAME), function.get(ARGUMENTS)
        else:  # LangChain
            name, arguments = call.get(NAME), call.get(LANGCHAIN_ARGS)
        call_id = call.get(ID)
        if isinstance(name, str):
            found.append(IssuedCall(call_id if isinstance(call_id, str) else None, name, _arguments_text(arguments)))
    blocks = item.get(CONTENT)
    for block in blocks if isinstance(blocks, list) else ():
        if isinstance(block, dict) and block.get(TYPE) == ANTHROPIC_CALL and isinstance(name := block.get(NAME), str):
            call_id = block.get(ID)
            found.append(
                IssuedCall(
                    call_id if isinstance(call_id, str) else None, name, _arguments_text(block.get(ANTHROPIC_INPUT))
                )
            )
    return found


def issued(node: SpanNode) -> list[IssuedCall]:
    output = _decoded(_text(node, OBSERVATION_OUTPUT))
    items = output if isinstance(output, list) else [output]
    return [call for item in items if isinstance(item, dict) for call in _issued_by(item)]


def output_text(value: object) -> str | None:
    """The text a generation answered with: the output text itself, or its last message's text."""
    if isinstance(value, str):
        return value or None
    texts = [t for m in _messages(value) if isinstance(m, dict) and (t := _content_text(m.get(CONTENT))) is not None]
    return texts[-1] if texts else None


def _run_text(value: object) -> str | None:
    """An agent's input when it is one text: itself, or the only argument `@observe` recorded."""
    if isinstance(value, dict) and value.keys() == DECORATOR_INPUT:
        args, kwargs = value[ARGS], value[KWARGS]
        values = [*(args if isinstance(args, list) else ()), *(kwargs.values() if isinstance(kwargs, dict) else ())]
        value = values[0] if len(values) == 1 else None
    if isinstance(value, str):
        return value or None
    return first_user_text(value)  # messages, or a state with messages (LangGraph's)


# -- the family --------------------------------------------------------------------------------------


def classify_call(node: SpanNode, notes: list[str]) -> Answer:
    if _type(node) != TOOL:
        return None
    name = node.name
    if not isinstance(name, str) or not name:
        notes.append(f'span {name!r} skipped: a Langfuse tool observation without a name')
        return IGNORED
    failed = node.status == 'error' or node.attributes.get(OBSERVATION_LEVEL) == ERROR_LEVEL
    return name, 'failed' if failed else 'ok'


def classify_request(node: SpanNode, notes: list[str]) -> Answer:
    return MODEL_REQUEST if _type(node) == GENERATION else None


class Langfuse(Family):
    """Spans of the Langfuse SDKs, by `langfuse.observation.type` (module docstring)."""

    name = 'langfuse'
    run_spans = RunSpans(keys={OBSERVATION_TYPE: frozenset({AGENT, CHAIN})})
    markers = (OBSERVATION_TYPE,)

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {OBSERVATION_TYPE: classify_call}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {OBSERVATION_TYPE: classify_request}

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        return tool_call_id(node) if _type(node) == TOOL else None

    def arguments(self, node: SpanNode) -> Arguments | None:
        return tool_arguments(node) if _type(node) == TOOL else None

    def result(self, node: SpanNode) -> str | None:
        return tool_result(node) if _type(node) == TOOL else None

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if _type(node) == TOOL else None

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        return usage(node) if _type(node) == GENERATION else None

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        if _type(node) != GENERATION:
            return None
        cost = usage.get(genai.COST_METRIC)
        return RequestFacts(
            model=_text(node, MODEL_NAME),
            operation=genai.CHAT,
            input_tokens=int(usage.get(genai.INPUT_TOKENS_METRIC, 0)),
            output_tokens=int(usage.get(genai.OUTPUT_TOKENS_METRIC, 0)),
            cache_read_tokens=int(usage.get(genai.CACHE_READ_TOKENS_METRIC, 0)),
            cache_write_tokens=int(usage.get(genai.CACHE_WRITE_TOKENS_METRIC, 0)),
            cost=None if cost is None else float(cost),
        )

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        if _type(node) != GENERATION or OBSERVATION_OUTPUT not in node.attributes:
            return None
        return issued(node)

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        found = self.issued(node)
        return None if found is None else [(c.call_id, c.name) for c in found if c.call_id is not None]

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        found = self.issued(node)
        return None if found is None else [c.call_id for c in found if c.call_id is not None]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        if not any(_type(node) == GENERATION for node in nodes):
            return None
        return [_text(node, OBSERVATION_OUTPUT) if _type(node) == GENERATION else None for node in nodes]

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        found = self.issued_call_ids(node)
        return None if found is None else {call_id: position for position, call_id in enumerate(found)}

    # -- runs ----------------------------------------------------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        name = node.name
        if not isinstance(name, str) or not name:
            return None
        kind = _type(node)
        if (kind == AGENT and not langgraph_node(node)) or (kind == CHAIN and langgraph_run(node)):
            return name
        return None

    def run_prompt(self, agent: SpanNode) -> str | None:
        if _type(agent) not in (AGENT, CHAIN):
            return None
        return _run_text(_decoded(_text(agent, OBSERVATION_INPUT)))

    def span_prompt(self, node: SpanNode) -> str | None:
        return first_user_text(_decoded(_text(node, OBSERVATION_INPUT))) if _type(node) == GENERATION else None

    def run_output(self, agent: SpanNode) -> Any:
        """The agent's output; of a run whose output is a state with messages (LangGraph's), the
        last message's text when the agent answered with text (else the last generation's)."""
        if _type(agent) not in (AGENT, CHAIN):
            return None
        output = _decoded(_text(agent, OBSERVATION_OUTPUT))
        if isinstance(output, dict) and isinstance(messages := output.get(MESSAGES), list):
            return message_text(messages[-1], AI) if messages else None
        return output if isinstance(output, (dict, list)) else _text(agent, OBSERVATION_OUTPUT)

    def response_text(self, node: SpanNode) -> str | None:
        return output_text(_decoded(_text(node, OBSERVATION_OUTPUT))) if _type(node) == GENERATION else None


FAMILY = Langfuse()
