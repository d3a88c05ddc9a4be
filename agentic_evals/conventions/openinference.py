"""OpenInference (Arize) span conventions: `openinference.span.kind` TOOL / LLM / AGENT / CHAIN spans.

One family for every OpenInference instrumentor measured (openai-agents, LangGraph / LangChain,
smolagents, LlamaIndex, CrewAI); where they differ, the rule says which framework it is for. Only the
span kind decides what a span is, never its name (instrumentors name spans after classes):

- **Calls** are TOOL spans, named by `tool.name`. Wrapper CHAIN spans that carry the same call
  (LangGraph `tools`, LlamaIndex `call_tool`, smolagents `Step N`) are not calls, and their error
  status adds no failure. smolagents' `FinalAnswerTool` (`final_answer`) is its output mechanism: an
  output function. A smolagents managed agent has no TOOL span: the `Step N` span holding its
  `{name}.run` span is that delegating call (its name, arguments and id from the step's own model
  response, its result the step's observation).
- **Arguments** are `input.value`: a JSON object, unwrapped from `{"kwargs": {...}}` (LlamaIndex) and
  `{"args": [], "sanitize_inputs_outputs": ..., "kwargs": {...}}` (smolagents) unless the tool's schema
  names a `kwargs` parameter. LangChain (Python and JavaScript) records the input of a
  single-argument tool as the bare string (`Paris`; a JSON string literal when typed JSON): it is
  bound to the parameter the trace names (the call LangGraph's ToolNode ran, from the input of its
  CHAIN span, the TOOL span's parent; else a `tool.parameters` schema with exactly one property),
  and is otherwise kept as the raw arguments with the reason.
- **The call a LangGraph ToolNode ran** is read from its CHAIN span's `input.value`: Python's
  `tool_call_with_context` wrapper (`tool_call`, one task per call), LangGraph.js' `Send` input
  (`lg_tool_call`), or the messages state (`{"messages": [...]}`, LangGraph.js' default): the tool
  calls of its last AI message, the one with the TOOL span's own call id, else the only one of its
  name that no sibling TOOL span answered.
- **Results** are `output.value`, unwrapped where a framework's envelope holds one text: a LangChain
  ToolMessage (Python's `{"type": "tool", "data": {...}}`, JavaScript's `{"output": {"lc": 1, "id":
  [..., "ToolMessage"], "kwargs": {...}}}`; its `content`, text or text blocks) and LlamaIndex's
  ToolOutput (its text blocks, else `raw_output`). Anything else is kept as recorded.
- **Call ids**: the ToolMessage's `tool_call_id` (LangGraph), else the id of the call the ToolNode ran
  (LangGraph: the only place a failed call's id is), else the `tool_id` of the parent `call_tool`
  span's `ToolCall(...)` repr (LlamaIndex). openai-agents, CrewAI and smolagents tool spans carry none.
- **Issued calls** of an LLM span: `llm.output_messages.*.message.tool_calls.*.tool_call.*` (id, function
  name, arguments). OpenInference's LangChain.js instrumentation records no id there (and no calls at
  all unless the provider keeps its raw calls in `additional_kwargs.tool_calls`, as ChatOpenAI
  does): the ids, or the whole calls, then come from the LLMResult in `output.value`
  (`generations[0][0].message`'s `tool_calls`).
- **Failure stage**: a failed TOOL span is `raised`. No OpenInference instrumentor records a retry or
  a validation stage: openai-agents' failure handler, LangGraph's `handle_tool_errors`, LlamaIndex's
  `call_tool` and smolagents' step all turn an exception the tool raised into text for the model,
  and the result on the span (openai-agents records the handler's message) is that text, not a retry.
- **Model requests** are LLM spans that recorded a response (token counts or output messages) or
  failed: LlamaIndex's `_prepare_chat_with_tools` LLM span, which only builds the request beside the
  one that sends it, is not one, nor is an LLM span holding another (DSPy's `LM.__call__` around
  LiteLLM's `completion` when both are instrumented): the innermost records the request. Tokens
  from `llm.token_count.prompt` / `completion` (+ cache details), cost from `llm.cost.total`, model
  from `llm.model_name`. AGENT and CHAIN spans that repeat totals (smolagents `*.run`, CrewAI
  `kickoff`) are never requests.
- **Agent runs**: an AGENT span naming its agent (`agent.name` for openai-agents, `graph.node.id` for
  CrewAI); smolagents' `{name}.run` AGENT span; a LangGraph graph's CHAIN span (its name is the
  graph's; `metadata` JSON with `ls_integration: langgraph`, parsed: Python writes it with spaces,
  JavaScript without), when it starts a graph: a root, or under a span that is not a CHAIN or AGENT
  (a tool); LangGraph's `agent` spans (AGENT in Python, CHAIN in JavaScript) are one node per turn,
  not runs; a LlamaIndex workflow agent's
  `{Class}.run` CHAIN span, named by the `current_agent_name` its `init_run` step returns (the last
  field of the `AgentInput` repr: the only place the name is recorded that user text cannot precede).
- **A run's prompt and answer**: the agent span's first user message, else the first LLM span's; the
  answer is the last LLM response's text. smolagents' run span records both itself (`task` in
  `input.value`, the answer in `output.value`). CrewAI wraps the task in its own prompt template
  (`Current Task: ...`): the prompt is the task's description as the user wrote it, the answer the
  task's output, from the AGENT span (`task_description` and `output.value` with the event listener,
  the `TaskOutput` JSON's `description` and `raw` or `json_dict` in wrapper mode, which records no
  model request).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any, Final

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode

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

SPAN_KIND = 'openinference.span.kind'
TOOL: Final = 'TOOL'
LLM: Final = 'LLM'
AGENT: Final = 'AGENT'
CHAIN: Final = 'CHAIN'

TOOL_NAME = 'tool.name'
TOOL_PARAMETERS = 'tool.parameters'
INPUT_VALUE = 'input.value'
OUTPUT_VALUE = 'output.value'
AGENT_NAME = 'agent.name'
GRAPH_NODE_ID = 'graph.node.id'
METADATA = 'metadata'

MODEL_NAME = 'llm.model_name'
PROMPT_TOKENS = 'llm.token_count.prompt'
COMPLETION_TOKENS = 'llm.token_count.completion'
CACHE_READ_TOKENS = 'llm.token_count.prompt_details.cache_read'
CACHE_WRITE_TOKENS = 'llm.token_count.prompt_details.cache_write'
COST_TOTAL = 'llm.cost.total'
OUTPUT_MESSAGE = 'llm.output_messages.{}.message.'
INPUT_MESSAGE = 'llm.input_messages.{}.message.'
ROLE = 'role'
CONTENT = 'content'
TOOL_CALL_ID = 'tool_calls.{}.tool_call.id'
TOOL_CALL_FUNCTION = 'tool_calls.{}.tool_call.function.name'
TOOL_CALL_ARGUMENTS = 'tool_calls.{}.tool_call.function.arguments'

# LangGraph / LangChain (openinference-instrumentation-langchain 0.1.x, Python;
# @arizeai/openinference-instrumentation-langchain 4.x, JavaScript)
LS_INTEGRATION = 'ls_integration'
LANGGRAPH = 'langgraph'
"""`metadata.ls_integration` of a LangGraph graph's spans (langgraph 1.x, @langchain/langgraph 1.x)."""
WRAPPER_TYPE_KEY = '__type'
TOOL_CALL_WRAPPER = 'tool_call_with_context'
"""`__type` of Python LangGraph's `tools` task input: the call it dispatches (`tool_call`) and state."""
WRAPPED_TOOL_CALL = 'tool_call'
SEND_TOOL_CALL = 'lg_tool_call'
"""LangGraph.js' `createReactAgent({version: 'v2'})` sends each call to `tools` as the state plus this key."""
MESSAGES = 'messages'
TOOL_CALLS = 'tool_calls'
TOOL_CALL_ID_KEY = 'tool_call_id'
LC_KWARGS = 'kwargs'
"""A LangChain object serialised as `{"lc": 1, "type": "constructor", "id": [..., class], "kwargs": {...}}`."""
LC_ID = 'id'
PY_MESSAGE_DATA = 'data'
"""Python OpenInference writes a LangChain message as `{"type": "tool" | "ai" | ..., "data": {...}}`."""
RUN_OUTPUT = 'output'
"""A LangChain.js run's outputs are `{"output": <value>}` (its tool runs': the ToolMessage)."""
TOOL_MESSAGE_CLASS = 'ToolMessage'
AI_MESSAGE_CLASSES = frozenset({'AIMessage', 'AIMessageChunk'})
TOOL_TYPE = 'tool'
AI_TYPE = 'ai'
GENERATIONS = 'generations'
MIME_TYPE_INPUT = 'input.mime_type'
JSON_MIME = 'application/json'

