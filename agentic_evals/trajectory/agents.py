"""Who did what: agent runs and the agent path of every call and request, from span parent links.

A call belongs to the nearest enclosing agent run; its path lists every enclosing run, outermost
first. Agent-as-tool delegation nests `invoke_agent expert` under `execute_tool ask_expert`, so the
path tells the expert's calls from the main agent's.

Paths are capped at `MAX_AGENT_DEPTH` names: a run nested deeper keeps the outermost
`MAX_AGENT_DEPTH - 1` and its own name. Real agents nest a few levels; without the cap a trace of
runs nested 10,000 deep would hold paths of 50 million names in all.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from datetime import datetime

from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.registry import REGISTRY
from .records import AgentRun, AgentStructure

agent_run = REGISTRY.agent_run
loses_parent_run = REGISTRY.loses_parent_run

MAX_AGENT_DEPTH = 64
"""The most names an agent path holds (see the module docstring)."""


def capped(path: tuple[str, ...], name: str) -> tuple[str, ...]:
    """`path` of the enclosing run, extended by `name` within `MAX_AGENT_DEPTH`."""
    if len(path) < MAX_AGENT_DEPTH:
        return (*path, name)
    return (*path[: MAX_AGENT_DEPTH - 1], name)


def path_by_climbing(node: SpanNode, adopters: Callable[[], Adopters] | None = None) -> tuple[str, ...]:
    """The agent path of one span, from its ancestors (the same result as `agent_structure`).

    `adopters` gives the calls a top-level run may have run inside (see `Adopters`); asked only
    when the outermost run found has a parent span.
    """
    names: list[str] = []
    start: SpanNode | None = node
    for _ in range(MAX_AGENT_DEPTH):  # each adoption moves to a call that started earlier
        assert start is not None
        outermost = _climb(start, names)
        if outermost is None or outermost.parent is None or adopters is None or not loses_parent_run(outermost):
            break
        start = adopters().containing(outermost)
        if start is None:
            break
    names.reverse()
    if len(names) > MAX_AGENT_DEPTH:
        return (*names[: MAX_AGENT_DEPTH - 1], names[-1])
    return tuple(names)


def _climb(node: SpanNode, names: list[str]) -> SpanNode | None:
    """Append the names of the runs above `node`, innermost first; the outermost run's span."""
    outermost = None
    ancestor = node.parent
    climbed = 0
    seen: set[int] | None = None
    while ancestor is not None:
        name = agent_run(ancestor)
        if name is not None:
            names.append(name)
            outermost = ancestor
        ancestor = ancestor.parent
        climbed += 1
        if climbed > _CYCLE_CHECK_AFTER and ancestor is not None:
            # Deeper than real runs nest: remember the way up, so a parent cycle ends the climb.
            seen = set() if seen is None else seen
            if id(ancestor) in seen:
                break
            seen.add(id(ancestor))
    return outermost


_CYCLE_CHECK_AFTER = 256


def agent_structure(
    nodes: Iterable[SpanNode], call_spans: list[SpanNode], request_spans: list[SpanNode]
) -> AgentStructure:
    """Agent runs and the agent path of every call and request: a walk made only when asked.

    Unscoped evaluators never need it, so the common case pays for one walk, not two.
    """
    # Agent runs are known by the id() of their span; 0 stands for "outside any agent run".
    run_of: dict[int, int] = {}  # span -> the run it is in (a run span maps to itself)
    path_of: dict[int, tuple[str, ...]] = {0: ()}  # run -> its agent path, outermost first
    agents: list[AgentRun] = []
    run_of_get = run_of.get
    adopters = Adopters(call_spans)
    for node in nodes:
        parent = node.parent
        if parent is None:
            run = 0
        else:
            found = run_of_get(id(parent))
            run = found if found is not None else _resolve_run(parent, run_of, path_of)
        run_of[id(node)] = run
        name = agent_run(node)
        if name is not None:
            if run == 0 and parent is not None and loses_parent_run(node):
                call = adopters.containing(node)
                run = 0 if call is None else run_of_get(id(call), 0)
            path = _start_run(node, name, run, run_of, path_of)
            agents.append(AgentRun(path[-1], path, node.span_id, node.start_timestamp, node.end_timestamp))
    for span in call_spans:
        if id(span) not in run_of:  # a span a family made for one of several calls a span ran (`Part`)
            run_of[id(span)] = run_of[id(span.parent)]
    return AgentStructure(
        tuple(agents),
        [path_of[run_of[id(span)]] for span in call_spans],
        [path_of[run_of[id(span)]] for span in request_spans],
    )


class Adopters:
    """The tool call a top-level agent run really ran inside, for instrumentations that lose the link.

    OpenLLMetry parents a sub-agent's run (the OpenAI Agents SDK's agent-as-tool) to the trace's
    root, although it runs inside the tool call's time. A run under no other run, with a parent
    span, whose family says it loses its parent (`Family.loses_parent_run`; never pydantic-ai's,
    whose parallel agents are not each other's sub-agents), is nested in the latest call started
    before it whose time holds its own (of the few calls started
    just before it: real delegations start within a call, so a long scan is never needed).
    """

    SCAN = 32

    def __init__(self, calls: list[SpanNode]) -> None:
        self._given = calls
        self._calls: list[SpanNode] | None = None  # sorted on the first question: most traces ask none
        self._starts: list[datetime] = []

    def containing(self, node: SpanNode) -> SpanNode | None:
        if self._calls is None:
            self._calls = sorted(self._given, key=lambda c: c.start_timestamp)
            self._starts = [c.start_timestamp for c in self._calls]
        start, end = node.start_timestamp, node.end_timestamp
        position = bisect_right(self._starts, start)
        for call in reversed(self._calls[max(0, position - self.SCAN) : position]):
            # Strictly earlier: a call of the run itself (equal or missing times) never adopts it.
            if call.start_timestamp < start and call.end_timestamp >= end and call.trace_id == node.trace_id:
                return call
        return None


def _start_run(
    node: SpanNode, name: str, enclosing: int, run_of: dict[int, int], path_of: dict[int, tuple[str, ...]]
) -> tuple[str, ...]:
    """Register agent-run span `node`, inside run `enclosing`; returns its agent path."""
    key = id(node)
    path = path_of.get(key)
    if path is None:
        path = path_of[key] = capped(path_of[enclosing], name)
    run_of[key] = key
    return path


def _resolve_run(node: SpanNode, run_of: dict[int, int], path_of: dict[int, tuple[str, ...]]) -> int:
    """The run of a span not walked yet: a parent that starts after its child (clock skew, bad input).

    Iterative, so a chain of any depth resolves: climb to the first ancestor already walked (or a
    root, or back to a span already on the way up: a parent cycle), then settle the chain top down.
    """
    chain: list[SpanNode] = []
    on_chain: set[int] = set()
    enclosing = 0
    ancestor: SpanNode | None = node
    while ancestor is not None and id(ancestor) not in on_chain:
        found = run_of.get(id(ancestor))
        if found is not None:
            enclosing = found
            break
        chain.append(ancestor)
        on_chain.add(id(ancestor))
        ancestor = ancestor.parent
    for span in reversed(chain):
        name = agent_run(span)
        if name is not None:
            _start_run(span, name, enclosing, run_of, path_of)
            enclosing = id(span)
        else:
            run_of[id(span)] = enclosing
    return enclosing
