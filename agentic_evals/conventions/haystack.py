"""Haystack (deepset): the spans its own tracer emits through `OpenTelemetryTracer`.

Haystack names its spans after what runs (`haystack.pipeline.run`, `haystack.component.run`,
`haystack.agent.run`, ...) and records everything else as `haystack.*` tags. Content (inputs,
outputs, messages, arguments, results; not a pipeline's input data) is recorded only with content tracing on
(`HAYSTACK_CONTENT_TRACING_ENABLED=true` or `tracing.tracer.is_content_tracing_enabled = True`),
as JSON text of Haystack's own serialization (`ChatMessage.to_dict()`: `role`, `meta`, `content`
parts `{"text": ...}`, `{"tool_call": {"tool_name", "arguments", "id"}}`,
`{"tool_call_result": {"result", "origin", "error"}}`). Two layouts, both read:

- **haystack-ai 3.x** (measured on 3.4.1, tracer from `opentelemetry-haystack` 2.0.0): an Agent
  run is `haystack.agent.run` > `haystack.agent.step` (one per step) > `haystack.agent.step.llm`
  (the model request) and one `haystack.agent.step.tool` per call (`haystack.tool.name`,
  `haystack.tool.error=True` on a failure, which leaves the span's status unset; content:
  `haystack.agent.step.tool.input` the arguments, `.output` the result or `{"error": text}`).
  The tool span records no call id: the issuing `step.llm` span's reply lists the calls with
  their ids. Without content the `step.llm` span holds no attribute at all, so the walks (which
  look at spans holding a marker key) cannot see it: its `haystack.agent.step` parent stands in
  for it as the model request (model and tokens not recorded).
- **haystack-ai 2.x** (measured on 2.31.0, `haystack.tracing.OpenTelemetryTracer`): the Agent
  runs its chat generator and its `ToolInvoker` as `haystack.component.run` spans (named
  `chat_generator` / `tool_invoker`, typed by class). **One ToolInvoker span runs every call of a
  model response**: a span holding one call is that call (name, arguments and id from the input
  message's `tool_call`, result and error from the output's `tool_call_result`); a span holding
  several is read as one call per `tool_call`, each a `Part` span of its own holding that call and
  its result (matched by the result's `origin` id); they share the span's times, so the issuing
  reply orders them. Without content nothing says which tools ran: noted.

Model requests are chat generator spans (`haystack.agent.step.llm`, `haystack.chat_generator.run`,
or a `haystack.component.run` whose `haystack.component.type` ends in `Generator`): model and
tokens from the replies' `meta` (`model`, `usage.prompt_tokens` / `completion_tokens`) in the
output content. An agent run is `haystack.agent.run`, named by the pipeline component that runs it
(`haystack.component.name` of its `haystack.component.run` parent), by the tool that runs it
(an Agent wrapped in a `ComponentTool`), else `agent`: the span itself records no name (an `Agent`
component span with no `haystack.agent.run` inside is the run). Its
prompt is the first user message of `haystack.agent.input`, else of a pipeline's
`haystack.pipeline.input_data` (recorded with content tracing off too), its answer the text of the
last assistant message of `haystack.agent.output` (content only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
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
    Part,
    RequestFacts,
    RunSpans,
)

# Span names (haystack-ai 2.x and 3.x unless said).
PIPELINE_RUN: Final = 'haystack.pipeline.run'
COMPONENT_RUN: Final = 'haystack.component.run'
AGENT_RUN: Final = 'haystack.agent.run'
AGENT_STEP: Final = 'haystack.agent.step'
"""3.x: one step of an Agent (a model request, then the calls it issued); tag `haystack.agent.step`."""
STEP_LLM: Final = 'haystack.agent.step.llm'
"""3.x: the step's model request."""
STEP_TOOL: Final = 'haystack.agent.step.tool'
"""3.x: one tool call."""
CHAT_GENERATOR_RUN: Final = 'haystack.chat_generator.run'
"""3.x: a chat generator called inside another component (rankers, extractors, evaluators)."""