# smolagents
SMOLAGENTS_RUN_SUFFIX = '.run'
SMOLAGENTS_RUN_KEYS = ('smolagents.tools_names', 'smolagents.max_steps')
SMOLAGENTS_STEP_PREFIX = 'Step '
SMOLAGENTS_FINAL_ANSWER = 'final_answer'
SMOLAGENTS_FINAL_ANSWER_SPAN = 'FinalAnswerTool'
SMOLAGENTS_WRAPPER_KEYS = frozenset({'args', 'sanitize_inputs_outputs', 'kwargs'})
KWARGS = 'kwargs'
"""LlamaIndex and smolagents record a tool's keyword arguments under this key."""

# CrewAI
CREWAI_TASK_DESCRIPTION = 'task_description'
CREWAI_TASK_OUTPUT_KEYS = frozenset({'description', 'raw', 'json_dict', 'agent', 'output_format'})
"""Fields of a `TaskOutput`, as CrewAI's wrapper-mode AGENT span records it in `output.value`."""

# LlamaIndex
LLAMAINDEX_RUN_SUFFIX = '.run'
LLAMAINDEX_INIT_RUN_SUFFIX = '.init_run'
LLAMAINDEX_AGENT_NAME = "current_agent_name='"
LLAMAINDEX_CALL_TOOL_SUFFIX = '.call_tool'
LLAMAINDEX_TOOL_ID = "tool_id='"
LLAMAINDEX_TOOL_NAME = "ToolCall(tool_name='"

