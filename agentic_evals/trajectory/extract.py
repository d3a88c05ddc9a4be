"""Extraction: a `SpanTree`'s `Trajectory`, read through the conventions registry and cached per tree.

The rules (which spans count, how status, failure stage, agent and order are decided) are listed
with the spans they read in `docs/trajectory.md`; the families in `agentic_evals.conventions` hold
them.

Nothing is read before it is asked for. A budget alone walks the tree once, counting; anything
that needs names walks it once for every call and request (`walk.walk`), and keeps columns;
records, arguments, issuers and agent paths are made only for what is read.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Collection
from operator import itemgetter
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from ..conventions.arguments import load_json, parse_arguments
from ..conventions.family import Arguments, IssuedCall, SpanKind
from ..conventions.genai import is_side_span
from ..conventions.registry import NOT_RECORDED_ANYWHERE, REGISTRY, Switches
from .account import TraceAccount
from .agents import Adopters, agent_structure, path_by_climbing
from .issue_order import Issuers, in_issue_order
from .records import AgentStructure, CallKind, CallStatus, ModelRequest, ToolCall
from .trajectory import Recorded, Trajectory
from .walk import KIND, NAME, REQUEST_SPAN, SPAN, Call, Counts, Walked, count, requests_of, walk


def extract_trajectory(tree: SpanTree) -> Trajectory:
    """The trajectory of `tree`, made on first use and cached for the tree's lifetime.

    Every evaluator on a case reads the same tree, so caching by tree identity makes the number of
    evaluators free. The cache holds the tree weakly and also checks the span count, so a tree
    that gains spans after extraction is extracted again.
    """
    # The evaluators of a case ask one after another: the last tree extracted is checked first.
    # No lock: each read and write below is one dict or list operation, atomic on its own, and an
    # entry found is used only when its weak reference still points at this very tree.
    last = _last[0]
    if last is not None and last[0]() is tree and last[1] == len(tree.nodes_by_id):
        return last[2]
    key = id(tree)
    cached = _cache.get(key)
    if cached is not None:
        ref, size, trajectory = cached
        if ref() is tree and size == len(tree.nodes_by_id):
            _last[0] = cached
            return trajectory
    trajectory = _extract(tree)
    ref = _TreeRef(tree, _forget)
    ref.key = key
    entry = (ref, len(tree.nodes_by_id), trajectory)
    _cache[key] = entry
    _last[0] = entry
    return trajectory


class _TreeRef(weakref.ref[SpanTree]):
    """A weak reference to a cached tree that knows its cache key (cheaper than a `partial`)."""

    __slots__ = ('key',)
    key: int


_Entry = tuple[_TreeRef, int, Trajectory]
_cache: dict[int, _Entry] = {}
_last: list[_Entry | None] = [None]
"""The entry of the tree extracted or found last (dropped with its tree, like the others)."""


def _forget(ref: _TreeRef, cache: dict[int, Any] = _cache, last: list[Any] = _last) -> None:
    # Bound as defaults so it still works while the interpreter tears module globals down.
    entry = cache.get(ref.key)
    if entry is not None and entry[0] is ref:  # not a newer tree's entry under a reused id
        cache.pop(ref.key, None)
    entry = last[0]
    if entry is not None and entry[0] is ref:
        last[0] = None


def _extract(tree: SpanTree) -> Trajectory:
    """A trajectory that reads `tree`'s spans when asked: made once per tree."""
    # The dict's view, not a copy: copying touches every node once more on a fresh tree (a cache
    # miss each), which is most of what counting requests alone costs.
    return Trajectory.from_source(SpanSource(tree.nodes_by_id.values()))


