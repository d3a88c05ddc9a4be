"""The Vercel AI SDK (`ai`): its own `ai.*` spans, and what its GenAI-convention spans add.

**`ai.*` spans** (built into `ai` 3 to 6 as `experimental_telemetry`; in `ai` 7 the
`LegacyOpenTelemetry` integration of `@ai-sdk/otel`), every one with `ai.operationId`:

- `ai.generateText` / `ai.streamText`: one call of the function, an agent run named by
  `ai.telemetry.functionId` (else the model, `ai.model.id`, as the GenAI integration names its
  span); the prompt in `ai.prompt` (JSON: `prompt` and/or `messages`), the answer in
  `ai.response.text` (`ai.result.text` before 3.4). It repeats usage (ai 7: the run's totals; ai 5:
  the last step's) and is never a request.
- `ai.generateText.doGenerate` / `ai.streamText.doStream` (and the object functions' own): one
  request to the model per step; usage in `gen_ai.usage.input_tokens` / `output_tokens` (ai 4 on;
  `prompt_tokens` / `completion_tokens` in ai 3) and `ai.usage.promptTokens` / `completionTokens`
  (`inputTokens` / `outputTokens` in ai 7's integration); the calls it issued in
  `ai.response.toolCalls`, a JSON list of `toolCallId`, `toolName` and the arguments: `input` as
  JSON text (ai 5) or as an object (ai 7), `args` as JSON text (ai 3 and 4).
- `ai.toolCall`: one tool execution; `ai.toolCall.name`, `.id`, `.args` (JSON text) and `.result`
  (the output, `JSON.stringify`-ed: a text result is a quoted JSON string). A tool that throws:
  status ERROR plus an exception event; the SDK hands the model the error text and goes on, so a
  failed call is `raised` (the SDK has no retry signal). In ai 7 it is a child of the step's
  request span, in ai 5 of the function's span (a sibling of the request that issued it).

**GenAI-convention spans** (ai 7's `OpenTelemetry` integration) are read by `genai`, except that
this integration JSON-encodes every tool result too: its tool spans are known by
`gen_ai.execute_tool.duration`, which it sets on every tool it runs.

The family is asked first: Google ADK's claims the results of any span with `gen_ai.tool.type`, which
this integration sets as well. So that it does not displace the GenAI tool-span description the walks
apply inline, `ai.toolCall` spans are found by a classifier rather than a `ToolSpans` description.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode

from . import genai
from .arguments import json_or_none, load_json, recorded_arguments
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

OPERATION_ID = 'ai.operationId'
"""On every `ai.*` span: the operation (`ai.generateText`, `ai.generateText.doGenerate`, `ai.toolCall`, ...)."""
FUNCTION_ID = 'ai.telemetry.functionId'
MODEL_ID = 'ai.model.id'

RUN_OPERATIONS = frozenset({'ai.generateText', 'ai.streamText'})
"""The tool loops: one agent run each."""
REQUEST_OPERATIONS = frozenset(
    {
        'ai.generateText.doGenerate',
        'ai.streamText.doStream',
        'ai.generateObject.doGenerate',
        'ai.streamObject.doStream',
    }
)
"""One request to a language model each (one per step of a tool loop)."""

TOOL_CALL_SPAN = 'ai.toolCall'
TOOL_CALL_NAME = 'ai.toolCall.name'
TOOL_CALL_ID = 'ai.toolCall.id'
TOOL_CALL_ARGS = 'ai.toolCall.args'
TOOL_CALL_RESULT = 'ai.toolCall.result'

PROMPT = 'ai.prompt'
"""On the function's span: JSON of its `prompt` (text or messages) and `messages`."""
PROMPT_MESSAGES = 'ai.prompt.messages'
"""On a request span: JSON of the messages sent to the model."""
RESPONSE_TEXT = 'ai.response.text'
RESULT_TEXT = 'ai.result.text'
"""`ai.response.text` before ai 3.4."""
RESPONSE_TOOL_CALLS = 'ai.response.toolCalls'
RESULT_TOOL_CALLS = 'ai.result.toolCalls'
"""`ai.response.toolCalls` before ai 3.4."""
RESPONSE_MODEL = 'ai.response.model'