BARE_STRING = (
    'were recorded as a bare string (a single-argument tool input) and nothing in the trace names its parameter'
)
_MAX_INDEX = 10_000
"""More messages or tool calls than any response holds: ends a scan of flattened keys."""


def _kind(node: SpanNode) -> AttributeValue | None:
    return node.attributes.get(SPAN_KIND)


def _text(attributes: Mapping[str, AttributeValue], key: str) -> str | None:
    value = attributes.get(key)
    return value if isinstance(value, str) else None


def _json(text: str | None) -> Any:
    """`text` parsed when it is a JSON object or list (depth-limited), else `None`."""
    if text is None or text[:1] not in ('{', '['):
        return None
    try:
        return load_json(text)
    except ValueError:
        return None


def _int(attributes: Mapping[str, AttributeValue], key: str) -> int:
    value = attributes.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


# -- spans of one framework ------------------------------------------------------------------------


def _text_name(node: SpanNode) -> str:
    """The span's name, or `''` when it is not text (a hostile trace's): never a string method on it."""
    name = node.name
    return name if isinstance(name, str) else ''


def smolagents_run(node: SpanNode) -> str | None:
    """The agent of a smolagents `{name}.run` AGENT span."""
    name = node.name
    if _kind(node) != AGENT or not isinstance(name, str) or not name.endswith(SMOLAGENTS_RUN_SUFFIX):
        return None
    if not any(key in node.attributes for key in SMOLAGENTS_RUN_KEYS):
        return None
    return name[: -len(SMOLAGENTS_RUN_SUFFIX)] or None


def managed_agent_run(step: SpanNode) -> SpanNode | None:
    """The managed agent's run inside a smolagents `Step N` CHAIN span, which then is that call."""
    if _kind(step) != CHAIN or not _text_name(step).startswith(SMOLAGENTS_STEP_PREFIX):
        return None
    return next((child for child in step.children if smolagents_run(child) is not None), None)


def issued_calls(node: SpanNode) -> list[tuple[str | None, str | None, str | None]]:
    """(id, function name, arguments) of every call an LLM span's response issued, in issue order."""
    attributes = node.attributes
    found: list[tuple[str | None, str | None, str | None]] = []
    for m in range(_MAX_INDEX):
        prefix = OUTPUT_MESSAGE.format(m)
        if prefix + ROLE not in attributes and prefix + TOOL_CALL_ID.format(0) not in attributes:
            break
        for n in count():
            key = prefix + TOOL_CALL_ID.format(n)
            function = prefix + TOOL_CALL_FUNCTION.format(n)
            if (key not in attributes and function not in attributes) or n >= _MAX_INDEX:
                break
            found.append(
                (
                    _text(attributes, key),
                    _text(attributes, function),
                    _text(attributes, prefix + TOOL_CALL_ARGUMENTS.format(n)),
                )
            )
    return found


