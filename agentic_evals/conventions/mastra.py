"""Mastra (`@mastra/core` 1.x) through `@mastra/otel-exporter` or `@mastra/otel-bridge`: GenAI spans with Mastra's own.

Both packages convert every Mastra span with the same code (the exporter's `SpanConverter`): GenAI
names and keys where Mastra has them (`invoke_agent {agent}`, `execute_tool {tool}` with the
`gen_ai.tool.*` keys, a `chat {model}` span with `gen_ai.request.model` and `gen_ai.usage.*`), and
on every span `mastra.span.type`, Mastra's own span type: the family's marker. `genai` reads the
agents, the calls and the `chat` requests. What Mastra does its own way:

- **Which span is one model request.** Mastra records a generation (`model_generation`: an agent's
  whole loop of model calls), one `model_step` per model call and, from `@mastra/core` /
  `@mastra/observability` versions that pair on the `model-inference-span` feature, one
  `model_inference` per step. The converter names `chat {model}` the inference span when both
  packages have the feature (`@mastra/otel-exporter` 1.4: one request per step, with its usage), and
  the generation otherwise (`@mastra/otel-bridge` 1.5, which converts with `@mastra/otel-exporter`
  1.3: one `chat` span over all the steps, with their totals; the steps' `model_inference` spans
  carry neither model nor usage). In that second shape the generation span is read as the request
  of its first step (the GenAI rules count it: it names a model and a `chat` operation) and each
  later step as one request (its `model_inference` span, or the `model_step` span when there is
  none): one request per step, the totals counted once. A later step records no tokens, unless
  it (or a provider's instrumented span under it, then the request) has its own `gen_ai.usage.*`,
  which are then taken off the generation's.
- **The calls a response issued** are not in `gen_ai.output.messages` (that holds the text only),
  but in the step's `mastra.model_step.output` (and the bridge's `mastra.model_inference.output`):
  JSON `{"text": ..., "toolCalls": [{"toolCallId", "toolName", "args"}]}`.
- **A run's prompt and answer** are on the agent span: `mastra.agent_run.input` (the prompt as
  given: text, or JSON messages for a sub-agent) and `mastra.agent_run.output` (JSON `{"text", ...}`,
  with `object` for structured output).
- A failed call is a tool that threw (status ERROR, `error.message`, an `exception` event): Mastra
  has no retry signal. (A call whose arguments fail the tool's schema is an OK span whose result is
  `{"error": true, "message": ..., "validationErrors": ...}`, the message the model gets: the walk
  decides a call's status from its span, so it reads as a call that ran.)
- A sub-agent in an agent's `agents` is the tool `agent-{name}` with argument `prompt`; its result
  is Mastra's `{"text", "subAgentThreadId", "subAgentResourceId", ...}` object (the model is shown
  the text, through a `mapping` span).
- **`@mastra/otel-exporter` 0.3** (`@mastra/core` 0.2x) names spans its own way: `agent.{agentId}`
  (operation `agent.run`, ids only: `gen_ai.agent.id`, `agent.id`), `tool.execute {tool}`
  (`gen_ai.tool.input` / `gen_ai.tool.output`, no call id: the step's output gives it, by the
  call's place among the step's calls of its name), `chat {model}` for the generation over
  `step: N` spans (`model_step`, no inference spans), and every span's content under `input` /
  `output`. The same rules read it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode

from . import genai, messages
from .arguments import json_or_none, recorded_arguments
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
from .openinference import MODEL_NAME as OPENINFERENCE_MODEL

SPAN_TYPE = 'mastra.span.type'
"""Mastra's span type, on every span `@mastra/otel-exporter` 1.x and `@mastra/otel-bridge` 1.x write."""
AGENT_RUN = 'agent_run'
MODEL_GENERATION = 'model_generation'
MODEL_STEP = 'model_step'
MODEL_INFERENCE = 'model_inference'
"""From `@mastra/core` / `@mastra/observability` with the `model-inference-span` feature (1.7x / 1.17)."""
TOOL_CALL_TYPES = frozenset({'tool_call', 'mcp_tool_call', 'provider_tool_call'})