class SpanSource:
    """A tree's spans, read by the walks as the trajectory asks (see `TrajectorySource`).

    It holds the tree's nodes (a view of its `nodes_by_id`), never the tree: the cache entry, dropped
    when the tree dies, holds the trajectory, so holding the tree would keep it alive forever.
    pydantic-evals keeps a tree's nodes in start order (ties in insertion order), the order its
    built-ins sort calls into.
    """

    __slots__ = (
        '_account',
        '_adopters_made',
        '_climbs',
        '_counts',
        '_issuers',
        '_nodes',
        '_order',
        '_ordered',
        '_requests',
        '_structure',
        '_switches',
        '_walked',
    )

    def __init__(self, nodes: Collection[SpanNode]) -> None:
        self._nodes = nodes
        self._walked: Walked | None = None
        self._counts: Counts | None = None
        self._requests: list[SpanNode] | None = None
        self._ordered: list[Call] | None = None
        self._order: list[int] | None = None
        self._issuers: Issuers | None = None
        self._structure: AgentStructure | None = None
        self._adopters_made: Adopters | None = None
        self._account: TraceAccount | None = None
        self._climbs = 0
        self._switches: Switches | None = None

    def _adopters(self) -> Adopters:
        """The calls, for a record whose outermost agent run may have lost its link to one."""
        if self._adopters_made is None:
            self._adopters_made = Adopters([call[SPAN] for call in self._walk().calls])
        return self._adopters_made

    def _walk(self) -> Walked:
        if self._walked is None:
            self._walked = walk(self._nodes)
        return self._walked

    def _calls(self) -> list[Call]:
        """The calls in call order."""
        if self._ordered is None:
            walked = self._walk()
            calls = walked.calls
            self._order = in_issue_order(calls, walked.invalid, walked.breaks, walked.requests, self._issuers_of)
            self._ordered = calls if self._order is None else [calls[i] for i in self._order]
        return self._ordered

    def _issuers_of(self) -> Issuers:
        """The issuers of the walk's positions: made when a call's issuer is first asked (most
        trees are put in call order without asking any)."""
        if self._issuers is None:
            walked = self._walk()
            self._issuers = Issuers(walked.calls, walked.requests)
        return self._issuers

    def _position(self, index: int) -> int:
        """The walk position of call `index` (call order)."""
        return index if self._order is None else self._order[index]

    def columns(self) -> tuple[list[str], list[CallKind]]:
        calls = self._calls()
        names = list(map(_NAME_OF, calls))
        kinds: list[SpanKind] = list(map(_KIND_OF, calls))
        if 'invalid' in kinds:
            kinds = [_KINDS[kind] for kind in kinds]
        return names, kinds  # type: ignore[return-value]  # no 'invalid' left

    def call_counts(self) -> tuple[int, int]:
        if self._walked is not None:
            kinds = [call[KIND] for call in self._walked.calls]
            return kinds.count('ok'), kinds.count('failed') + kinds.count('invalid')
        if self._counts is None:
            self._counts = count(self._nodes)
        return self._counts.ok, self._counts.failed

    def request_total(self) -> int:
        if self._walked is not None:
            return len(self._walked.requests)
        if self._counts is not None:
            return self._counts.requests
        return len(self.request_spans())

    def request_spans(self) -> list[SpanNode]:
        """Every model-request span, without reading any tool span."""
        if self._requests is None:
            if self._walked is not None:
                self._requests = [request[REQUEST_SPAN] for request in self._walked.requests]
            else:
                self._requests = requests_of(self._nodes)
        return self._requests

    def agent_structure(self) -> AgentStructure:
        if self._structure is None:
            calls = self._calls()
            request_spans = [request[REQUEST_SPAN] for request in self._walk().requests]
            self._structure = agent_structure(self._nodes, [call[SPAN] for call in calls], request_spans)
        return self._structure

    def make_call(self, index: int) -> ToolCall:
        calls = self._calls()
        issuers = self._issuers_of()
        node, name, kind = calls[index]
        # One record needs one path: climbing its ancestors beats walking the tree for all of them;
        # past a few records, one walk for every path beats a climb each.
        if self._structure is None and self._climbs >= _CLIMBS_BEFORE_WALKING:
            self.agent_structure()
        if self._structure is not None:
            path = self._structure.call_paths[index]
        else:
            self._climbs += 1
            path = path_by_climbing(node, self._adopters)
        position = self._position(index)
        arguments, issued = self._arguments(position)
        status: CallStatus
        if kind == 'output':
            status = 'failed' if node.status == 'error' else 'ok'
        else:
            status = 'failed' if kind == 'invalid' else kind
        return ToolCall(
            name=name,
            arguments=arguments.parsed,
            raw_arguments=arguments.raw,
            arguments_problem=arguments.problem,
            call_id=issuers.call_id(position) or (issued.call_id if issued is not None else None),
            result=REGISTRY.result(node),
            status=status,
            failure_stage=REGISTRY.failure_stage(node) if status == 'failed' else None,
            agent=path[-1] if path else None,
            agent_path=path,
            start=node.start_timestamp,
            end=node.end_timestamp,
            span_id=node.span_id,
            issued_by=issuers(position),
            is_output_function=kind == 'output',
        )

    def call_arguments(self, index: int) -> tuple[dict[str, Any] | None, str | None]:
        arguments, _ = self._arguments(self._position(index))
        return arguments.parsed, arguments.problem

    def _not_recorded(self, node: SpanNode) -> Arguments:
        if self._switches is None:  # made for the first call without arguments: most trees have none
            self._switches = Switches(REGISTRY)
        return self._switches.not_recorded(node)

    def _arguments(self, position: int) -> tuple[Arguments, IssuedCall | None]:
        """Call `position`'s arguments (walk order) and the call as its response issued it (when
        looked up): the span's own when it records an object; otherwise the issuing response's, and
        a bare value recorded for a one-parameter tool gets that parameter's name from there."""
        node = self._walk().calls[position][SPAN]
        issuers = self._issuers_of()
        own = issuers.arguments(position)
        if own.parsed is not None and issuers.call_id(position) is not None:
            return own, None
        issued = issuers.issued_call(position)
        if own.parsed is not None or issued is None or issued.arguments is None:
            return (self._not_recorded(node) if own is NOT_RECORDED_ANYWHERE else own), issued
        return joined_arguments(own, issued.arguments), issued

    def make_requests(self) -> tuple[ModelRequest, ...]:
        paths = self.agent_structure().request_paths
        return tuple(
            _model_request(request[REQUEST_SPAN], path)
            for request, path in zip(self._walk().requests, paths, strict=True)
        )

    def notes(self) -> tuple[str, ...]:
        unrecognised = self.unrecognised()
        return (*self._walk().notes, *self.account().notes(), *([] if unrecognised is None else [unrecognised]))

    def account(self) -> TraceAccount:
        if self._account is None:
            self._account = self._make_account()
        return self._account

    def _make_account(self) -> TraceAccount:
        walked = self._walk()
        issuers = self._issuers_of()
        issued_by = issuers.issued

        from_spans = from_responses = missing = results = 0
        matched: set[tuple[int, int]] = set()  # (request, place in its issued calls)
        ran_ids: set[str] = set()
        run_not_issued: list[str] = []
        for position, (node, name, _) in enumerate(walked.calls):
            own = issuers.arguments(position)
            arguments, entry = self._arguments(position)
            if own.parsed is not None:
                from_spans += 1
            elif arguments.parsed is not None:
                from_responses += 1
            else:
                missing += 1
            results += REGISTRY.result(node) is not None
            entry = entry or issuers.issued_call(position)
            call_id = issuers.call_id(position) or (entry.call_id if entry is not None else None)
            if call_id is not None:
                ran_ids.add(call_id)
            issuer = issuers(position)
            if issuer is None:
                continue
            calls = issued_by(issuer)
            if entry is not None and entry in calls:
                matched.add((issuer, calls.index(entry)))
            elif calls and call_id is not None and all(c.call_id != call_id for c in calls):
                run_not_issued.append(f'{name!r} ({call_id})')
        issued = 0
        not_run: list[str] = []
        for request in range(len(walked.requests)):
            calls = issued_by(request)
            issued += len(calls)
            not_run.extend(
                f'{call.name!r} ({call.call_id or "no id"})'
                for place, call in enumerate(calls)
                if (request, place) not in matched and (call.call_id is None or call.call_id not in ran_ids)
            )
        structure = self.agent_structure()
        return TraceAccount(
            spans=len(self._nodes),
            families=tuple(self.families()),
            tool_spans=len(walked.calls),
            arguments_from_spans=from_spans,
            arguments_from_responses=from_responses,
            arguments_missing=missing,
            results=results,
            model_spans=len(walked.requests),
            with_tokens=sum(1 for request in walked.requests if REGISTRY.usage(request[REQUEST_SPAN])),
            issued=issued,
            issued_not_run=tuple(not_run),
            run_not_issued=tuple(run_not_issued),
            agents=tuple(sorted({run.name for run in structure.agents})),
        )

    def families(self) -> list[str]:
        return REGISTRY.families_in(self._nodes)

    def unrecognised(self) -> str | None:
        if not self._nodes:
            return EMPTY_TRACE
        if self._requests or (self._counts is not None and any(self._counts)):
            return None  # what was counted already shows the trace was read
        walked = self._walk()  # asked only of a failing result on a trace not walked yet
        found = walked.calls or walked.requests or walked.notes  # a note: a call was seen, but unreadable
        if found or any(REGISTRY.agent_run(node) is not None for node in self._nodes):
            return None
        return describe_unrecognised(self._nodes)

    def unrecorded(self, what: Recorded) -> str | None:
        unrecognised = self.unrecognised()
        if unrecognised is not None:
            return unrecognised
        walked = self._walk()
        if what == 'tool calls':
            if walked.calls:
                return None
            if walked.notes:  # spans that looked like calls, none readable
                return f'no tool call could be read: {walked.notes[0]}'
            issued = [
                call.name
                for request in walked.requests[:_RESPONSES_READ]
                for call in REGISTRY.issued(request[REQUEST_SPAN])
            ]
            if not issued:
                return None
            shown = ', '.join(repr(name) for name in sorted(set(issued))[:_SHOWN])
            return (
                f'the model responses issued {len(issued)} tool call(s) ({shown}) but no tool span was recognised:'
                ' the tool spans are in a shape agentic_evals does not read, or the framework did not record them'
                f' (see docs/frameworks.md; the trace held {self.account().summary()})'
            )
        if walked.requests:
            return None
        runs = sum(1 for node in self._nodes if REGISTRY.agent_run(node) is not None)
        seen = ' and '.join(
            f'{n} {label}' for n, label in ((len(walked.calls), 'tool call(s)'), (runs, 'agent run(s)')) if n
        )
        advice = REGISTRY.model_spans_advice(self._nodes) or _MODEL_SPANS_ADVICE
        return (
            f'the trace records no model-request span ({seen} recognised): {advice}'
            f' (the trace held {self.account().summary()})'
        )