# Tags.
COMPONENT_NAME = 'haystack.component.name'
COMPONENT_TYPE = 'haystack.component.type'
COMPONENT_INPUT = 'haystack.component.input'
COMPONENT_OUTPUT = 'haystack.component.output'
AGENT_MAX_STEPS = 'haystack.agent.max_steps'
AGENT_INPUT = 'haystack.agent.input'
AGENT_OUTPUT = 'haystack.agent.output'
STEP_NUMBER = AGENT_STEP
STEP_LLM_INPUT = 'haystack.agent.step.llm.input'
STEP_LLM_OUTPUT = 'haystack.agent.step.llm.output'
TOOL_NAME = 'haystack.tool.name'
TOOL_ERROR = 'haystack.tool.error'
TOOL_INPUT = 'haystack.agent.step.tool.input'
TOOL_OUTPUT = 'haystack.agent.step.tool.output'
PIPELINE_MAX_RUNS = 'haystack.pipeline.max_runs_per_component'
PIPELINE_INPUT = 'haystack.pipeline.input_data'
"""The pipeline's inputs by component: a plain tag, recorded with content tracing off too."""

TOOL_INVOKER = 'ToolInvoker'
"""2.x: the component class that runs a response's calls (the Agent names it `tool_invoker`)."""
GENERATOR_SUFFIX = 'Generator'
AGENT_TYPE = 'Agent'
"""Haystack's generator components are named `...Generator` / `...ChatGenerator`."""

# ChatMessage serialization (`ChatMessage.to_dict()`).
ROLE = 'role'
CONTENT = 'content'
META = 'meta'
TEXT = 'text'
TOOL_CALL = 'tool_call'
TOOL_CALL_RESULT = 'tool_call_result'
REPLIES = 'replies'
MESSAGES = 'messages'
LAST_MESSAGE = 'last_message'
TOOL_MESSAGES = 'tool_messages'
USER = 'user'
ASSISTANT = 'assistant'
USAGE = 'usage'
MODEL = 'model'
INPUT_TOKEN_KEYS = ('prompt_tokens', 'input_tokens')
OUTPUT_TOKEN_KEYS = ('completion_tokens', 'output_tokens')
CACHE_READ_KEYS = ('cache_read_input_tokens',)
CACHE_WRITE_KEYS = ('cache_creation_input_tokens',)

DEFAULT_AGENT = 'agent'


def _text(attributes: Mapping[str, AttributeValue], key: str) -> str | None:
    value = attributes.get(key)
    return value if isinstance(value, str) else None


@lru_cache(maxsize=64)
def _json(text: str) -> Any:
    """`text` parsed when it is a JSON object or list, else `None` (cached: one span's content is
    asked several questions, and the same messages are recorded on several spans)."""
    if text[:1] not in ('{', '['):
        return None
    try:
        return load_json(text)
    except ValueError:
        return None


def _content(node: SpanNode, key: str) -> Any:
    text = _text(node.attributes, key)
    return None if text is None else _json(text)


