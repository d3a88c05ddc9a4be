"""OpenTelemetry GenAI semantic conventions (development status), shared by most frameworks.

pydantic-ai (instrumentation version 3+), Google ADK and Strands name their spans and attributes
after these conventions, so this family reads any framework that follows them. Families of
frameworks that add their own attributes (`pydantic_ai`, `google_adk`) come before it in the
registry and answer for what they add.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode

from . import messages
from .arguments import recorded_arguments
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
    RequestSpans,
    RunSpans,
    ToolSpans,
)

OPERATION_NAME = 'gen_ai.operation.name'
INVOKE_AGENT = 'invoke_agent'
CREATE_AGENT = 'create_agent'
"""Building an agent object, not running it: AutoGen 0.7 wraps every agent's constructor in a
`create_agent <name>` span with `gen_ai.agent.name`, outside any run (a trace of its own)."""
CHAT = 'chat'
# Operations that are one request to a model: `chat` (pydantic-ai, Strands), `generate_content`
# (Google ADK), `text_completion` (completion APIs).
MODEL_REQUEST_OPERATIONS = frozenset({CHAT, 'generate_content', 'text_completion'})

TOOL_NAME = 'gen_ai.tool.name'
TOOL_CALL_ID = 'gen_ai.tool.call.id'
TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments'
TOOL_CALL_RESULT = 'gen_ai.tool.call.result'
EXECUTE_TOOL = 'execute_tool'
TOOL_SPAN_PREFIX = EXECUTE_TOOL + ' '
TOOL_TYPE = 'gen_ai.tool.type'

AGENT_NAME = 'gen_ai.agent.name'
AGENT_SPAN = INVOKE_AGENT
AGENT_SPAN_PREFIX = AGENT_SPAN + ' '
DEFAULT_AGENT_NAME = 'agent'

REQUEST_MODEL = 'gen_ai.request.model'
PROVIDER_NAME = 'gen_ai.provider.name'
RESPONSE_MODEL = 'gen_ai.response.model'
INPUT_MESSAGES = 'gen_ai.input.messages'
OUTPUT_MESSAGES = 'gen_ai.output.messages'
INFERENCE_DETAILS_EVENT = 'gen_ai.client.inference.operation.details'

USAGE_PREFIX = 'gen_ai.usage.'
"""`gen_ai.usage.input_tokens` is pydantic-evals' metric `input_tokens`, and so on for every key."""
USAGE_DETAILS_PREFIX = 'gen_ai.usage.details.'
"""pydantic-ai's provider-specific counts: `gen_ai.usage.details.X` is the metric `X`."""
COST = 'operation.cost'
"""Not in the conventions: the USD cost pydantic-ai (through Logfire's pricing) sets on model spans,
which pydantic-evals sums as the `cost` metric."""
COST_METRIC = 'cost'
INPUT_TOKENS_METRIC = 'input_tokens'
OUTPUT_TOKENS_METRIC = 'output_tokens'
CACHE_READ_TOKENS_METRIC = 'cache_read.input_tokens'
CACHE_WRITE_TOKENS_METRIC = 'cache_creation.input_tokens'


def first_str(attributes: Mapping[str, AttributeValue], *keys: str) -> str | None:
    """The first of `keys` whose value is text."""
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str):
            return value
    return None


def non_text_tool_name(node: SpanNode, key: str) -> str:
    """Why a span that looked like a tool call was skipped: its tool name is not text."""
    name = node.attributes.get(key)
    return f'span {node.name!r} skipped: {key} is {type(name).__name__} {name!r}, not a string'


