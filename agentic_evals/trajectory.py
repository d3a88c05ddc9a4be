"""What an agent did, as plain records extracted once from a pydantic-evals `SpanTree`.

`extract_trajectory(tree)` walks the tree one time and returns a `Trajectory`: every tool call
attempt (with its status, failure stage, agent and parsed arguments), every model request (with
tokens and cost) and every agent run. Evaluators, the CLI and user code read these records and
never touch spans themselves. The rules, and the spans each one reads, are listed in
`docs/trajectory.md`.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from .conventions import genai, pydantic_ai

__all__ = (
    'AgentRun',
    'CallStatus',
    'FailureStage',
    'ModelRequest',
    'ToolCall',
    'Trajectory',
    'extract_trajectory',
)

CallStatus = Literal['ok', 'failed', 'deferred']
"""`ok`: the tool ran and returned; `failed`: the attempt ended in an error; `deferred`: the tool
asked for approval or external execution (`ApprovalRequired` / `CallDeferred`) and did not run."""

FailureStage = Literal['validation', 'retry', 'raised']
"""Where a failed attempt failed: its arguments did not validate, the tool asked the model to
retry (`ModelRetry`), or the tool raised any other exception."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call attempt, as recorded by one tool span."""

    name: str
    arguments: dict[str, Any] | None
    """The parsed arguments when they were recorded and are a JSON object, else `None`."""
    raw_arguments: str | None
    """The arguments exactly as recorded (a JSON string, or the model's invalid text)."""
    arguments_problem: str | None
    """Why `arguments` is `None`, phrased to follow `Tool 'name' arguments ...`; `None` when parsed."""
    call_id: str | None
    result: str | None
    status: CallStatus
    failure_stage: FailureStage | None
    agent: str | None
    """The agent that made the call: the nearest enclosing agent run."""
    agent_path: tuple[str, ...]
    """The enclosing agent runs, outermost first; ends with `agent`."""
    start: datetime
    end: datetime
    span_id: int
    is_output_function: bool = False
    """An output function runs through the tool machinery but produces the run's output; evaluators
    never count it as a tool call."""

    @property
    def duration(self) -> timedelta:
        return self.end - self.start

    def made_by(self, agent: str | None, *, include_subagents: bool) -> bool:
        """Whether this call belongs to `agent` (any agent when `None`) under the sub-agent rule.

        With `include_subagents=False` only the agent's own calls count; for `agent=None` that means
        the calls of the outermost agent runs.
        """
        if agent is None:
            return include_subagents or len(self.agent_path) <= 1
        if include_subagents:
            return agent in self.agent_path
        return self.agent == agent


@dataclass(frozen=True)
class ModelRequest:
    """One request to a model, as recorded by one model-request (chat) span."""

    model: str | None
    operation: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float | None
    agent: str | None
    agent_path: tuple[str, ...]
    start: datetime
    end: datetime
    span_id: int

    def made_by(self, agent: str | None, *, include_subagents: bool) -> bool:
        """Same attribution rule as `ToolCall.made_by`."""
        if agent is None:
            return include_subagents or len(self.agent_path) <= 1
        if include_subagents:
            return agent in self.agent_path
        return self.agent == agent