def _dicts(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def field(message: Mapping[str, Any], key: str) -> Any:
    """A serialized `ChatMessage`'s field: `role`, or `_role` as haystack-ai before 2.10 wrote it."""
    value = message.get(key)
    return message.get('_' + key) if value is None else value


def _parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _dicts(field(message, CONTENT))


def message_text(message: Mapping[str, Any]) -> str | None:
    """The text parts of a serialized `ChatMessage`, joined by newlines (a legacy text content as is)."""
    content = field(message, CONTENT)
    if isinstance(content, str):
        return content
    texts = [part[TEXT] for part in _parts(message) if isinstance(part.get(TEXT), str)]
    return '\n'.join(texts) if texts else None


def _messages(value: object, key: str = MESSAGES) -> list[dict[str, Any]]:
    return _dicts(value.get(key)) if isinstance(value, dict) else []


def _tool_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `tool_call` parts of `messages`, in order."""
    return [call for m in messages for part in _parts(m) if isinstance(call := part.get(TOOL_CALL), dict)]


def _tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for m in messages for part in _parts(m) if isinstance(r := part.get(TOOL_CALL_RESULT), dict)]


def _name(node: SpanNode) -> str:
    name = node.name
    return name if isinstance(name, str) else ''


# -- model requests ------------------------------------------------------------------------------


def is_generator(node: SpanNode) -> bool:
    """A chat generator's span: `step.llm`, `chat_generator.run`, or a generator component's run."""
    name = _name(node)
    if name in (STEP_LLM, CHAT_GENERATOR_RUN):
        return True
    kind = node.attributes.get(COMPONENT_TYPE)
    return name == COMPONENT_RUN and isinstance(kind, str) and kind.endswith(GENERATOR_SUFFIX)


def _output_key(node: SpanNode) -> str:
    return STEP_LLM_OUTPUT if _name(node) == STEP_LLM else COMPONENT_OUTPUT


def _input_key(node: SpanNode) -> str:
    return STEP_LLM_INPUT if _name(node) == STEP_LLM else COMPONENT_INPUT


def replies(node: SpanNode) -> list[dict[str, Any]]:
    """The replies a generator span recorded (content tracing on), else none."""
    return _messages(_content(node, _output_key(node)), REPLIES)


def _silent_llm_child(step: SpanNode) -> bool:
    """Whether a 3.x step's model request span holds no attribute (content tracing off)."""
    return any(_name(child) == STEP_LLM and not child.attributes for child in step.children)


def classify_request(node: SpanNode, notes: list[str]) -> Answer:
    if is_generator(node):
        return MODEL_REQUEST
    if _name(node) == AGENT_STEP and _silent_llm_child(node):
        return MODEL_REQUEST  # the step stands in for its request, which the walks cannot see
    return None


def _count(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


def _usage(node: SpanNode) -> tuple[str | None, dict[str, int]]:
    """(model, token counts) from the first reply whose `meta` records them."""
    model: str | None = None
    for reply in replies(node):
        meta = field(reply, META)
        if not isinstance(meta, dict):
            continue
        if model is None and isinstance(meta.get(MODEL), str):
            model = meta[MODEL]
        usage = meta.get(USAGE)
        if isinstance(usage, dict):
            details = usage.get('prompt_tokens_details')
            cached = _count(details, ('cached_tokens',)) if isinstance(details, dict) else 0
            counts = {
                genai.INPUT_TOKENS_METRIC: _count(usage, INPUT_TOKEN_KEYS),
                genai.OUTPUT_TOKENS_METRIC: _count(usage, OUTPUT_TOKEN_KEYS),
                genai.CACHE_READ_TOKENS_METRIC: cached or _count(usage, CACHE_READ_KEYS),
                genai.CACHE_WRITE_TOKENS_METRIC: _count(usage, CACHE_WRITE_KEYS),
            }
            return model, {metric: value for metric, value in counts.items() if value}
    return model, {}


def _is_request(node: SpanNode) -> bool:
    return is_generator(node) or (_name(node) == AGENT_STEP and _silent_llm_child(node))


# -- tool calls ----------------------------------------------------------------------------------


def is_tool_invoker(node: SpanNode) -> bool:
    """A 2.x `ToolInvoker` component span: every call of one model response."""
    return _name(node) == COMPONENT_RUN and node.attributes.get(COMPONENT_TYPE) == TOOL_INVOKER


def invoker_calls(node: SpanNode) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the `tool_call`s given, the `tool_call_result`s returned) of a ToolInvoker span."""
    calls = _tool_calls(_messages(_content(node, COMPONENT_INPUT)))
    results = _tool_results(_messages(_content(node, COMPONENT_OUTPUT), TOOL_MESSAGES))
    return calls, results


def _single_call(node: SpanNode) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The one call a ToolInvoker span ran, with its result when recorded; `None` unless exactly one."""
    if not is_tool_invoker(node):
        return None
    calls, results = invoker_calls(node)
    if len(calls) != 1:
        return None
    return calls[0], results[0] if len(results) == 1 else None


def classify_call(node: SpanNode, notes: list[str]) -> Answer:
    """A 3.x `haystack.agent.step.tool` span, or a 2.x ToolInvoker span that ran one call."""
    name = _name(node)
    attributes = node.attributes
    if name == STEP_TOOL:
        tool = attributes.get(TOOL_NAME)
        if type(tool) is not str:
            notes.append(genai.non_text_tool_name(node, TOOL_NAME))
            return IGNORED
        failed = attributes.get(TOOL_ERROR) is True or node.status == 'error'
        return tool, 'failed' if failed else 'ok'
    if not is_tool_invoker(node):
        return None
    calls, results = invoker_calls(node)
    if not calls:
        recorded = attributes.get(COMPONENT_INPUT)
        why = (
            'it records which tools it ran only with content tracing on (HAYSTACK_CONTENT_TRACING_ENABLED=true)'
            if recorded is None
            else 'its input names no tool call'
            if isinstance(recorded, str) and _json(recorded) is not None
            else 'its input is not JSON (Haystack records the Python repr of an input it cannot serialize)'
        )
        notes.append(f'span {name!r} ({TOOL_INVOKER} {attributes.get(COMPONENT_NAME)!r}) skipped: {why}')
        return IGNORED
    if len(calls) > 1:
        parts: list[Part] = []
        for part in invoker_parts(node, calls, results):
            answer = classify_call(part, notes)
            if type(answer) is tuple:
                parts.append((part, *answer))
        return parts
    tool = calls[0].get('tool_name')
    if type(tool) is not str:
        notes.append(f'span {name!r} skipped: its tool_call names no tool ({tool!r})')
        return IGNORED
    failed = node.status == 'error' or any(result.get('error') is True for result in results)
    return tool, 'failed' if failed else 'ok'


def invoker_parts(node: SpanNode, calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[SpanNode]:
    """A ToolInvoker span that ran several calls, as one span per call (a `Part`): a child of it with
    its times, its ids and tags, and only that call's `tool_call` in its input and its
    `tool_call_result` (by the origin's id, else by place when every call has one) in its output.

    The span's status says only that one of them failed: a part's own result says which.
    """
    by_id = {origin.get('id'): result for result in results if isinstance(origin := result.get('origin'), dict)}
    placed = len(results) == len(calls)
    parts: list[SpanNode] = []
    for place, call in enumerate(calls):
        result = by_id.get(call.get('id')) if call.get('id') is not None else None
        if result is None and placed:
            result = results[place]
        attributes = {
            key: value for key, value in node.attributes.items() if key not in (COMPONENT_INPUT, COMPONENT_OUTPUT)
        }
        attributes[COMPONENT_INPUT] = json.dumps({MESSAGES: [{'role': ASSISTANT, CONTENT: [{TOOL_CALL: call}]}]})
        if result is not None:
            attributes[COMPONENT_OUTPUT] = json.dumps(
                {TOOL_MESSAGES: [{'role': 'tool', CONTENT: [{TOOL_CALL_RESULT: result}]}]}
            )
        status = node.status if result is None else 'error' if result.get('error') is True else 'ok'
        part = SpanNode(
            name=node.name,
            trace_id=node.trace_id,
            span_id=node.span_id,
            parent_span_id=node.span_id,
            start_timestamp=node.start_timestamp,
            end_timestamp=node.end_timestamp,
            attributes=attributes,
            status=status,
        )
        part.parent = node  # not among its children: the tree is the trace as recorded
        parts.append(part)
    return parts


def _as_text(value: object) -> str | None:
    """A recorded value as text: text as is, anything else as JSON."""
    if isinstance(value, str) or value is None:
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


# -- agent runs ----------------------------------------------------------------------------------


def agent_name(node: SpanNode) -> str:
    """An Agent run's name: the pipeline component running it, else the tool running it, else `agent`."""
    parent = node.parent
    if parent is None:
        return DEFAULT_AGENT
    if is_tool_invoker(parent):  # 2.x: an Agent in a ComponentTool, named when it is its invoker's one call
        single = _single_call(parent)
        name = None if single is None else single[0].get('tool_name')
    elif _name(parent) == STEP_TOOL:  # 3.x: an Agent in a ComponentTool
        name = parent.attributes.get(TOOL_NAME)
    else:
        name = parent.attributes.get(COMPONENT_NAME) if _name(parent) == COMPONENT_RUN else None
    return name if isinstance(name, str) and name else DEFAULT_AGENT


def _is_agent_component_run(node: SpanNode) -> bool:
    """An `Agent` component's span with no `haystack.agent.run` inside (a version that opened none): the run."""
    return (
        _name(node) == COMPONENT_RUN
        and node.attributes.get(COMPONENT_TYPE) == AGENT_TYPE
        and not any(_name(child) == AGENT_RUN for child in node.children)
    )


def _run_key(agent: SpanNode, run_key: str, component_key: str) -> str | None:
    """Where an agent-run span records its input or output (`None`: not an agent run of this family)."""
    if _name(agent) == AGENT_RUN:
        return run_key
    return component_key if _is_agent_component_run(agent) else None


def _first_user_text(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        if field(message, ROLE) == USER and (text := message_text(message)) is not None:
            return text
    return None


def _answer(output: object) -> str | None:
    """The text of the last message of an Agent's output (`last_message`, else the last assistant
    message of `messages` that has text)."""
    if not isinstance(output, dict):
        return None
    last = output.get(LAST_MESSAGE)
    if isinstance(last, dict) and (text := message_text(last)) is not None:
        return text
    for message in reversed(_messages(output)):
        if field(message, ROLE) == ASSISTANT and (text := message_text(message)) is not None:
            return text
    return None


class Haystack(Family):
    """Spans of Haystack's own tracer (module docstring)."""

    name = 'haystack'
    run_spans = RunSpans(names=frozenset({AGENT_RUN, COMPONENT_RUN}))
    content_switch = 'content tracing is off: HAYSTACK_CONTENT_TRACING_ENABLED=true turns it on'
    markers = (COMPONENT_NAME, COMPONENT_TYPE, TOOL_NAME, AGENT_MAX_STEPS, PIPELINE_MAX_RUNS, STEP_NUMBER)
    marker_spans = frozenset({PIPELINE_RUN, COMPONENT_RUN, AGENT_RUN, AGENT_STEP, STEP_LLM, STEP_TOOL})

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {TOOL_NAME: classify_call, COMPONENT_TYPE: classify_call}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {COMPONENT_TYPE: classify_request, STEP_LLM_INPUT: classify_request, STEP_NUMBER: classify_request}

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        single = _single_call(node)
        call_id = None if single is None else single[0].get('id')
        return call_id if isinstance(call_id, str) else None

    def arguments(self, node: SpanNode) -> Arguments | None:
        if _name(node) == STEP_TOOL:
            raw = node.attributes.get(TOOL_INPUT)
            if raw is None:
                return None
            if not isinstance(raw, str):
                return Arguments(None, None, f'were recorded as {type(raw).__name__} {raw!r}, not as JSON text.')
            parsed, problem = parse_arguments(raw)
            return Arguments(parsed, raw, problem)
        single = _single_call(node)
        if single is None:
            return None
        arguments = single[0].get('arguments')
        if isinstance(arguments, dict):
            return Arguments(arguments, _as_text(arguments), None)
        if isinstance(arguments, str):  # a model's unparsable arguments, kept as text
            parsed, problem = parse_arguments(arguments)
            return Arguments(parsed, arguments, problem)
        return None

    def result(self, node: SpanNode) -> str | None:
        if _name(node) == STEP_TOOL:
            raw = _text(node.attributes, TOOL_OUTPUT)
            if raw is not None and node.attributes.get(TOOL_ERROR) is True:
                value = _json(raw)
                if isinstance(value, dict) and isinstance(error := value.get('error'), str):
                    return error
            return raw
        single = _single_call(node)
        result = None if single is None or single[1] is None else single[1].get('result')
        return _as_text(result)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        # Haystack's tool invoker turns what a tool raised into an error result for the model.
        return 'raised' if _name(node) == STEP_TOOL or is_tool_invoker(node) else None

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        if not _is_request(node):
            return None
        counts: dict[str, int | float] = {}
        counts.update(_usage(node)[1])
        return counts

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        if not _is_request(node):
            return None
        return RequestFacts(
            model=_usage(node)[0],
            operation=genai.CHAT,
            input_tokens=int(usage.get(genai.INPUT_TOKENS_METRIC, 0)),
            output_tokens=int(usage.get(genai.OUTPUT_TOKENS_METRIC, 0)),
            cache_read_tokens=int(usage.get(genai.CACHE_READ_TOKENS_METRIC, 0)),
            cache_write_tokens=int(usage.get(genai.CACHE_WRITE_TOKENS_METRIC, 0)),
            cost=None,
        )

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        if not is_generator(node) or _output_key(node) not in node.attributes:
            return None
        found: list[IssuedCall] = []
        for call in _tool_calls(replies(node)):
            name = call.get('tool_name')
            if not isinstance(name, str):
                continue
            call_id = call.get('id')
            arguments = call.get('arguments')
            raw = arguments if isinstance(arguments, str) else None if arguments is None else _as_text(arguments)
            found.append(IssuedCall(call_id if isinstance(call_id, str) else None, name, raw))
        return found

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        issued = self.issued(node)
        return None if issued is None else [c.call_id for c in issued if c.call_id is not None]

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        issued = self.issued(node)
        return None if issued is None else [(c.call_id, c.name) for c in issued if c.call_id is not None]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        # The recorded replies hold each issued id quoted (`"id": "call_1"`).
        return [_text(node.attributes, _output_key(node)) if is_generator(node) else None for node in nodes]

    # -- runs ----------------------------------------------------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        name = _name(node)
        if name == AGENT_RUN:
            return agent_name(node)
        if _is_agent_component_run(node):
            component = node.attributes.get(COMPONENT_NAME)
            return component if isinstance(component, str) and component else DEFAULT_AGENT
        return None

    def run_prompt(self, agent: SpanNode) -> str | None:
        key = _run_key(agent, AGENT_INPUT, COMPONENT_INPUT)
        return None if key is None else _first_user_text(_messages(_content(agent, key)))

    def span_prompt(self, node: SpanNode) -> str | None:
        if _name(node) == PIPELINE_RUN:
            inputs = _content(node, PIPELINE_INPUT)
            for component in inputs.values() if isinstance(inputs, dict) else ():
                text = _first_user_text(_messages(component))
                if text is not None:
                    return text
            return None
        if not is_generator(node):
            return None
        return _first_user_text(_messages(_content(node, _input_key(node))))

    def run_output(self, agent: SpanNode) -> Any:
        key = _run_key(agent, AGENT_OUTPUT, COMPONENT_OUTPUT)
        return None if key is None else _answer(_content(agent, key))

    def response_text(self, node: SpanNode) -> str | None:
        if not is_generator(node):
            return None
        for reply in reversed(replies(node)):
            text = message_text(reply)
            if text is not None:
                return text
        return None


FAMILY = Haystack()