def _result_calls(node: SpanNode) -> list[tuple[str | None, str, str | None]]:
    """(id, name, arguments JSON) of the tool calls of the LLMResult in an LLM span's `output.value`
    (`generations[0][0].message`, a serialised AIMessage), in issue order. The arguments are the
    provider's raw text where the message keeps it (`additional_kwargs.tool_calls`, by id), else
    LangChain's parsed `args` written back as JSON."""
    value = _json(_text(node.attributes, OUTPUT_VALUE))
    generations = value.get(GENERATIONS) if isinstance(value, dict) else None
    try:
        message = message_fields(generations[0][0]['message'])  # type: ignore[index]
    except (TypeError, IndexError, KeyError):
        return []
    if message is None or message[0] != AI_TYPE:
        return []
    fields = message[1]
    raw: dict[str, str] = {}
    extra = fields.get('additional_kwargs')
    provider_calls = extra.get(TOOL_CALLS) if isinstance(extra, dict) else None
    for call in provider_calls if isinstance(provider_calls, list) else ():
        function = call.get('function') if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(call_id := call.get('id'), str):
            arguments = function.get('arguments')
            if isinstance(arguments, str):
                raw[call_id] = arguments
    found: list[tuple[str | None, str, str | None]] = []
    calls = fields.get(TOOL_CALLS)
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict) or not isinstance(name := call.get('name'), str):
            continue
        call_id = call.get('id') if isinstance(call.get('id'), str) else None
        args = call.get('args')
        arguments = raw.get(call_id) if call_id is not None else None
        if arguments is None and isinstance(args, dict):
            arguments = json.dumps(args, ensure_ascii=False)
        found.append((call_id, name, arguments))
    return found


def llm_issued(node: SpanNode) -> list[IssuedCall]:
    """The calls an LLM span's response issued: the flattened output messages' tool calls, their ids
    (or, when none are flattened, the calls) from the LLMResult in `output.value` where they lack them."""
    flat = issued_calls(node)
    if flat and all(call_id is not None and name is not None for call_id, name, _ in flat):
        return [IssuedCall(call_id, name, arguments) for call_id, name, arguments in flat if name is not None]
    recorded = _result_calls(node)
    if not flat:
        return [IssuedCall(*call) for call in recorded]
    if [name for _, name, _ in flat] == [name for _, name, _ in recorded]:  # the same calls: ids from there
        return [
            IssuedCall(call_id or found_id, name, arguments if arguments is not None else found_arguments)
            for (call_id, name, arguments), (found_id, _, found_arguments) in zip(flat, recorded, strict=True)
            if name is not None
        ]
    return [IssuedCall(call_id, name, arguments) for call_id, name, arguments in flat if name is not None]


def _managed_call(step: SpanNode, agent: str) -> tuple[str | None, str | None] | None:
    """(id, arguments) of the call to `agent` that the step's model response issued."""
    for child in step.children:
        if _kind(child) == LLM:
            for call_id, function, arguments in issued_calls(child):
                if function == agent:
                    return call_id, arguments
    return None


def message_fields(message: object) -> tuple[str | None, Mapping[str, Any]] | None:
    """(type, fields) of a LangChain message as OpenInference serialises it: `ai`, `tool`, ... from
    Python's `{"type": ..., "data": {...}}` or the class name of a `{"lc": 1, "id": [..., class],
    "kwargs": {...}}` constructor (JavaScript, and Python's own serialisation), else `None`."""
    if not isinstance(message, dict):
        return None
    data = message.get(PY_MESSAGE_DATA)
    if isinstance(data, dict):
        kind = message.get('type')
        return (kind if isinstance(kind, str) else None), data
    fields = message.get(LC_KWARGS)
    path = message.get(LC_ID)
    if isinstance(fields, dict) and isinstance(path, list) and path and isinstance(path[-1], str):
        name = path[-1]
        if name == TOOL_MESSAGE_CLASS:
            return TOOL_TYPE, fields
        return (AI_TYPE if name in AI_MESSAGE_CLASSES else name), fields
    return None


def _last_ai_tool_calls(messages: object) -> list[Any]:
    """The tool calls of the last AI message in a messages list (what a ToolNode runs)."""
    if not isinstance(messages, list):
        return []
    for message in reversed(messages):
        found = message_fields(message)
        if found is not None and found[0] == AI_TYPE:
            calls = found[1].get(TOOL_CALLS)
            return calls if isinstance(calls, list) else []
    return []