@dataclass(frozen=True)
class AgentRun:
    """One agent run span; nested runs are sub-agents (e.g. agent-as-tool delegation)."""

    name: str
    path: tuple[str, ...]
    span_id: int
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Trajectory:
    """Everything extracted from one span tree, in the order things happened."""

    tool_calls: tuple[ToolCall, ...] = ()
    """Every tool call attempt, output functions and deferred calls included, in call order."""
    model_requests: tuple[ModelRequest, ...] = ()
    agents: tuple[AgentRun, ...] = ()
    notes: tuple[str, ...] = field(default=())
    """Spans that looked like tool calls but could not be read, with the reason they were skipped."""

    def calls(
        self, *, include_failed: bool = False, agent: str | None = None, include_subagents: bool = True
    ) -> list[ToolCall]:
        """The tool calls an evaluator scores: never output functions or deferred calls.

        Failed attempts count only with `include_failed`; `agent` narrows to one agent's calls.
        """
        return [
            call
            for call in self.tool_calls
            if not call.is_output_function
            and call.status != 'deferred'
            and (include_failed or call.status == 'ok')
            and call.made_by(agent, include_subagents=include_subagents)
        ]

    def requests(self, *, agent: str | None = None, include_subagents: bool = True) -> list[ModelRequest]:
        """The model requests made by `agent` (every agent when `None`)."""
        return [r for r in self.model_requests if r.made_by(agent, include_subagents=include_subagents)]

    @property
    def agent_names(self) -> list[str]:
        """Distinct agent names, sorted."""
        return sorted({run.name for run in self.agents})

    def has_agent(self, name: str) -> bool:
        return (
            any(run.name == name for run in self.agents)
            or any(name in call.agent_path for call in self.tool_calls)
            or any(name in request.agent_path for request in self.model_requests)
        )


# ---------------------------------------------------------------------------------------------
# Extraction
# ---------------------------------------------------------------------------------------------


def extract_trajectory(tree: SpanTree) -> Trajectory:
    """The trajectory of `tree`, extracted on first use and cached for the tree's lifetime.

    Every evaluator on a case reads the same tree, so caching by tree identity makes the number of
    evaluators free. The cache holds the tree weakly and also checks the span count, so a tree
    that gains spans after extraction is extracted again.
    """
    key = id(tree)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None:
        ref, size, trajectory = cached
        if ref() is tree and size == len(tree.nodes_by_id):
            return trajectory
    trajectory = _extract(tree)
    ref = weakref.ref(tree, lambda _: _cache.pop(key, None))
    with _cache_lock:
        _cache[key] = (ref, len(tree.nodes_by_id), trajectory)
    return trajectory


_cache: dict[int, tuple[weakref.ref[SpanTree], int, Trajectory]] = {}
_cache_lock = threading.Lock()


def _extract(tree: SpanTree) -> Trajectory:
    # `tree` iterates in start order (pydantic-evals sorts on rebuild); a stable sort keeps ties in
    # that order, exactly as pydantic-evals' built-ins break them.
    nodes = sorted(tree, key=lambda n: n.start_timestamp)
    paths = _AgentPaths()
    calls: list[ToolCall] = []
    requests: list[ModelRequest] = []
    agents: list[AgentRun] = []
    notes: list[str] = []
    issue_order: dict[str, tuple[int, int]] = {}
    for node in nodes:
        attrs = node.attributes
        if _is_agent_span(node):
            path = paths.of(node)
            agents.append(AgentRun(path[-1], path, node.span_id, node.start_timestamp, node.end_timestamp))
        elif _is_tool_span(node):
            tool_name = attrs.get(genai.TOOL_NAME)
            if not isinstance(tool_name, str):
                notes.append(
                    f'span {node.name!r} skipped: {genai.TOOL_NAME} is {type(tool_name).__name__} {tool_name!r},'
                    ' not a string'
                )
                continue
            calls.append(_tool_call(node, tool_name, paths.of(node)))
        elif _is_model_request_span(node):
            requests.append(_model_request(node, paths.of(node)))
            _record_issue_order(node, len(requests), issue_order)
    return Trajectory(
        tool_calls=tuple(_in_issue_order(calls, issue_order)),
        model_requests=tuple(requests),
        agents=tuple(agents),
        notes=tuple(notes),
    )