AGENT_INPUT = 'mastra.agent_run.input'
AGENT_OUTPUT = 'mastra.agent_run.output'
AGENT_NAME_KEYS = (genai.AGENT_NAME, 'gen_ai.agent.id', 'agent.id')
"""An agent's name: `gen_ai.agent.name` (1.x), else its id (`@mastra/otel-exporter` 0.3 records only ids)."""
AGENT_SPAN_PREFIX = 'agent.'
"""0.3's agent span name, `agent.{agentId}`."""
LEGACY_INPUT = 'input'
LEGACY_OUTPUT = 'output'
"""`@mastra/otel-exporter` 0.3 (`@mastra/core` 0.2x) writes every span's input and output under these keys."""
LEGACY_TOOL_INPUT = 'gen_ai.tool.input'
LEGACY_TOOL_OUTPUT = 'gen_ai.tool.output'
"""0.3's tool arguments and result (1.x: `gen_ai.tool.call.arguments` / `.result`)."""
STEP_OUTPUT_KEYS = ('mastra.model_step.output', LEGACY_OUTPUT)
INFERENCE_OUTPUT = 'mastra.model_inference.output'
"""Both `{"text": ..., "toolCalls": [{"toolCallId": ..., "toolName": ..., "args": {...}}]}`."""
MODEL_METADATA = 'mastra.metadata.modelMetadata'
"""On a step: JSON `{"modelId", "modelVersion", "modelProvider"}` of the model that answered it."""
TEXT = 'text'
OBJECT = 'object'
TOOL_CALLS = 'toolCalls'
TOOL_CALL_ID = 'toolCallId'
TOOL_NAME = 'toolName'
ARGS = 'args'
MODEL_ID = 'modelId'
ROLE = 'role'
CONTENT = 'content'
PART_TYPE = 'type'

_MODEL_KEYS = (genai.REQUEST_MODEL, genai.RESPONSE_MODEL, OPENINFERENCE_MODEL)


def _type(node: SpanNode | None) -> object:
    return None if node is None else node.attributes.get(SPAN_TYPE)


def _names_model(node: SpanNode) -> bool:
    """Whether a span names a model: a request of the GenAI conventions (or OpenInference) itself."""
    attributes = node.attributes
    return any(key in attributes for key in _MODEL_KEYS)


def _counted_by_genai(node: SpanNode) -> bool:
    """Whether the GenAI rules count `node` as a model request (a model and a request operation)."""
    attributes = node.attributes
    return genai.REQUEST_MODEL in attributes and attributes.get(genai.OPERATION_NAME) in genai.MODEL_REQUEST_OPERATIONS


def _steps(generation: SpanNode) -> list[SpanNode]:
    """A generation's steps, in start order."""
    return sorted((c for c in generation.children if _type(c) == MODEL_STEP), key=lambda c: c.start_timestamp)


def _step_request(step: SpanNode) -> SpanNode:
    """The span that is one step's request: its `model_inference` span, else the step itself."""
    for child in step.children:
        if _type(child) == MODEL_INFERENCE:
            return child
    return step


def _recorded_usage(request: SpanNode) -> dict[str, int | float]:
    """The usage a step's request span records, or else the spans naming a model right under it."""
    own = genai.FAMILY.usage(request)
    if own is not None:
        return own
    found: dict[str, int | float] = {}
    for child in request.children:
        if _names_model(child):
            for name, value in (genai.FAMILY.usage(child) or {}).items():
                found[name] = found.get(name, 0) + value
    return found


def _step_of(node: SpanNode) -> SpanNode | None:
    if _type(node) == MODEL_STEP:
        return node
    parent = node.parent
    return parent if _type(parent) == MODEL_STEP else None


def _first_step(generation: SpanNode) -> SpanNode | None:
    return min(
        (c for c in generation.children if _type(c) == MODEL_STEP), key=lambda c: c.start_timestamp, default=None
    )


def _summing_generation(node: SpanNode | None) -> bool:
    """Whether `node` is a generation recorded as one `chat` request with its steps under it."""
    return (
        node is not None
        and _type(node) == MODEL_GENERATION
        and _counted_by_genai(node)
        and _first_step(node) is not None
    )


def _first_step_stood_for(step: SpanNode) -> bool:
    """Whether `step` is the first step of a generation that is counted as its request."""
    generation = step.parent
    return generation is not None and _summing_generation(generation) and _first_step(generation) is step