EMPTY_TRACE = (
    'the trace holds no span: the agent is probably not instrumented (pydantic-ai: `instrument=True` on the'
    ' Agent, or `Agent.instrument_all()`; other frameworks: see docs/frameworks.md), or `capture()` was given'
    " another tracer provider than the one the agent's spans go to"
)
_MODEL_SPANS_ADVICE = 'instrument the model client too, so each model request has a span (see docs/frameworks.md)'
_CLIMBS_BEFORE_WALKING = 16
"""Records whose agent path is found by climbing before the whole agent structure is walked once."""
_RESPONSES_READ = 10_000
"""At most this many responses are read for the calls they issued, on a trace with no tool span."""


def joined_arguments(own: Arguments, issued: str) -> Arguments:
    """A call's arguments from its span (`own`, not an object) and from the response that issued it."""
    parsed, problem = parse_arguments(issued)
    if own.raw is None:  # not recorded on the span: the response's, as the model wrote them
        return Arguments(parsed, issued, problem)
    if parsed is None:
        return own  # neither is an object (the model sent invalid JSON, recorded alike on both)
    bare = bare_value(own.raw)
    if bare is not _NOT_BARE and len(parsed) == 1:  # one parameter: the value the span recorded, named
        ((key, value),) = parsed.items()
        return Arguments(parsed if value == bare else {key: bare}, own.raw, None)
    # The span recorded something else than an object (a bare value for several parameters,
    # positional values without their names, a list): the model's arguments, as it issued them.
    return Arguments(parsed, issued, None)