def _answered_ids(node: SpanNode, name: str) -> set[str]:
    """The call ids the other TOOL spans of `name` under `node`'s parent answered."""
    parent = node.parent
    found: set[str] = set()
    for sibling in () if parent is None else parent.children:
        if sibling is not node and _kind(sibling) == TOOL and sibling.attributes.get(TOOL_NAME) == name:
            envelope = _envelope(sibling)
            call_id = None if envelope is None else envelope.get(TOOL_CALL_ID_KEY)
            if isinstance(call_id, str):
                found.add(call_id)
    return found


def langgraph_tool_call(node: SpanNode) -> Mapping[str, Any] | None:
    """The call (`{"name", "args", "id"}`) LangGraph's ToolNode ran as this TOOL span, read from the
    input of the ToolNode's CHAIN span (the TOOL span's parent): see the module docstring."""
    parent = node.parent
    name = node.attributes.get(TOOL_NAME)
    if parent is None or _kind(parent) != CHAIN or not isinstance(name, str):
        return None
    value = _json(_text(parent.attributes, INPUT_VALUE))
    if isinstance(value, dict) and value.get(WRAPPER_TYPE_KEY) == TOOL_CALL_WRAPPER:
        calls = [value.get(WRAPPED_TOOL_CALL)]
    elif isinstance(value, dict) and isinstance(value.get(SEND_TOOL_CALL), dict):
        calls = [value[SEND_TOOL_CALL]]
    else:
        calls = _last_ai_tool_calls(value.get(MESSAGES) if isinstance(value, dict) else value)
    named = [call for call in calls if isinstance(call, dict) and call.get('name') == name]
    if not named:
        return None
    envelope = _envelope(node)
    own = None if envelope is None else envelope.get(TOOL_CALL_ID_KEY)
    if isinstance(own, str):
        return next((call for call in named if call.get('id') == own), None)
    if len(named) > 1:
        answered = _answered_ids(node, name)
        named = [call for call in named if call.get('id') not in answered]
    return named[0] if len(named) == 1 else None


def _quoted_after(text: str, marker: str, start: int) -> str | None:
    """The single-quoted repr text after `marker` at `start` (no escapes), or `None`."""
    begin = start + len(marker)
    end = text.find("'", begin)
    if end < 0 or '\\' in text[begin:end]:
        return None
    return text[begin:end]


def llamaindex_call_id(node: SpanNode) -> str | None:
    """The `tool_id` of the `ToolCall(...)` event the parent `call_tool` step ran, for this tool."""
    parent = node.parent
    if parent is None or not _text_name(parent).endswith(LLAMAINDEX_CALL_TOOL_SUFFIX):
        return None
    text = _text(parent.attributes, INPUT_VALUE)
    name = node.attributes.get(TOOL_NAME)
    if text is None or not isinstance(name, str):
        return None
    call = text.find(LLAMAINDEX_TOOL_NAME + name + "'")
    at = text.rfind(LLAMAINDEX_TOOL_ID)  # the repr's last field
    if call < 0 or at < call:
        return None
    return _quoted_after(text, LLAMAINDEX_TOOL_ID, at)


def llamaindex_run(node: SpanNode) -> str | None:
    """The agent of a LlamaIndex workflow agent's `{Class}.run` CHAIN span, from its `init_run` step."""
    if _kind(node) != CHAIN or not _text_name(node).endswith(LLAMAINDEX_RUN_SUFFIX):
        return None
    for child in node.children:
        if _text_name(child).endswith(LLAMAINDEX_INIT_RUN_SUFFIX):
            text = _text(child.attributes, OUTPUT_VALUE)
            at = -1 if text is None else text.rfind(LLAMAINDEX_AGENT_NAME)
            if text is not None and at >= 0:
                return _quoted_after(text, LLAMAINDEX_AGENT_NAME, at) or None
            return None
    return None


