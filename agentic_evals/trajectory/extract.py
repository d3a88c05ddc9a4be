"""Extraction: one walk over a `SpanTree` that yields its `Trajectory`, cached per tree.

The rules (which spans count, how status, failure stage, agent and order are decided) are listed
with the spans they read in `docs/trajectory.md`.

The walk is the hot path of every evaluation, so it does the least it can per span: it classifies
the span, notes its agent run, and keeps columns (name, kind, agent path, span) for tool calls.
Records, argument parsing and model-request details are made only when something asks for them.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from ..conventions import genai, google_adk, pydantic_ai
from ..conventions.spans import agent_name, failure_stage, first_str, is_agent_span
from .records import AgentRun, AgentStructure, CallKind, CallStatus, ModelRequest, ToolCall
from .trajectory import Trajectory

_Call = tuple[SpanNode, str, CallKind, int, 'int | None']
"""(span, tool name, kind, parent span id, index of the issuing model request) of one call."""

_TOOL_SPAN_NAMES = (pydantic_ai.V2_TOOL_SPAN, pydantic_ai.V2_OUTPUT_FUNCTION_SPAN)


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
    ref = weakref.ref(tree, partial(_forget, key))
    with _cache_lock:
        _cache[key] = (ref, len(tree.nodes_by_id), trajectory)
    return trajectory


_cache: dict[int, tuple[weakref.ref[SpanTree], int, Trajectory]] = {}
_cache_lock = threading.Lock()


def _forget(key: int, _: object, cache: dict[int, Any] = _cache) -> None:
    # Bound as a default so it still works while the interpreter tears module globals down.
    cache.pop(key, None)


def _extract(tree: SpanTree) -> Trajectory:
    # pydantic-evals keeps a tree's nodes in start order (every change re-sorts them, ties in insertion
    # order), which is the order pydantic-evals' built-ins sort calls into: walk them as they are.
    # One tuple per call, split into columns after the walk.
    calls: list[_Call] = []
    add_call = calls.append
    # Positions of calls that failed validation: the only ones that can start out of order
    # (pydantic-ai sets the failure stage on every such span it emits, since 2.27.1).
    invalid: list[int] = []
    failure_stage_key = pydantic_ai.FAILURE_STAGE
    orphans = False  # a call with no model request before it under its parent
    request_spans: list[SpanNode] = []
    # A call's issuer is the latest model request under the same parent span (its agent run):
    # parent (by id) -> index of that request.
    last_request: dict[int, int] = {}
    last_request_get = last_request.get
    notes: list[str] = []
    tool_name_key, request_model_key, operation_key = genai.TOOL_NAME, genai.REQUEST_MODEL, genai.OPERATION_NAME
    tool_prefix, request_operations = genai.TOOL_SPAN_PREFIX, genai.MODEL_REQUEST_OPERATIONS
    msg_key, output_prefix, deferral_key = (
        pydantic_ai.LOGFIRE_MSG,
        pydantic_ai.OUTPUT_FUNCTION_MSG_PREFIX,
        pydantic_ai.DEFERRAL_NAME,
    )
    v2_output = pydantic_ai.V2_OUTPUT_FUNCTION_SPAN
    for node in tree:
        attrs = node.attributes
        if tool_name_key in attrs:
            span_name = node.name
            if not (span_name.startswith(tool_prefix) or span_name in _TOOL_SPAN_NAMES):
                continue
            tool_name = attrs[tool_name_key]
            if type(tool_name) is not str:
                notes.append(
                    f'span {span_name!r} skipped: {tool_name_key} is {type(tool_name).__name__} {tool_name!r},'
                    ' not a string'
                )
                continue
            if tool_name == google_adk.MERGED_TOOLS_NAME:
                continue
            msg = attrs.get(msg_key)
            kind: CallKind
            if span_name == v2_output or (type(msg) is str and msg.startswith(output_prefix)):
                kind = 'output'
            elif deferral_key in attrs:
                kind = 'deferred'
            elif node.status == 'error':
                kind = 'failed'
                if attrs.get(failure_stage_key) == 'validation':
                    invalid.append(len(calls))
            else:
                kind = 'ok'
            parent = id(node.parent)
            issuer = last_request_get(parent)
            if issuer is None:
                orphans = True
            add_call((node, tool_name, kind, parent, issuer))
        elif request_model_key in attrs and attrs.get(operation_key) in request_operations:
            last_request[id(node.parent)] = len(request_spans)
            request_spans.append(node)
    if orphans and request_spans:
        calls = _recover_issuers(calls, request_spans)
    if invalid:
        calls = _in_issue_order(calls, invalid, request_spans)
    names = [c[1] for c in calls]
    kinds = [c[2] for c in calls]
    structure: list[AgentStructure] = []
    # The closures below outlive this call inside the cached trajectory: they must not hold the
    # tree, or the cache entry (dropped when the tree dies) would keep the tree alive forever.
    nodes = tree.nodes_by_id

    def agent_structure() -> AgentStructure:
        if not structure:
            structure.append(_agent_structure(nodes.values(), [c[0] for c in calls], request_spans))
        return structure[0]

    def make_call(index: int) -> ToolCall:
        # One record needs one path: climbing its ancestors beats walking the tree for all of them.
        span, name, kind, _, issuer = calls[index]
        path = structure[0].call_paths[index] if structure else _path_by_climbing(span)
        return _tool_call(span, name, kind, path, issuer)

    def make_requests() -> tuple[ModelRequest, ...]:
        paths = agent_structure().request_paths
        return tuple(_model_request(node, path) for node, path in zip(request_spans, paths, strict=True))

    return Trajectory.from_columns(
        names=names,
        kinds=kinds,
        request_total=len(request_spans),
        agent_structure=agent_structure,
        make_call=make_call,
        make_requests=make_requests,
        notes=tuple(notes),
    )


def _path_by_climbing(node: SpanNode) -> tuple[str, ...]:
    """The agent path of one span, from its ancestors (same result as `_agent_structure`)."""
    names: list[str] = []
    ancestor = node.parent
    while ancestor is not None:
        if is_agent_span(ancestor):
            names.append(agent_name(ancestor))
        ancestor = ancestor.parent
    return tuple(reversed(names))


def _agent_structure(
    nodes: Iterable[SpanNode], call_spans: list[SpanNode], request_spans: list[SpanNode]
) -> AgentStructure:
    """Agent runs and the agent path of every call and request: a second walk, made only when asked.

    Unscoped evaluators never need it, so the common case pays for one walk, not two.
    """
    # Agent runs are known by the id() of their span; 0 stands for "outside any agent run".
    run_of: dict[int, int] = {}  # span -> the run it is in (a run span maps to itself)
    path_of: dict[int, tuple[str, ...]] = {0: ()}  # run -> its agent path, outermost first
    agents: list[AgentRun] = []
    run_of_get = run_of.get
    for node in nodes:
        parent = node.parent
        if parent is None:
            run = 0
        else:
            found = run_of_get(id(parent))
            run = found if found is not None else _resolve_run(parent, run_of, path_of)
        run_of[id(node)] = run
        if is_agent_span(node):
            path = _start_run(node, run, run_of, path_of)
            agents.append(AgentRun(path[-1], path, node.span_id, node.start_timestamp, node.end_timestamp))
    return AgentStructure(
        tuple(agents),
        [path_of[run_of[id(span)]] for span in call_spans],
        [path_of[run_of[id(span)]] for span in request_spans],
    )


def _start_run(
    node: SpanNode, enclosing: int, run_of: dict[int, int], path_of: dict[int, tuple[str, ...]]
) -> tuple[str, ...]:
    """Register agent-run span `node`, inside run `enclosing`; returns its agent path."""
    key = id(node)
    path = path_of.get(key)
    if path is None:
        path = path_of[key] = (*path_of[enclosing], agent_name(node))
    run_of[key] = key
    return path


def _resolve_run(node: SpanNode, run_of: dict[int, int], path_of: dict[int, tuple[str, ...]]) -> int:
    """The run of a span not walked yet: a parent that starts after its child (clock skew, bad input)."""
    parent = node.parent
    enclosing = 0 if parent is None else run_of.get(id(parent))
    if enclosing is None:
        enclosing = _resolve_run(parent, run_of, path_of)  # type: ignore[arg-type]
    if is_agent_span(node):
        _start_run(node, enclosing, run_of, path_of)
        return id(node)
    run_of[id(node)] = enclosing
    return enclosing


def _recover_issuers(calls: list[_Call], requests: list[SpanNode]) -> list[_Call]:
    """Find the issuing response of calls that ran before any request of their own run.

    That happens when a run resumes with approved deferred calls: they execute first, under the new
    run, though a response of the earlier run issued them. Only their call ids can tell, so every
    response's output messages are read, which is why this runs only when such calls exist.
    """
    by_call_id: dict[str, int] = {}
    for index, request in enumerate(requests):
        for call_id in _issued_call_ids(request.attributes.get(genai.OUTPUT_MESSAGES)):
            by_call_id.setdefault(call_id, index)
    recovered: list[_Call] = []
    for span, name, kind, run, issuer in calls:
        recorded_id = _call_id(span) if issuer is None else None
        recovered.append((span, name, kind, run, by_call_id.get(recorded_id) if recorded_id is not None else issuer))
    return recovered


def _in_issue_order(calls: list[_Call], invalid: list[int], requests: list[SpanNode]) -> list[_Call]:
    """Start order, except that each model response's calls take the order the model issued them in.

    A call's issuer is the latest model request of its own agent run before it. pydantic-ai
    validates all of a response's calls before running any, so a call that fails validation starts
    before the siblings the model issued ahead of it, while calls that run start in issue order.
    Only a validation failure directly followed by a sibling can therefore be out of place, and
    only that response's `gen_ai.output.messages` are read. A group's calls are permuted among the
    group's own slots, so calls of other runs in between (a sub-agent's) stay where time put them;
    an approved deferred call, run on resumption in a new run, is not a sibling of its old group.
    """
    reordered: list[_Call] | None = None
    seen: set[tuple[int, int]] = set()
    for index in invalid:
        _, _, _, run, issuer = calls[index]
        if index + 1 == len(calls) or issuer is None or (issuer, run) in seen:
            continue
        following = calls[index + 1]
        if following[3] != run or following[4] != issuer:
            continue
        seen.add((issuer, run))
        slots = _sibling_slots(calls, index, run, issuer)
        positions = _issued_positions(requests[issuer], [_call_id(calls[i][0]) for i in slots])
        by_issue = sorted(slots, key=lambda i: (positions.get(_call_id(calls[i][0]), len(slots)), i))
        if by_issue != slots:
            reordered = reordered or list(calls)
            for slot, source in zip(slots, by_issue, strict=True):
                reordered[slot] = calls[source]
    return calls if reordered is None else reordered


def _sibling_slots(calls: list[_Call], first: int, run: int, issuer: int) -> list[int]:
    """Indices of the calls issued by `issuer` in `run`, from `first` until the run's next response."""
    slots: list[int] = []
    for index in range(first, len(calls)):
        call = calls[index]
        if call[3] != run:
            continue  # another run's call (a sub-agent's): not a sibling, not the end either
        if call[4] != issuer:
            break
        slots.append(index)
    return slots


