"""OpenTelemetry GenAI semantic conventions (development status), shared by most frameworks.

pydantic-ai (instrumentation version 3+), Google ADK and Strands name their spans and attributes
after these conventions, so this family reads any framework that follows them; the families of
frameworks that add their own attributes extend it (`pydantic_ai`, `google_adk`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode

from . import messages
from .arguments import recorded_arguments
from .family import IGNORED, MODEL_REQUEST, Answer, Arguments, Classifier, FailureStage, Family, RequestFacts

OPERATION_NAME = 'gen_ai.operation.name'
INVOKE_AGENT = 'invoke_agent'
CHAT = 'chat'
# Operations that are one request to a model: `chat` (pydantic-ai, Strands), `generate_content`
# (Google ADK), `text_completion` (completion APIs).
MODEL_REQUEST_OPERATIONS = frozenset({CHAT, 'generate_content', 'text_completion'})

TOOL_NAME = 'gen_ai.tool.name'
TOOL_CALL_ID = 'gen_ai.tool.call.id'
TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments'
TOOL_CALL_RESULT = 'gen_ai.tool.call.result'
TOOL_SPAN_PREFIX = 'execute_tool '

AGENT_NAME = 'gen_ai.agent.name'
AGENT_SPAN = INVOKE_AGENT
AGENT_SPAN_PREFIX = AGENT_SPAN + ' '
DEFAULT_AGENT_NAME = 'agent'

REQUEST_MODEL = 'gen_ai.request.model'
RESPONSE_MODEL = 'gen_ai.response.model'
INPUT_MESSAGES = 'gen_ai.input.messages'
OUTPUT_MESSAGES = 'gen_ai.output.messages'

USAGE_PREFIX = 'gen_ai.usage.'
"""`gen_ai.usage.input_tokens` is pydantic-evals' metric `input_tokens`, and so on for every key."""
USAGE_DETAILS_PREFIX = 'gen_ai.usage.details.'
"""pydantic-ai's provider-specific counts: `gen_ai.usage.details.X` is the metric `X`."""
COST = 'operation.cost'
"""Not in the conventions: the USD cost pydantic-ai (through Logfire's pricing) sets on model spans,
which pydantic-evals sums as the `cost` metric."""
COST_METRIC = 'cost'


def first_str(attributes: Mapping[str, AttributeValue], *keys: str) -> str | None:
    """The first of `keys` whose value is text."""
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str):
            return value
    return None


def tool_name(node: SpanNode, notes: list[str]) -> str | None:
    """The span's `gen_ai.tool.name`; when it is not text, a note says so and the span is skipped."""
    name = node.attributes[TOOL_NAME]
    if type(name) is str:
        return name
    notes.append(f'span {node.name!r} skipped: {TOOL_NAME} is {type(name).__name__} {name!r}, not a string')
    return None


def is_agent_span(node: SpanNode) -> bool:
    name = node.name
    return (
        name == AGENT_SPAN or name.startswith(AGENT_SPAN_PREFIX) or node.attributes.get(OPERATION_NAME) == INVOKE_AGENT
    )


def agent_name(node: SpanNode, *keys: str) -> str:
    """The first non-empty text of `keys`, else the name after `invoke_agent `, else `'agent'`."""
    for key in keys:
        value = node.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return node.name[len(AGENT_SPAN_PREFIX) :] if node.name.startswith(AGENT_SPAN_PREFIX) else DEFAULT_AGENT_NAME


class GenAI(Family):
    """Spans named and attributed after the GenAI conventions.

    A tool call is an `execute_tool …` span with a text `gen_ai.tool.name`; a model request is a
    span with `gen_ai.request.model` and a model-request operation (and no tool name); an agent run
    is an `invoke_agent` span or operation.
    """

    name = 'otel-genai'
    argument_keys: tuple[str, ...] = (TOOL_CALL_ARGUMENTS,)
    result_keys: tuple[str, ...] = (TOOL_CALL_RESULT,)

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {TOOL_NAME: self.classify_tool}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {REQUEST_MODEL: self.classify_request}

    def classify_tool(self, node: SpanNode, notes: list[str]) -> Answer:
        if not node.name.startswith(TOOL_SPAN_PREFIX):
            return None
        name = tool_name(node, notes)
        if name is None:
            return IGNORED
        return name, 'failed' if node.status == 'error' else 'ok'

    def classify_request(self, node: SpanNode, notes: list[str]) -> Answer:
        attributes = node.attributes
        if TOOL_NAME in attributes or attributes.get(OPERATION_NAME) not in MODEL_REQUEST_OPERATIONS:
            return None
        return MODEL_REQUEST

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        value = node.attributes.get(TOOL_CALL_ID)
        return value if isinstance(value, str) else None

    def arguments(self, node: SpanNode) -> Arguments:
        return recorded_arguments(node.attributes, self.argument_keys)

    def result(self, node: SpanNode) -> str | None:
        return first_str(node.attributes, *self.result_keys)

    def failure_stage(self, node: SpanNode) -> FailureStage:
        # The conventions record only that an attempt failed. A result on a failed attempt means the
        # tool answered the model anyway: pydantic-ai before 2.60 records `ModelRetry` that way, and
        # nothing else tells a retry from a raise there. (ADK records its error callback's dict as
        # the result: its family must say `raised` when it reads ADK's failed calls.)
        return 'retry' if self.result(node) is not None else 'raised'

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float]:
        found: dict[str, int | float] = {}
        for key, value in node.attributes.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool):
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
        return found

    def request_facts(self, node: SpanNode) -> RequestFacts:
        facts = super().request_facts(node)
        operation = node.attributes.get(OPERATION_NAME)
        return facts._replace(
            model=first_str(node.attributes, RESPONSE_MODEL, REQUEST_MODEL),
            operation=operation if isinstance(operation, str) else CHAT,
        )

    def issued_call_ids(self, node: SpanNode) -> list[str]:
        return list(messages.tool_call_ids(node.attributes.get(OUTPUT_MESSAGES)))

    def may_have_issued(self, node: SpanNode, call_id: str) -> bool:
        raw = node.attributes.get(OUTPUT_MESSAGES)
        return isinstance(raw, str) and messages.may_contain_id(raw, call_id)

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int]:
        # Finding each quoted id in the raw JSON orders them as positions would, without parsing;
        # when an id is missing the messages are parsed properly.
        raw = node.attributes.get(OUTPUT_MESSAGES)
        if not isinstance(raw, str):
            return {}
        found: dict[str | None, int] = {i: raw.find(f'"{i}"') for i in call_ids if i is not None}
        if found and all(offset >= 0 for offset in found.values()):
            return found
        return super().issue_positions(node, call_ids)

    # -- runs ----------------------------------------------------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        return agent_name(node, AGENT_NAME) if is_agent_span(node) else None

    def span_prompt(self, node: SpanNode) -> str | None:
        return messages.first_user_text(node.attributes.get(INPUT_MESSAGES))

    def response_text(self, node: SpanNode) -> str | None:
        return messages.last_text(node.attributes.get(OUTPUT_MESSAGES))


FAMILY = GenAI()