def crewai_task(agent: SpanNode) -> tuple[str | None, Any] | None:
    """(the task's description, its output) of a CrewAI AGENT span, else `None`."""
    if _kind(agent) != AGENT:
        return None
    attributes = agent.attributes
    if isinstance(description := attributes.get(CREWAI_TASK_DESCRIPTION), str):  # event listener
        return description, _text(attributes, OUTPUT_VALUE)
    output = _json(_text(attributes, OUTPUT_VALUE))
    if not isinstance(output, dict) or not output.keys() >= CREWAI_TASK_OUTPUT_KEYS:
        return None
    description, structured = output['description'], output['json_dict']
    return description if isinstance(description, str) else None, structured or output['raw']


def langgraph_run(node: SpanNode) -> str | None:
    """The graph of a LangGraph CHAIN span that starts a graph run (a root, or called from a tool)."""
    if _kind(node) != CHAIN:
        return None
    parent = node.parent
    if parent is not None and _kind(parent) in (CHAIN, AGENT):
        return None  # a node or runnable inside a graph (asked first: only a graph's start is parsed)
    metadata = _json(_text(node.attributes, METADATA))
    if not isinstance(metadata, dict) or metadata.get(LS_INTEGRATION) != LANGGRAPH:
        return None
    return _text_name(node) or None


# -- arguments and results ---------------------------------------------------------------------------


def _schema_properties(node: SpanNode) -> dict[str, Any] | None:
    """The parameters a `tool.parameters` schema names (JSON Schema, or smolagents' name -> spec)."""
    schema = _json(_text(node.attributes, TOOL_PARAMETERS))
    if not isinstance(schema, dict):
        return None
    properties = schema.get('properties')
    if isinstance(properties, dict):
        return properties
    if schema and all(isinstance(spec, dict) for spec in schema.values()):
        return schema
    return None


def _unwrapped(node: SpanNode, value: dict[str, Any]) -> dict[str, Any] | str:
    """The arguments inside a kwargs wrapper, or why they cannot be named; `value` when no wrapper."""
    keys = value.keys()
    kwargs = value.get(KWARGS)
    if not isinstance(kwargs, dict) or not (keys == {KWARGS} or keys == SMOLAGENTS_WRAPPER_KEYS):
        return value
    properties = _schema_properties(node)
    if properties is not None and KWARGS in properties:
        return value  # the tool's own parameter is called `kwargs`
    if value.get('args'):
        return f'include positional arguments the trace does not name: {value["args"]!r}'
    return kwargs


def _bare_string(node: SpanNode, raw: str) -> Arguments:
    call = langgraph_tool_call(node)
    if call is not None and isinstance(args := call.get('args'), dict):
        return Arguments(args, raw, None)
    properties = _schema_properties(node)
    if properties is not None and len(properties) == 1:
        value: Any = raw
        if node.attributes.get(MIME_TYPE_INPUT) == JSON_MIME and raw.startswith('"'):
            try:
                value = load_json(raw)  # a JSON string literal: the string it spells
            except ValueError:
                value = raw
        return Arguments({next(iter(properties)): value}, raw, None)
    return Arguments(None, raw, BARE_STRING)


def tool_arguments(node: SpanNode) -> Arguments | None:
    """A TOOL span's `input.value` as arguments (see the module docstring)."""
    recorded = node.attributes.get(INPUT_VALUE)
    if recorded is None:
        return None
    if not isinstance(recorded, str):
        return Arguments(None, None, f'were recorded as {type(recorded).__name__} {recorded!r}, not as text.')
    if not recorded.lstrip().startswith('{'):
        return _bare_string(node, recorded)
    parsed, problem = parse_arguments(recorded)
    if parsed is None:
        return Arguments(None, recorded, problem)
    unwrapped = _unwrapped(node, parsed)
    if isinstance(unwrapped, str):
        return Arguments(None, recorded, unwrapped)
    return Arguments(unwrapped, recorded, None)


def _envelope(node: SpanNode) -> dict[str, Any] | None:
    """A LangChain ToolMessage's fields or a LlamaIndex ToolOutput in `output.value`, parsed."""
    value = _json(_text(node.attributes, OUTPUT_VALUE))
    if not isinstance(value, dict):
        return None
    if value.keys() == {RUN_OUTPUT}:  # LangChain.js: the run's outputs, `{"output": <ToolMessage>}`
        value = value[RUN_OUTPUT]
    message = message_fields(value)
    if message is not None and message[0] == TOOL_TYPE:
        return dict(message[1])
    if isinstance(value, dict) and 'blocks' in value and 'raw_output' in value and 'tool_name' in value:
        return value
    return None