def _call_id(node: SpanNode) -> str | None:
    value = node.attributes.get(genai.TOOL_CALL_ID)
    return value if isinstance(value, str) else None


def _issued_positions(request: SpanNode, call_ids: list[str | None]) -> dict[str | None, int]:
    """Call id -> position among the `tool_call` parts of a response's output messages.

    Finding each quoted id in the raw JSON is enough to order them and much cheaper than parsing;
    when an id is missing the messages are parsed properly.
    """
    raw = request.attributes.get(genai.OUTPUT_MESSAGES)
    if not isinstance(raw, str):
        return {}
    found: dict[str | None, int] = {call_id: raw.find(f'"{call_id}"') for call_id in call_ids if call_id is not None}
    if found and all(offset >= 0 for offset in found.values()):
        return found  # offsets order the ids like positions would
    return {call_id: position for position, call_id in enumerate(_issued_call_ids(raw))}


def _issued_call_ids(raw: object) -> Iterator[str]:
    if not isinstance(raw, str):
        return
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError:
        return
    for message in messages if isinstance(messages, list) else ():
        parts = message.get('parts') if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get('type') == 'tool_call' and isinstance(part.get('id'), str):
                yield part['id']


def _tool_call(node: SpanNode, name: str, kind: CallKind, path: tuple[str, ...], issuer: int | None) -> ToolCall:
    attrs = node.attributes
    raw = first_str(attrs, genai.TOOL_CALL_ARGUMENTS, pydantic_ai.V2_TOOL_ARGUMENTS)
    arguments, problem = parse_arguments(raw)
    recorded = attrs.get(genai.TOOL_CALL_ARGUMENTS, attrs.get(pydantic_ai.V2_TOOL_ARGUMENTS))
    if raw is None and recorded is not None:  # present, but not the JSON text the conventions say
        problem = f'were recorded as {type(recorded).__name__} {recorded!r}, not as JSON text.'
    status: CallStatus = ('failed' if node.status == 'error' else 'ok') if kind == 'output' else kind
    return ToolCall(
        name=name,
        arguments=arguments,
        raw_arguments=raw,
        arguments_problem=problem,
        call_id=_call_id(node),
        result=first_str(attrs, genai.TOOL_CALL_RESULT, pydantic_ai.V2_TOOL_RESULT),
        status=status,
        failure_stage=failure_stage(node) if status == 'failed' else None,
        agent=path[-1] if path else None,
        agent_path=path,
        start=node.start_timestamp,
        end=node.end_timestamp,
        span_id=node.span_id,
        issued_by=issuer,
        is_output_function=kind == 'output',
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


def _int(value: object) -> int:
    # Zero-valued token attributes are omitted by pydantic-ai, so absence means 0.
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