_NOT_BARE: Any = object()


def bare_value(raw: str) -> Any:
    """The one value a span recorded instead of an arguments object (LangGraph records a
    one-string-parameter tool's argument as `"Paris"`, or as the text `Paris`), or `_NOT_BARE`."""
    try:
        value = load_json(raw)
    except ValueError:
        return _NOT_BARE if raw.lstrip()[:1] in ('{', '[') else raw
    return _NOT_BARE if isinstance(value, (dict, list)) else value


def describe_unrecognised(nodes: Collection[SpanNode]) -> str:
    """A note on spans no family recognised: how many, their commonest names and attribute namespaces."""
    if all(is_side_span(node) for node in nodes):
        return (
            f'only {len(nodes)} create_agent span(s): agent objects being built, recorded as a trace beside the run'
            ' (a side trace, never a case of its own)'
        )
    names = Counter(node.name if isinstance(node.name, str) else repr(node.name) for node in nodes)
    namespaces = Counter(str(key).split('.', 1)[0] for node in nodes for key in node.attributes)
    shown_names = ', '.join(f'{name[:_LONGEST]!r} x{n}' for name, n in names.most_common(_SHOWN))
    shown_keys = ', '.join(f'{key[:_LONGEST]}.*' for key, _ in namespaces.most_common(_SHOWN)) or 'none'
    return (
        f'no agent run, tool call or model request recognised in {len(nodes)} span(s)'
        f' (span names: {shown_names}; attribute namespaces: {shown_keys}): the agent itself is probably not'
        ' instrumented (only spans around it were recorded), or this instrumentation is not one'
        ' agentic_evals reads (see docs/frameworks.md)'
    )