def _finite(value: float) -> bool:
    """Whether a number can be counted: NaN, infinities and ints too big for a float are not."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def is_side_span(node: SpanNode) -> bool:
    """A span recorded beside a run, not in it: building an agent object (`create_agent`), which
    AutoGen and OpenLIT write as a trace of its own whenever an agent is made."""
    return node.attributes.get(OPERATION_NAME) == CREATE_AGENT


def is_agent_span(node: SpanNode) -> bool:
    """An `invoke_agent` span or operation; a span whose operation builds an agent never is one."""
    operation = node.attributes.get(OPERATION_NAME)
    if operation == CREATE_AGENT:
        return False
    name = node.name
    if type(name) is str and (name == AGENT_SPAN or name.startswith(AGENT_SPAN_PREFIX)):
        return True
    return operation == INVOKE_AGENT


def agent_name(node: SpanNode, *keys: str) -> str:
    """The first non-empty text of `keys`, else the name after `invoke_agent `, else `'agent'`."""
    for key in keys:
        value = node.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    name = node.name
    return (
        name[len(AGENT_SPAN_PREFIX) :]
        if type(name) is str and name.startswith(AGENT_SPAN_PREFIX)
        else DEFAULT_AGENT_NAME
    )


def operation_tool_call(node: SpanNode, notes: list[str]) -> Answer:
    """A tool span not named `execute_tool …` whose operation says it is one.

    OpenLLMetry names tool spans `{tool}.tool` and LangSmith after the tool; both set
    `gen_ai.operation.name=execute_tool` and `gen_ai.tool.name`, which is what the conventions ask.
    """
    attributes = node.attributes
    if attributes.get(OPERATION_NAME) != EXECUTE_TOOL:
        return None
    name = attributes[TOOL_NAME]
    if type(name) is not str:
        notes.append(non_text_tool_name(node, TOOL_NAME))
        return IGNORED
    return name, 'failed' if node.status == 'error' else 'ok'


def unlabelled_request(node: SpanNode, notes: list[str]) -> Answer:
    """A span naming a model that the plain rule (a request model and a request operation, no tool
    name) did not take: one model request, unless a child names a model too.

    logfire's openai-agents spans (`Chat completion with ...`) and ADK's `call_llm` carry the model
    and the tokens without `gen_ai.operation.name`; OpenLLMetry's Responses spans name only the
    response model; OpenLIT's `chat` spans that issued calls also carry the calls' `gen_ai.tool.name`
    (a `chat` operation is never a tool call). ADK's schema v1 wraps each request's
    `generate_content` span in a `call_llm` with the same tokens: the innermost span is the request,
    so no request is counted twice.
    """
    attributes = node.attributes
    operation = attributes.get(OPERATION_NAME)
    if operation is None and TOOL_NAME in attributes:
        return None
    if operation is not None and operation not in MODEL_REQUEST_OPERATIONS:
        return None
    for child in node.children_by_id.values():
        if REQUEST_MODEL in child.attributes or RESPONSE_MODEL in child.attributes:
            return None
    return MODEL_REQUEST


def failure_stage_from_result(result: str | None) -> FailureStage:
    """The stage of a failed attempt no family says more about.

    The conventions record only that an attempt failed. A result on a failed attempt means the tool
    answered the model anyway: pydantic-ai before 2.60 records `ModelRetry` that way, and nothing
    else tells a retry from a raise there. (ADK records its error callback's dict as the result: a
    family for ADK must answer `raised` for ADK's failed calls before this applies.)
    """
    return 'retry' if result is not None else 'raised'


class GenAI(Family):
    """Spans named and attributed after the GenAI conventions.

    A tool call is an `execute_tool …` span with a text `gen_ai.tool.name`; a model request is a
    span with `gen_ai.request.model` and a model-request operation (and no tool name); an agent run
    is an `invoke_agent` span or operation.
    """

    name = 'otel-genai'
    run_spans = RunSpans(
        keys={OPERATION_NAME: frozenset({INVOKE_AGENT})}, names=frozenset({AGENT_SPAN}), prefixes=(AGENT_SPAN_PREFIX,)
    )
    content_switch = (
        'content capture may be off: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (Google ADK: SPAN_ONLY)'
        ' turns it on'
    )
    model_spans_advice = (
        'instrument the model client too (e.g. opentelemetry-instrumentation-openai-v2 for the OpenAI client),'
        ' so each model request has a span'
    )
    markers = (OPERATION_NAME, TOOL_NAME, REQUEST_MODEL, RESPONSE_MODEL, AGENT_NAME)
    tool_spans = ToolSpans(TOOL_NAME, span_prefixes=(TOOL_SPAN_PREFIX,))
    # With `gen_ai_latest_experimental`, instrumentations may record a request's messages in an event
    # instead of span attributes (Strands does): read as if they were the span's own.
    events: ClassVar[Mapping[str, Mapping[str, str]]] = {
        INFERENCE_DETAILS_EVENT: {INPUT_MESSAGES: INPUT_MESSAGES, OUTPUT_MESSAGES: OUTPUT_MESSAGES}
    }
    request_spans = RequestSpans(REQUEST_MODEL, OPERATION_NAME, MODEL_REQUEST_OPERATIONS, excluded_key=TOOL_NAME)

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {TOOL_NAME: operation_tool_call}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {REQUEST_MODEL: unlabelled_request, RESPONSE_MODEL: unlabelled_request}

    def call_id(self, node: SpanNode) -> str | None:
        value = node.attributes.get(TOOL_CALL_ID)
        return value if isinstance(value, str) else None

    def arguments(self, node: SpanNode) -> Arguments | None:
        return recorded_arguments(node.attributes, (TOOL_CALL_ARGUMENTS,))

    def result(self, node: SpanNode) -> str | None:
        return first_str(node.attributes, TOOL_CALL_RESULT)

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        found: dict[str, int | float] = {}
        for key, value in node.attributes.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not _finite(value):
                continue
            if key == COST:
                name = COST_METRIC
            elif key.startswith(USAGE_DETAILS_PREFIX):
                name = key[len(USAGE_DETAILS_PREFIX) :]
            elif key.startswith(USAGE_PREFIX):
                name = key[len(USAGE_PREFIX) :]
            else:
                continue
            found[name] = found.get(name, 0) + value
        return found or None

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        operation = node.attributes.get(OPERATION_NAME)
        cost = usage.get(COST_METRIC)
        return RequestFacts(
            model=first_str(node.attributes, RESPONSE_MODEL, REQUEST_MODEL),
            operation=operation if isinstance(operation, str) else CHAT,
            # Zero-valued token attributes are omitted by pydantic-ai, so absence means 0.
            input_tokens=int(usage.get(INPUT_TOKENS_METRIC, 0)),
            output_tokens=int(usage.get(OUTPUT_TOKENS_METRIC, 0)),
            cache_read_tokens=int(usage.get(CACHE_READ_TOKENS_METRIC, 0)),
            cache_write_tokens=int(usage.get(CACHE_WRITE_TOKENS_METRIC, 0)),
            cost=None if cost is None else float(cost),
        )

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        raw = node.attributes.get(OUTPUT_MESSAGES)
        return None if raw is None else list(messages.tool_call_ids(raw))

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        raw = node.attributes.get(OUTPUT_MESSAGES)
        return None if raw is None else list(messages.tool_calls(raw))

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        raw = node.attributes.get(OUTPUT_MESSAGES)
        return None if raw is None else [IssuedCall(*call) for call in messages.issued_calls(raw)]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        return [raw if type(raw := node.attributes.get(OUTPUT_MESSAGES)) is str else None for node in nodes]

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        raw = node.attributes.get(OUTPUT_MESSAGES)
        if not isinstance(raw, str):
            return {}
        # Each id's `"id": "..."` found once and only once in the text orders the ids as parsing
        # would, without parsing; anything less certain (an argument holding that very key and
        # value, an id JSON escapes) is parsed.
        offsets: dict[str | None, int] = {}
        for call_id in call_ids:
            if call_id is None or not messages.is_literal(call_id):
                break
            spaced, compact = f'"id": "{call_id}"', f'"id":"{call_id}"'
            if raw.count(spaced) + raw.count(compact) != 1:
                break
            offsets[call_id] = max(raw.find(spaced), raw.find(compact))
        else:
            return offsets
        positions: dict[str | None, int] = {}
        for position, call_id in enumerate(messages.tool_call_ids(raw)):
            positions.setdefault(call_id, position)
        return positions

    def agent_run(self, node: SpanNode) -> str | None:
        if not is_agent_span(node):
            return None
        name = agent_name(node, AGENT_NAME)
        # An `invoke_agent` span that names no agent (OpenLIT's, one per turn) is a turn of whatever
        # runs around it, not an agent of its own called 'agent'.
        return None if name == DEFAULT_AGENT_NAME and AGENT_NAME not in node.attributes else name

    def span_prompt(self, node: SpanNode) -> str | None:
        return messages.first_user_text(node.attributes.get(INPUT_MESSAGES))

    def response_text(self, node: SpanNode) -> str | None:
        return messages.last_text(node.attributes.get(OUTPUT_MESSAGES))


FAMILY = GenAI()


# --- Evaluation results as log events (`reports/events.py`, sent by `views/otlp_export.py`) ------------------
# The GenAI conventions' `gen_ai.evaluation.result` event (development status): one log record per
# result, parented to the evaluated span. The `agentic_evals_otel.*` keys are ours, named after the
# distribution (`agentic-evals-otel`).

EVALUATION_RESULT_EVENT = 'gen_ai.evaluation.result'
EVALUATION_NAME = 'gen_ai.evaluation.name'
"""Required: the metric's name (our result name: a score, assertion or label key)."""
EVALUATION_SCORE_VALUE = 'gen_ai.evaluation.score.value'
EVALUATION_SCORE_LABEL = 'gen_ai.evaluation.score.label'
EVALUATION_EXPLANATION = 'gen_ai.evaluation.explanation'
ERROR_TYPE = 'error.type'
"""From the conventions' `gen_ai.error` group: set when the evaluation itself failed."""
EVENT_NAME = 'event.name'
"""The event name as an attribute, for SDKs and protocols older than the log record's `event_name` field."""
SERVICE_NAME = 'service.name'
EVALUATION_PASS = 'pass'
EVALUATION_FAIL = 'fail'
"""`gen_ai.evaluation.score.label` of an assertion (the conventions' own examples)."""
EVALS_DATASET = 'agentic_evals_otel.dataset'
EVALS_CASE = 'agentic_evals_otel.case'
EVALS_EVALUATOR = 'agentic_evals_otel.evaluator'
"""The evaluator's YAML name (`TrajectoryMatch`); `gen_ai.evaluation.name` is its result's name."""
EVALS_RESULT_KIND = 'agentic_evals_otel.result.kind'
"""`score`, `assertion`, `label` or `evaluator_error`: which part of the report the event is."""