class _AgentPaths:
    """Memoised agent path of every span: the names of its enclosing agent runs, outermost first."""

    def __init__(self) -> None:
        self._memo: dict[str, tuple[str, ...]] = {}

    def of(self, node: SpanNode) -> tuple[str, ...]:
        # Climb to the nearest ancestor already known, then fill the memo on the way back down:
        # each span is resolved once, so the whole tree costs O(spans) even when it is deep.
        chain: list[SpanNode] = []
        current: SpanNode | None = node
        base: tuple[str, ...] = ()
        while current is not None:
            known = self._memo.get(current.node_key)
            if known is not None:
                base = known
                break
            chain.append(current)
            current = current.parent
        for span in reversed(chain):
            if _is_agent_span(span):
                base = (*base, _agent_name(span))
            self._memo[span.node_key] = base
        return base


def _is_agent_span(node: SpanNode) -> bool:
    name = node.name
    return (
        name == pydantic_ai.V2_AGENT_SPAN
        or name == genai.AGENT_SPAN_PREFIX
        or name.startswith(genai.AGENT_SPAN_PREFIX + ' ')
        or node.attributes.get(genai.OPERATION_NAME) == 'invoke_agent'
    )


def _agent_name(node: SpanNode) -> str:
    for key in (genai.AGENT_NAME, pydantic_ai.V2_AGENT_NAME):
        value = node.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    prefix = genai.AGENT_SPAN_PREFIX + ' '
    return node.name[len(prefix) :] if node.name.startswith(prefix) else 'agent'


def _is_tool_span(node: SpanNode) -> bool:
    """A tool execution attempt (or output function): named like one and carrying a tool name key."""
    if genai.TOOL_NAME not in node.attributes:
        return False
    name = node.name
    return name in (pydantic_ai.V2_TOOL_SPAN, pydantic_ai.V2_OUTPUT_FUNCTION_SPAN) or name.startswith(
        genai.TOOL_SPAN_PREFIX
    )


def _is_output_function(node: SpanNode) -> bool:
    if node.name == pydantic_ai.V2_OUTPUT_FUNCTION_SPAN:
        return True
    msg = node.attributes.get(pydantic_ai.LOGFIRE_MSG)
    return isinstance(msg, str) and msg.startswith(pydantic_ai.OUTPUT_FUNCTION_MSG_PREFIX)


def _is_model_request_span(node: SpanNode) -> bool:
    return (
        genai.REQUEST_MODEL in node.attributes
        and node.attributes.get(genai.OPERATION_NAME) in genai.MODEL_REQUEST_OPERATIONS
    )


def _tool_call(node: SpanNode, name: str, path: tuple[str, ...]) -> ToolCall:
    attrs = node.attributes
    raw = _first_str(attrs, genai.TOOL_CALL_ARGUMENTS, pydantic_ai.V2_TOOL_ARGUMENTS)
    arguments, problem = parse_arguments(raw)
    status: CallStatus
    if pydantic_ai.DEFERRAL_NAME in attrs:
        status = 'deferred'
    elif node.status == 'error':
        status = 'failed'
    else:
        status = 'ok'
    call_id = attrs.get(genai.TOOL_CALL_ID)
    return ToolCall(
        name=name,
        arguments=arguments,
        raw_arguments=raw,
        arguments_problem=problem,
        call_id=call_id if isinstance(call_id, str) else None,
        result=_first_str(attrs, genai.TOOL_CALL_RESULT, pydantic_ai.V2_TOOL_RESULT),
        status=status,
        failure_stage=_failure_stage(node) if status == 'failed' else None,
        agent=path[-1] if path else None,
        agent_path=path,
        start=node.start_timestamp,
        end=node.end_timestamp,
        span_id=node.span_id,
        is_output_function=_is_output_function(node),
    )