# Token counts, newest key first.
INPUT_TOKENS = (
    'gen_ai.usage.input_tokens',
    'ai.usage.inputTokens',
    'gen_ai.usage.prompt_tokens',
    'ai.usage.promptTokens',
)
OUTPUT_TOKENS = (
    'gen_ai.usage.output_tokens',
    'ai.usage.outputTokens',
    'gen_ai.usage.completion_tokens',
    'ai.usage.completionTokens',
)
CACHE_READ_TOKENS = ('ai.usage.inputTokenDetails.cacheReadTokens', 'ai.usage.cachedInputTokens')
CACHE_WRITE_TOKENS = ('ai.usage.inputTokenDetails.cacheWriteTokens',)

EXECUTE_TOOL_DURATION = 'gen_ai.execute_tool.duration'
"""Set by ai 7's `OpenTelemetry` integration on every tool span it runs (a GenAI metric's name)."""

# Keys of the JSON the SDK writes.
TOOL_CALL_ID_FIELD = 'toolCallId'
TOOL_NAME_FIELD = 'toolName'
INPUT_FIELD = 'input'
ARGS_FIELD = 'args'
"""The arguments' field before ai 5 (JSON text)."""


def _operation(node: SpanNode) -> str | None:
    """The span's `ai.operationId`; `None` unless it is text (a list would not hash in a set look-up)."""
    value = node.attributes.get(OPERATION_ID)
    return value if type(value) is str else None


def is_tool_call(node: SpanNode) -> bool:
    return node.name == TOOL_CALL_SPAN and _operation(node) == TOOL_CALL_SPAN


def is_request(node: SpanNode) -> bool:
    return _operation(node) in REQUEST_OPERATIONS


def is_genai_tool(node: SpanNode) -> bool:
    """A tool span of ai 7's `OpenTelemetry` integration (GenAI conventions)."""
    return EXECUTE_TOOL_DURATION in node.attributes and genai.TOOL_NAME in node.attributes


def unquoted(raw: str) -> str:
    """A result the SDK `JSON.stringify`-ed: the text when it is a JSON string, else `raw` as recorded."""
    try:
        value = load_json(raw)
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too big for a float
        return False


def _number(attributes: Mapping[str, AttributeValue], keys: tuple[str, ...]) -> int | float | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value):
            return value
    return None


_json = json_or_none


def _text_content(content: object) -> str | None:
    """A message's `content`: the text, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p['text']
            for p in content
            if isinstance(p, dict) and p.get('type') == 'text' and isinstance(p.get('text'), str)
        ]
        return '\n'.join(texts) if texts else None
    return None


def first_user_text(messages: object) -> str | None:
    """The text of the first user message (the SDK's model messages) that has any."""
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and message.get('role') == 'user':
            text = _text_content(message.get('content'))
            if text is not None:
                return text
    return None


def _issued_call(call: object) -> IssuedCall | None:
    if not isinstance(call, dict) or not isinstance(name := call.get(TOOL_NAME_FIELD), str):
        return None
    call_id = call.get(TOOL_CALL_ID_FIELD)
    arguments = call.get(INPUT_FIELD, call.get(ARGS_FIELD))
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments)  # ai 7 records the parsed object: back to JSON text
    return IssuedCall(call_id if isinstance(call_id, str) else None, name, arguments)


def legacy_tool_call(node: SpanNode, notes: list[str]) -> Answer:
    """An `ai.toolCall` span as a call attempt: a classifier rather than a `ToolSpans` description,
    so this family can be asked first (before Google ADK's, which claims any span with
    `gen_ai.tool.type`) without its description displacing the GenAI one the walks apply inline."""
    if not is_tool_call(node):
        return None
    name = node.attributes.get(TOOL_CALL_NAME)
    if type(name) is not str:
        notes.append(genai.non_text_tool_name(node, TOOL_CALL_NAME))
        return IGNORED
    return name, 'failed' if node.status == 'error' else 'ok'


def legacy_request(node: SpanNode, notes: list[str]) -> Answer:
    return MODEL_REQUEST if is_request(node) else None