def step_request(node: SpanNode, notes: list[str]) -> Answer:
    """A `model_inference` or `model_step` span that no GenAI rule counted: one model request, unless
    a span under it is the request (an instrumented provider's), its step has an inference span, or
    it is the first step of a generation already counted as that step's request."""
    kind = _type(node)
    if kind not in (MODEL_INFERENCE, MODEL_STEP):
        return None
    children = node.children
    if any(_names_model(c) or (kind == MODEL_STEP and _type(c) == MODEL_INFERENCE) for c in children):
        return None
    step = _step_of(node)
    if step is not None and _first_step_stood_for(step):
        return None
    return MODEL_REQUEST


def tool_call(node: SpanNode, notes: list[str]) -> Answer:
    """A Mastra tool span the GenAI rules did not claim: `@mastra/otel-exporter` 0.3 names it
    `tool.execute {tool}` (operation `tool.execute`); one without a tool name is noted."""
    if _type(node) not in TOOL_CALL_TYPES:
        return None
    name = node.attributes.get(genai.TOOL_NAME)
    if not isinstance(name, str):
        notes.append(f'span {node.name!r} skipped: a Mastra {_type(node)} span without a text {genai.TOOL_NAME}')
        return IGNORED
    return name, 'failed' if node.status == 'error' else 'ok'


_json = json_or_none


def _output_raw(node: SpanNode) -> str | None:
    """The recorded JSON of the response `node` stands for: its own output (a bridge inference span,
    a step), else its step's; a generation counted as its first step's request reads that step."""
    kind = _type(node)
    first = _first_step(node) if _summing_generation(node) else None
    if first is not None:
        node = first
        kind = MODEL_STEP
        inference = _step_request(node)
        if inference is not node and isinstance(raw := inference.attributes.get(INFERENCE_OUTPUT), str):
            return raw
    if kind == MODEL_INFERENCE:
        raw = node.attributes.get(INFERENCE_OUTPUT)
        if isinstance(raw, str):
            return raw
        step = _step_of(node)
        return None if step is None else genai.first_str(step.attributes, *STEP_OUTPUT_KEYS)
    if kind == MODEL_STEP:
        return genai.first_str(node.attributes, *STEP_OUTPUT_KEYS)
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _issued(raw: str) -> list[IssuedCall]:
    output = _json(raw)
    calls = output.get(TOOL_CALLS) if isinstance(output, dict) else None
    found: list[IssuedCall] = []
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict) or not isinstance(name := call.get(TOOL_NAME), str):
            continue
        call_id = call.get(TOOL_CALL_ID)
        arguments = json.dumps(call[ARGS], separators=(',', ':')) if ARGS in call else None
        found.append(IssuedCall(call_id if isinstance(call_id, str) else None, name, arguments))
    return found


def _message_text(content: object) -> str | None:
    """A Mastra / AI SDK message's content: text, or text parts (`{"type": "text", "text": ...}`)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p[TEXT]
            for p in content
            if isinstance(p, dict) and p.get(PART_TYPE) == TEXT and isinstance(p.get(TEXT), str)
        ]
        return '\n'.join(texts) if texts else None
    return None


def prompt_of(raw: str) -> str | None:
    """The prompt an agent span recorded: JSON messages (the first user message's text), or the text itself."""
    value = _json(raw)
    if isinstance(value, dict) and ROLE in value:
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) and ROLE in m for m in value):
        return raw  # a prompt given as text (which may happen to be valid JSON)
    for message in value:
        if message.get(ROLE) == messages.USER and (text := _message_text(message.get(CONTENT))) is not None:
            return text
    return None