_SHOWN = 5
_LONGEST = 40


def _model_request(node: SpanNode, path: tuple[str, ...]) -> ModelRequest:
    facts = REGISTRY.request_facts(node)
    return ModelRequest(
        model=facts.model,
        operation=facts.operation,
        input_tokens=facts.input_tokens,
        output_tokens=facts.output_tokens,
        cache_read_tokens=facts.cache_read_tokens,
        cache_write_tokens=facts.cache_write_tokens,
        cost=facts.cost,
        agent=path[-1] if path else None,
        agent_path=path,
        start=node.start_timestamp,
        end=node.end_timestamp,
        span_id=node.span_id,
    )


def model_request_spans(tree: SpanTree) -> list[SpanNode]:
    """Every model-request span of `tree`: the requests of its trajectory.

    Shared with the cached trajectory, so the run metrics and a budget read them once.
    """
    source = extract_trajectory(tree)._source
    assert isinstance(source, SpanSource)
    return source.request_spans()


_NAME_OF = itemgetter(NAME)
_KIND_OF = itemgetter(KIND)

_KINDS: dict[SpanKind, CallKind] = {
    'ok': 'ok',
    'failed': 'failed',
    'deferred': 'deferred',
    'output': 'output',
    'invalid': 'failed',
}
"""A call's kind in the columns: a call rejected before running is a failed one."""