def _text_blocks(blocks: object) -> str | None:
    """The text of a non-empty list of `{"type": "text", "text": ...}` blocks, else `None`."""
    if not isinstance(blocks, list) or not blocks:
        return None
    texts = [b.get('text') if isinstance(b, dict) else None for b in blocks]
    if all(isinstance(text, str) for text in texts):
        return ''.join(t for t in texts if isinstance(t, str))
    return None


def _envelope_text(envelope: Mapping[str, Any]) -> str | None:
    content = envelope.get(CONTENT)
    if isinstance(content, str):
        return content
    text = _text_blocks(content)
    if text is None:
        text = _text_blocks(envelope.get('blocks'))
    if text is not None:
        return text
    raw = envelope.get('raw_output')
    return raw if isinstance(raw, str) else None


def tool_result(node: SpanNode) -> str | None:
    text = _text(node.attributes, OUTPUT_VALUE)
    if text is None:
        return None
    envelope = _envelope(node)
    unwrapped = None if envelope is None else _envelope_text(envelope)
    return text if unwrapped is None else unwrapped


# -- classification ----------------------------------------------------------------------------------


def classify_call(node: SpanNode, notes: list[str]) -> Answer:
    """A TOOL span (or a smolagents step delegating to a managed agent) as a call attempt."""
    kind = _kind(node)
    if kind == TOOL:
        name = node.attributes.get(TOOL_NAME)
        if type(name) is not str:
            notes.append(genai.non_text_tool_name(node, TOOL_NAME))
            return IGNORED
        if name == SMOLAGENTS_FINAL_ANSWER and node.name == SMOLAGENTS_FINAL_ANSWER_SPAN:
            return name, 'output'
        return name, 'failed' if node.status == 'error' else 'ok'
    if kind == CHAIN:
        run = managed_agent_run(node)
        agent = None if run is None else smolagents_run(run)
        if run is not None and agent is not None:
            return agent, 'failed' if run.status == 'error' else 'ok'
    return None


def is_model_request(node: SpanNode) -> bool:
    if _kind(node) != LLM:
        return False
    attributes = node.attributes
    return (
        node.status == 'error'
        or PROMPT_TOKENS in attributes
        or COMPLETION_TOKENS in attributes
        or OUTPUT_MESSAGE.format(0) + ROLE in attributes
    ) and not any(_kind(child) == LLM for child in node.children)


def classify_request(node: SpanNode, notes: list[str]) -> Answer:
    return MODEL_REQUEST if is_model_request(node) else None