class Mastra(Family):
    name = 'mastra'
    run_spans = RunSpans(keys={SPAN_TYPE: frozenset({AGENT_RUN})})
    markers = (SPAN_TYPE,)

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {SPAN_TYPE: tool_call}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {SPAN_TYPE: step_request}

    def arguments(self, node: SpanNode) -> Arguments | None:
        if _type(node) not in TOOL_CALL_TYPES:
            return None
        return recorded_arguments(node.attributes, (genai.TOOL_CALL_ARGUMENTS, LEGACY_TOOL_INPUT))

    def call_id(self, node: SpanNode) -> str | None:
        """A tool span without `gen_ai.tool.call.id` (0.3's): the id its step issued the call with,
        by its place among the step's calls of its name (the spans of those calls in start order)."""
        if _type(node) not in TOOL_CALL_TYPES or genai.TOOL_CALL_ID in node.attributes:
            return None
        step = node.parent
        name = node.attributes.get(genai.TOOL_NAME)
        if step is None or _type(step) != MODEL_STEP or not isinstance(name, str):
            return None
        raw = _output_raw(step)
        if raw is None:
            return None
        ids = [c.call_id for c in _issued(raw) if c.name == name]
        siblings = sorted(
            (c for c in step.children if _type(c) in TOOL_CALL_TYPES and c.attributes.get(genai.TOOL_NAME) == name),
            key=lambda c: c.start_timestamp,
        )
        place = next(i for i, c in enumerate(siblings) if c is node)
        return ids[place] if place < len(ids) else None

    def result(self, node: SpanNode) -> str | None:
        if _type(node) not in TOOL_CALL_TYPES:
            return None
        return genai.first_str(node.attributes, genai.TOOL_CALL_RESULT, LEGACY_TOOL_OUTPUT)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if _type(node) in TOOL_CALL_TYPES else None

    def agent_run(self, node: SpanNode) -> str | None:
        if _type(node) != AGENT_RUN:
            return None
        name = genai.first_str(node.attributes, *AGENT_NAME_KEYS)
        if name:
            return name
        span_name = node.name
        for prefix in (genai.AGENT_SPAN_PREFIX, AGENT_SPAN_PREFIX):
            if type(span_name) is str and span_name.startswith(prefix) and len(span_name) > len(prefix):
                return span_name[len(prefix) :]
        return genai.DEFAULT_AGENT_NAME

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        """A generation counted as its first step's request: its totals less what its steps record."""
        if not _summing_generation(node):
            return None
        total = dict(genai.FAMILY.usage(node) or {})
        for step in _steps(node):
            for name, value in _recorded_usage(_step_request(step)).items():
                if name in total:
                    total[name] = max(0, total[name] - value)
        return total

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        """A step request no GenAI rule counted: the model is the step's, else its generation's."""
        if _type(node) not in (MODEL_INFERENCE, MODEL_STEP) or _counted_by_genai(node):
            return None
        facts = genai.FAMILY.request_facts(node, usage)
        assert facts is not None  # the GenAI family answers for every span
        return facts._replace(model=self._step_model(node), operation=genai.CHAT)

    @staticmethod
    def _step_model(node: SpanNode) -> str | None:
        step = _step_of(node)
        metadata = _json(step.attributes.get(MODEL_METADATA)) if step is not None else None
        if isinstance(metadata, dict) and isinstance(model := metadata.get(MODEL_ID), str):
            return model
        generation = step.parent if step is not None else None
        if generation is not None and _type(generation) == MODEL_GENERATION:
            return genai.first_str(generation.attributes, genai.RESPONSE_MODEL, genai.REQUEST_MODEL)
        return None

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        raw = _output_raw(node)
        return None if raw is None else _issued(raw)

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        found = self.issued(node)
        return None if found is None else [c.call_id for c in found if c.call_id is not None]

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        found = self.issued(node)
        return None if found is None else [(c.call_id, c.name) for c in found if c.call_id is not None]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        return [_output_raw(node) for node in nodes]

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        ids = self.issued_call_ids(node)
        return None if ids is None else {call_id: position for position, call_id in enumerate(ids)}

    def run_prompt(self, agent: SpanNode) -> str | None:
        raw = genai.first_str(agent.attributes, AGENT_INPUT, LEGACY_INPUT) if _type(agent) == AGENT_RUN else None
        return None if raw is None else prompt_of(raw)

    def run_output(self, agent: SpanNode) -> Any:
        raw = genai.first_str(agent.attributes, AGENT_OUTPUT, LEGACY_OUTPUT) if _type(agent) == AGENT_RUN else None
        output = _json(raw)
        if not isinstance(output, dict):
            return None
        if output.get(OBJECT) is not None:
            return output[OBJECT]
        text = output.get(TEXT)
        return text if isinstance(text, str) and text else None

    def response_text(self, node: SpanNode) -> str | None:
        """The text of a step request that records no GenAI output messages (the bridge's)."""
        if genai.OUTPUT_MESSAGES in node.attributes and not _summing_generation(node):
            return None
        output = _json(_output_raw(node))
        text = output.get(TEXT) if isinstance(output, dict) else None
        return text if isinstance(text, str) and text else None


FAMILY = Mastra()
