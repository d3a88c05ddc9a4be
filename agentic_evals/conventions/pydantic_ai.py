"""Pydantic AI's own span names and attributes, by instrumentation version, on top of the GenAI ones.

Copied as constants rather than imported: pydantic-ai's instrumentation module is private and
changes between releases, and traces from old versions must keep scoring after an upgrade.
"""

from __future__ import annotations

from typing import Any

from pydantic_evals.otel.span_tree import SpanNode

from . import genai, messages
from .arguments import load_json, recorded_arguments, unparsable
from .family import Arguments, FailureStage, Family, RunSpans, ToolSpans

# Instrumentation version <= 2 names (version 1 existed only in pydantic-ai 1.x).
V2_TOOL_SPAN = 'running tool'
V2_OUTPUT_FUNCTION_SPAN = 'running output function'
V2_AGENT_SPAN = 'agent run'
V2_AGENT_NAME = 'agent_name'
V2_TOOL_ARGUMENTS = 'tool_arguments'
V2_TOOL_RESULT = 'tool_response'
# pydantic-ai before 1.68 grouped one response's tool spans under a `running tools` span: it is
# neither a call nor an agent run, and holds no marker, so nothing here names it.

# `logfire.msg` is set on every version; it is the only marker of a version 3+ output function.
LOGFIRE_MSG = 'logfire.msg'
OUTPUT_FUNCTION_MSG_PREFIX = 'running output function:'
INVALID_TOOL_CALL_MSG_PREFIX = 'invalid tool call:'
TOOL_MSG_PREFIXES = ('running tool', OUTPUT_FUNCTION_MSG_PREFIX, INVALID_TOOL_CALL_MSG_PREFIX)
"""How `logfire.msg` starts on pydantic-ai's tool spans of every version (what tells them from other
GenAI tool spans when content capture is off and nothing else of pydantic-ai's is on them)."""

# Present on a tool span whose call raised `ApprovalRequired` / `CallDeferred` instead of running.
DEFERRAL_NAME = 'pydantic_ai.tool.deferral.name'
# 2.27.1+: arguments failed validation (`'validation'`); the span is separate from execution.
FAILURE_STAGE = 'pydantic_ai.tool.failure_stage'
VALIDATION = 'validation'
# 2.60+: why a retry was requested: `'model_retry'` or `'validation_error'`.
RETRY_CAUSE = 'pydantic_ai.tool.retry.cause'
MODEL_RETRY = 'model_retry'
VALIDATION_ERROR = 'validation_error'

# 2.x records arguments that were not valid JSON as `{"INVALID_JSON": "<the model's text>"}`.
INVALID_JSON_KEY = 'INVALID_JSON'

# Agent spans (version 2+): the whole conversation, in the GenAI message format, and the output.
ALL_MESSAGES = 'pydantic_ai.all_messages'
FINAL_RESULT = 'final_result'
MODEL_REQUEST_PARAMETERS = 'model_request_parameters'

# Message histories (`result.all_messages()`): the output tools pydantic-ai names itself.
OUTPUT_TOOL = FINAL_RESULT
OUTPUT_TOOL_PREFIX = FINAL_RESULT + '_'


class PydanticAI(Family):
    """pydantic-ai's spans: its own names (version 2) and what it adds to the GenAI conventions
    (output functions, deferred calls, failure stages, the agent span's conversation and output)."""

    name = 'pydantic-ai'
    run_spans = RunSpans(keys={V2_AGENT_NAME: None}, names=frozenset({V2_AGENT_SPAN}))
    content_switch = '`include_content` may be disabled'
    markers = (ALL_MESSAGES, FINAL_RESULT, RETRY_CAUSE, FAILURE_STAGE, DEFERRAL_NAME, MODEL_REQUEST_PARAMETERS)
    marker_spans = frozenset({V2_TOOL_SPAN, V2_AGENT_SPAN})
    tool_spans = ToolSpans(
        genai.TOOL_NAME,
        span_names=frozenset({V2_TOOL_SPAN, V2_OUTPUT_FUNCTION_SPAN}),
        output_span_names=frozenset({V2_OUTPUT_FUNCTION_SPAN}),
        output_message_key=LOGFIRE_MSG,
        output_message_prefixes=(OUTPUT_FUNCTION_MSG_PREFIX,),
        deferred_key=DEFERRAL_NAME,
        rejected_key=FAILURE_STAGE,
        rejected_value=VALIDATION,
    )

    def recognises(self, node: SpanNode) -> bool:
        if super().recognises(node):
            return True
        msg = node.attributes.get(LOGFIRE_MSG)
        return isinstance(msg, str) and msg.startswith(TOOL_MSG_PREFIXES)

    def starts_in_issue_order(self, node: SpanNode) -> bool:
        # pydantic-ai opens the span of each call it runs in the response's order before awaiting
        # any (a call rejected by validation is the exception, put back by its own rule).
        msg = node.attributes.get(LOGFIRE_MSG)
        return (type(msg) is str and msg.startswith(TOOL_MSG_PREFIXES[0])) or node.name == V2_TOOL_SPAN

    def arguments(self, node: SpanNode) -> Arguments | None:
        found = recorded_arguments(node.attributes, (genai.TOOL_CALL_ARGUMENTS, V2_TOOL_ARGUMENTS))
        value = None if found is None else found.parsed
        if value is not None and len(value) == 1 and isinstance(text := value.get(INVALID_JSON_KEY), str):
            # pydantic-ai wraps arguments that were not valid JSON so they survive a round trip.
            return Arguments(None, found.raw if found else None, unparsable(text))
        return found

    def result(self, node: SpanNode) -> str | None:
        return genai.first_str(node.attributes, genai.TOOL_CALL_RESULT, V2_TOOL_RESULT)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        attributes = node.attributes
        msg = attributes.get(LOGFIRE_MSG)
        if (
            attributes.get(FAILURE_STAGE) == VALIDATION
            or attributes.get(RETRY_CAUSE) == VALIDATION_ERROR
            or (isinstance(msg, str) and msg.startswith(INVALID_TOOL_CALL_MSG_PREFIX))
        ):
            return 'validation'
        if attributes.get(RETRY_CAUSE) == MODEL_RETRY:
            return 'retry'
        return None

    def agent_run(self, node: SpanNode) -> str | None:
        if node.name == V2_AGENT_SPAN or (V2_AGENT_NAME in node.attributes and genai.is_agent_span(node)):
            return genai.agent_name(node, genai.AGENT_NAME, V2_AGENT_NAME)
        return None

    def run_prompt(self, agent: SpanNode) -> str | None:
        return messages.first_user_text(agent.attributes.get(ALL_MESSAGES))

    def run_output(self, agent: SpanNode) -> Any:
        value = agent.attributes.get(FINAL_RESULT)
        if not isinstance(value, str):
            return None
        if value[:1] in ('{', '['):  # structured output is recorded as JSON
            try:
                return load_json(value)
            except ValueError:  # not JSON, or nested too deeply
                return value
        return value


FAMILY = PydanticAI()