class OpenInference(Family):
    """Spans of any OpenInference instrumentor, by `openinference.span.kind` (module docstring)."""

    name = 'openinference'
    run_spans = RunSpans(keys={SPAN_KIND: frozenset({AGENT, CHAIN})})
    markers = (SPAN_KIND,)
    content_switch = 'inputs may be hidden: OPENINFERENCE_HIDE_INPUTS or TraceConfig(hide_inputs=True) is set'
    model_spans_advice = (
        "instrument the model client too (OpenInference's instrumentor for it, e.g."
        ' openinference-instrumentation-openai or -litellm), so each model request has an LLM span'
    )

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {SPAN_KIND: classify_call}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {SPAN_KIND: classify_request}

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        kind = _kind(node)
        if kind == CHAIN:
            run = managed_agent_run(node)
            agent = None if run is None else smolagents_run(run)
            found = None if agent is None else _managed_call(node, agent)
            return None if found is None else found[0]
        if kind != TOOL:
            return None
        envelope = _envelope(node)
        call_id = None if envelope is None else envelope.get(TOOL_CALL_ID_KEY)
        if isinstance(call_id, str) and call_id:
            return call_id
        call = langgraph_tool_call(node)
        if call is not None and isinstance(ran := call.get('id'), str) and ran:
            return ran
        return llamaindex_call_id(node)

    def arguments(self, node: SpanNode) -> Arguments | None:
        kind = _kind(node)
        if kind == TOOL:
            return tool_arguments(node)
        run = managed_agent_run(node) if kind == CHAIN else None
        agent = None if run is None else smolagents_run(run)
        if agent is None:
            return None
        found = _managed_call(node, agent)
        raw = None if found is None else found[1]
        if raw is None:
            return None
        parsed, problem = parse_arguments(raw)
        return Arguments(parsed, raw, problem)

    def result(self, node: SpanNode) -> str | None:
        kind = _kind(node)
        if kind == TOOL:
            return tool_result(node)
        run = managed_agent_run(node) if kind == CHAIN else None
        if run is None:
            return None
        # The step's observation is the managed agent's report unless other calls share the step.
        alone = not any(_kind(child) == TOOL for child in node.children)
        return _text((node if alone else run).attributes, OUTPUT_VALUE)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if _kind(node) in (TOOL, CHAIN) else None

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        if not is_model_request(node):
            return None
        attributes = node.attributes
        found: dict[str, int | float] = {}
        for key, metric in (
            (PROMPT_TOKENS, genai.INPUT_TOKENS_METRIC),
            (COMPLETION_TOKENS, genai.OUTPUT_TOKENS_METRIC),
            (CACHE_READ_TOKENS, genai.CACHE_READ_TOKENS_METRIC),
            (CACHE_WRITE_TOKENS, genai.CACHE_WRITE_TOKENS_METRIC),
        ):
            if value := _int(attributes, key):
                found[metric] = value
        cost = attributes.get(COST_TOTAL)
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 and cost == cost:
            found[genai.COST_METRIC] = float(cost)
        return found

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        if not is_model_request(node):
            return None
        cost = usage.get(genai.COST_METRIC)
        return RequestFacts(
            model=_text(node.attributes, MODEL_NAME),
            operation=genai.CHAT,
            input_tokens=int(usage.get(genai.INPUT_TOKENS_METRIC, 0)),
            output_tokens=int(usage.get(genai.OUTPUT_TOKENS_METRIC, 0)),
            cache_read_tokens=int(usage.get(genai.CACHE_READ_TOKENS_METRIC, 0)),
            cache_write_tokens=int(usage.get(genai.CACHE_WRITE_TOKENS_METRIC, 0)),
            cost=None if cost is None else float(cost),
        )

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        return llm_issued(node) if _kind(node) == LLM else None

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        if _kind(node) != LLM:
            return None
        return [call.call_id for call in llm_issued(node) if call.call_id is not None]

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        if _kind(node) != LLM:
            return None
        return [(call.call_id, call.name) for call in llm_issued(node) if call.call_id is not None]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        # The ids are separate attributes: quoting them side by side gives the text to search.
        texts: list[str | None] = []
        for node in nodes:
            ids = self.issued_call_ids(node) if _kind(node) == LLM else None
            texts.append(' '.join(f'"{i}"' for i in ids) if ids else None)
        return texts

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        ids = self.issued_call_ids(node)
        return None if ids is None else {call_id: position for position, call_id in enumerate(ids)}

    # -- runs ----------------------------------------------------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        kind = _kind(node)
        if kind == AGENT:
            attributes = node.attributes
            for key in (AGENT_NAME, GRAPH_NODE_ID):
                name = attributes.get(key)
                if isinstance(name, str) and name:
                    return name
            return smolagents_run(node)
        if kind == CHAIN:
            return langgraph_run(node) or llamaindex_run(node)
        return None

    def run_prompt(self, agent: SpanNode) -> str | None:
        if _kind(agent) is None:
            return None
        task = crewai_task(agent)
        if task is not None:
            return task[0]
        prompt = first_user_message(agent)
        if prompt is None and smolagents_run(agent) is not None:
            value = _json(_text(agent.attributes, INPUT_VALUE))
            task = value.get('task') if isinstance(value, dict) else None
            prompt = task if isinstance(task, str) else None
        return prompt

    def span_prompt(self, node: SpanNode) -> str | None:
        return first_user_message(node) if _kind(node) == LLM else None

    def run_output(self, agent: SpanNode) -> Any:
        task = crewai_task(agent)
        if task is not None:
            return task[1]
        if smolagents_run(agent) is None:
            return None
        return _text(agent.attributes, OUTPUT_VALUE)

    def response_text(self, node: SpanNode) -> str | None:
        if _kind(node) != LLM:
            return None
        return _text(node.attributes, OUTPUT_MESSAGE.format(0) + CONTENT)


def first_user_message(node: SpanNode) -> str | None:
    """The first user message's text in a span's flattened `llm.input_messages`."""
    attributes = node.attributes
    for k in range(_MAX_INDEX):
        prefix = INPUT_MESSAGE.format(k)
        role = attributes.get(prefix + ROLE)
        if role is None:
            return None
        if role == 'user' and isinstance(content := attributes.get(prefix + CONTENT), str):
            return content
    return None


FAMILY = OpenInference()