class VercelAI(Family):
    """The Vercel AI SDK's `ai.*` spans, and the result encoding of its GenAI tool spans (module docstring)."""

    name = 'vercel-ai'
    run_spans = RunSpans(keys={OPERATION_ID: RUN_OPERATIONS})
    content_switch = 'inputs may be off: `recordInputs: false` in the telemetry settings leaves them out'
    markers = (OPERATION_ID, EXECUTE_TOOL_DURATION)

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {OPERATION_ID: legacy_tool_call}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        return {OPERATION_ID: legacy_request}

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        value = node.attributes.get(TOOL_CALL_ID) if is_tool_call(node) else None
        return value if isinstance(value, str) else None

    def arguments(self, node: SpanNode) -> Arguments | None:
        return recorded_arguments(node.attributes, (TOOL_CALL_ARGS,)) if is_tool_call(node) else None

    def result(self, node: SpanNode) -> str | None:
        if is_tool_call(node):
            raw = genai.first_str(node.attributes, TOOL_CALL_RESULT)
        elif is_genai_tool(node):
            raw = genai.first_str(node.attributes, genai.TOOL_CALL_RESULT)
        else:
            return None
        return None if raw is None else unquoted(raw)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if is_tool_call(node) or is_genai_tool(node) else None

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        if not is_request(node):
            return None
        attributes = node.attributes
        found: dict[str, int | float] = {}
        for metric, keys in (
            (genai.INPUT_TOKENS_METRIC, INPUT_TOKENS),
            (genai.OUTPUT_TOKENS_METRIC, OUTPUT_TOKENS),
            (genai.CACHE_READ_TOKENS_METRIC, CACHE_READ_TOKENS),
            (genai.CACHE_WRITE_TOKENS_METRIC, CACHE_WRITE_TOKENS),
        ):
            value = _number(attributes, keys)
            if value is not None:
                found[metric] = value
        return found

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        if not is_request(node):
            return None
        return RequestFacts(
            model=genai.first_str(node.attributes, genai.RESPONSE_MODEL, RESPONSE_MODEL, genai.REQUEST_MODEL, MODEL_ID),
            operation=genai.CHAT,
            input_tokens=int(usage.get(genai.INPUT_TOKENS_METRIC, 0)),
            output_tokens=int(usage.get(genai.OUTPUT_TOKENS_METRIC, 0)),
            cache_read_tokens=int(usage.get(genai.CACHE_READ_TOKENS_METRIC, 0)),
            cache_write_tokens=int(usage.get(genai.CACHE_WRITE_TOKENS_METRIC, 0)),
            cost=None,
        )

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        if not is_request(node):
            return None
        calls = _json(genai.first_str(node.attributes, RESPONSE_TOOL_CALLS, RESULT_TOOL_CALLS))
        if not isinstance(calls, list):
            return [] if RESPONSE_TEXT in node.attributes or RESULT_TEXT in node.attributes else None
        return [call for item in calls if (call := _issued_call(item)) is not None]

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        return [
            genai.first_str(node.attributes, RESPONSE_TOOL_CALLS, RESULT_TOOL_CALLS) if is_request(node) else None
            for node in nodes
        ]

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        issued = self.issued(node)
        if issued is None:
            return None
        return {call.call_id: position for position, call in enumerate(issued) if call.call_id is not None}

    # -- runs ----------------------------------------------------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        if _operation(node) not in RUN_OPERATIONS:
            return None
        name = genai.first_str(node.attributes, FUNCTION_ID, MODEL_ID)
        return name if name else genai.DEFAULT_AGENT_NAME

    def run_prompt(self, agent: SpanNode) -> str | None:
        if _operation(agent) not in RUN_OPERATIONS:
            return None
        prompt = _json(agent.attributes.get(PROMPT))
        if not isinstance(prompt, dict):
            return None
        text = prompt.get('prompt')
        if isinstance(text, str):
            return text
        return first_user_text(text) or first_user_text(prompt.get('messages'))

    def span_prompt(self, node: SpanNode) -> str | None:
        return first_user_text(_json(node.attributes.get(PROMPT_MESSAGES))) if is_request(node) else None

    def run_output(self, agent: SpanNode) -> Any:
        if _operation(agent) not in RUN_OPERATIONS:
            return None
        return genai.first_str(agent.attributes, RESPONSE_TEXT, RESULT_TEXT) or None

    def response_text(self, node: SpanNode) -> str | None:
        if not is_request(node):
            return None
        return genai.first_str(node.attributes, RESPONSE_TEXT, RESULT_TEXT) or None


FAMILY = VercelAI()
