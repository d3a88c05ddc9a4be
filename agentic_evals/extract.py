"""Extraction: one walk over a `SpanTree` that yields its `Trajectory`, cached per tree.

The rules (which spans count, how status, failure stage, agent and order are decided) are listed
with the spans they read in `docs/trajectory.md`.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from .conventions import genai, pydantic_ai
from .conventions.spans import (
    agent_name,
    failure_stage,
    first_str,
    is_agent_span,
    is_model_request_span,
    is_output_function,
    is_tool_span,
)
from .trajectory import AgentRun, CallStatus, ModelRequest, ToolCall, Trajectory

__all__ = ('extract_trajectory', 'parse_arguments')


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
    call_parents: list[int | None] = []
    requests: list[ModelRequest] = []
    agents: list[AgentRun] = []
    notes: list[str] = []
    issue_order: dict[str, tuple[int, int]] = {}
    for node in nodes:
        attrs = node.attributes
        if is_agent_span(node):
            path = paths.of(node)
            agents.append(AgentRun(path[-1], path, node.span_id, node.start_timestamp, node.end_timestamp))
        elif is_tool_span(node):
            tool_name = attrs.get(genai.TOOL_NAME)
            if not isinstance(tool_name, str):
                notes.append(
                    f'span {node.name!r} skipped: {genai.TOOL_NAME} is {type(tool_name).__name__} {tool_name!r},'
                    ' not a string'
                )
                continue
            calls.append(_tool_call(node, tool_name, paths.of(node), issue_order))
            call_parents.append(node.parent_span_id)
        elif is_model_request_span(node):
            requests.append(_model_request(node, paths.of(node)))
            _record_issue_order(node, len(requests) - 1, issue_order)
    return Trajectory(
        tool_calls=tuple(_in_issue_order(calls, call_parents, issue_order)),
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
            if is_agent_span(span):
                base = (*base, agent_name(span))
            self._memo[span.node_key] = base
        return base


def _tool_call(node: SpanNode, name: str, path: tuple[str, ...], issue_order: dict[str, tuple[int, int]]) -> ToolCall:
    attrs = node.attributes
    raw = first_str(attrs, genai.TOOL_CALL_ARGUMENTS, pydantic_ai.V2_TOOL_ARGUMENTS)
    arguments, problem = parse_arguments(raw)
    status: CallStatus
    if pydantic_ai.DEFERRAL_NAME in attrs:
        status = 'deferred'
    elif node.status == 'error':
        status = 'failed'
    else:
        status = 'ok'
    recorded_id = attrs.get(genai.TOOL_CALL_ID)
    call_id = recorded_id if isinstance(recorded_id, str) else None
    issued = issue_order.get(call_id) if call_id is not None else None
    return ToolCall(
        name=name,
        arguments=arguments,
        raw_arguments=raw,
        arguments_problem=problem,
        call_id=call_id,
        result=first_str(attrs, genai.TOOL_CALL_RESULT, pydantic_ai.V2_TOOL_RESULT),
        status=status,
        failure_stage=failure_stage(node) if status == 'failed' else None,
        agent=path[-1] if path else None,
        agent_path=path,
        start=node.start_timestamp,
        end=node.end_timestamp,
        span_id=node.span_id,
        issued_by=issued[0] if issued is not None else None,
        is_output_function=is_output_function(node),
    )


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
    if len(value) == 1 and isinstance(value.get(pydantic_ai.INVALID_JSON_KEY), str):
        # pydantic-ai wraps arguments that were not valid JSON so they survive a round trip.
        return None, f'could not be parsed as JSON: the model sent {value[pydantic_ai.INVALID_JSON_KEY]!r}'
    return value, None


def _model_request(node: SpanNode, path: tuple[str, ...]) -> ModelRequest:
    attrs = node.attributes
    cost = attrs.get(pydantic_ai.COST)
    operation = attrs.get(genai.OPERATION_NAME)
    return ModelRequest(
        model=first_str(attrs, genai.RESPONSE_MODEL, genai.REQUEST_MODEL),
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


def _record_issue_order(node: SpanNode, response_index: int, issue_order: dict[str, tuple[int, int]]) -> None:
    """Remember, per call id, which model response issued it and at which position."""
    raw = node.attributes.get(genai.OUTPUT_MESSAGES)
    if not isinstance(raw, str) or 'tool_call' not in raw:
        return
    for position, call_id in enumerate(_issued_call_ids(raw)):
        issue_order.setdefault(call_id, (response_index, position))


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


def _in_issue_order(
    calls: list[ToolCall], parents: list[int | None], issue_order: dict[str, tuple[int, int]]
) -> list[ToolCall]:
    """Start order, except that calls one model response issued follow the order the model issued them.

    pydantic-ai validates all of a response's calls before running any, so a call that fails
    validation starts before its earlier siblings run. Calls are regrouped only among siblings:
    issued by the same response and under the same parent span (a call deferred in one run and
    executed in a resumed run is not a sibling of its old companions). Permuting only within a
    group's own slots leaves every other call (a sub-agent's, say) where time put it.
    """
    if not issue_order:
        return calls
    groups: dict[tuple[int, int | None], list[int]] = {}
    for index, call in enumerate(calls):
        issued = issue_order.get(call.call_id) if call.call_id is not None else None
        if issued is not None:
            groups.setdefault((issued[0], parents[index]), []).append(index)
    ordered = list(calls)
    for indices in groups.values():
        if len(indices) < 2:
            continue
        by_issue = sorted(indices, key=lambda i: (issue_order[calls[i].call_id or ''][1], i))
        for slot, source in zip(indices, by_issue, strict=True):
            ordered[slot] = calls[source]
    return ordered


def _int(value: object) -> int:
    # Zero-valued token attributes are omitted by pydantic-ai, so absence means 0.
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