def _failure_stage(node: SpanNode) -> FailureStage:
    attrs = node.attributes
    msg = attrs.get(pydantic_ai.LOGFIRE_MSG)
    if (
        attrs.get(pydantic_ai.FAILURE_STAGE) == 'validation'
        or attrs.get(pydantic_ai.RETRY_CAUSE) == 'validation_error'
        or (isinstance(msg, str) and msg.startswith(pydantic_ai.INVALID_TOOL_CALL_MSG_PREFIX))
    ):
        return 'validation'
    if attrs.get(pydantic_ai.RETRY_CAUSE) == 'model_retry':
        return 'retry'
    # Before 2.60 the only sign of `ModelRetry` is a result on a failed span: pydantic-ai records
    # the retry prompt as the result, while a tool that raised never returned one.
    if _first_str(attrs, genai.TOOL_CALL_RESULT, pydantic_ai.V2_TOOL_RESULT) is not None:
        return 'retry'
    return 'raised'


def parse_arguments(raw: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """`(arguments, None)` for a JSON object, else `(None, why)` phrased to follow `arguments`."""
    if raw is None:
        return None, 'not available in span (`include_content` may be disabled).'
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return None, f'could not be parsed as JSON: {e}'
    if not isinstance(value, dict):
        return None, f'are not a JSON object: {value!r}'
    return value, None


def _model_request(node: SpanNode, path: tuple[str, ...]) -> ModelRequest:
    attrs = node.attributes
    cost = attrs.get(pydantic_ai.COST)
    operation = attrs.get(genai.OPERATION_NAME)
    return ModelRequest(
        model=_first_str(attrs, genai.RESPONSE_MODEL, genai.REQUEST_MODEL),
        operation=operation if isinstance(operation, str) else 'chat',
        input_tokens=_int(attrs.get(genai.INPUT_TOKENS)),
        output_tokens=_int(attrs.get(genai.OUTPUT_TOKENS)),
        cache_read_tokens=_int(attrs.get(genai.CACHE_READ_TOKENS)),
        cache_write_tokens=_int(attrs.get(genai.CACHE_WRITE_TOKENS)),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        agent=path[-1] if path else None,
        agent_path=path,
        start=node.start_timestamp,
        end=node.end_timestamp,
        span_id=node.span_id,
    )


def _record_issue_order(node: SpanNode, response_number: int, issue_order: dict[str, tuple[int, int]]) -> None:
    """Remember, per call id, which model response issued it and at which position."""
    raw = node.attributes.get(genai.OUTPUT_MESSAGES)
    if not isinstance(raw, str) or 'tool_call' not in raw:
        return
    for position, call_id in enumerate(_issued_call_ids(raw)):
        issue_order.setdefault(call_id, (response_number, position))


def _issued_call_ids(raw: str) -> Iterator[str]:
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError:
        return
    if not isinstance(messages, list):
        return
    for message in messages:
        parts = message.get('parts') if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get('type') == 'tool_call' and isinstance(part.get('id'), str):
                yield part['id']


def _in_issue_order(calls: list[ToolCall], issue_order: dict[str, tuple[int, int]]) -> list[ToolCall]:
    """Start order, except that calls issued by one model response follow the order the model issued them.

    pydantic-ai validates all of a response's calls before running any, so a call that fails
    validation starts before its earlier siblings run. Sorting only within each response's own
    slots fixes that and leaves every other call (a sub-agent's, say) where time put it.
    """
    if not issue_order:
        return calls
    slots: dict[int, list[int]] = {}
    for index, call in enumerate(calls):
        issued = issue_order.get(call.call_id) if call.call_id is not None else None
        if issued is not None:
            slots.setdefault(issued[0], []).append(index)
    ordered = list(calls)
    for indices in slots.values():
        if len(indices) < 2:
            continue
        by_issue = sorted(indices, key=lambda i: (issue_order[calls[i].call_id or ''][1], i))
        for slot, source in zip(indices, by_issue, strict=True):
            ordered[slot] = calls[source]
    return ordered


def _first_str(attrs: Any, *keys: str) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str):
            return value
    return None


def _int(value: object) -> int:
    # Zero-valued token attributes are omitted by pydantic-ai, so absence means 0.
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
