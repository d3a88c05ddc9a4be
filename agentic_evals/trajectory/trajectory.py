"""What an agent did, as plain records extracted once from a pydantic-evals `SpanTree`.

`extract_trajectory(tree)` builds a `Trajectory`: every tool call attempt
(with its status, failure stage, agent and parsed arguments), every model request (with tokens and
cost) and every agent run. Evaluators, the CLI and user code read these records and never touch
spans themselves.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar, overload

from .account import TraceAccount
from .records import AgentRun, AgentStructure, CallKind, ModelRequest, ToolCall, belongs_to

_SelectionKey = tuple[bool, str | None, bool, str | None]
Recorded = Literal['tool calls', 'model requests']
"""What a check counts: a trace must record it for its absence to mean anything."""
_T = TypeVar('_T')


class CallList(Sequence[ToolCall]):
    """A read-only sequence of a trajectory's calls whose records are made on first access."""

    __slots__ = ('_indices', '_trajectory')

    def __init__(self, trajectory: Trajectory, indices: list[int]) -> None:
        self._trajectory = trajectory
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, index: int) -> ToolCall: ...

    @overload
    def __getitem__(self, index: slice) -> list[ToolCall]: ...

    def __getitem__(self, index: int | slice) -> ToolCall | list[ToolCall]:
        if isinstance(index, slice):
            return [self._trajectory._call(i) for i in self._indices[index]]
        return self._trajectory._call(self._indices[index])

    def arguments(self, index: int) -> tuple[dict[str, Any] | None, str | None]:
        """The parsed arguments of item `index` and why they are `None` (`ToolCall.arguments` and
        `arguments_problem`), without making its record: a check of one call's arguments reads
        nothing else of its span."""
        return self._trajectory._call_arguments(self._indices[index])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


_UNKNOWN = object()


class TrajectorySource(Protocol):
    """Where a trajectory extracted from spans gets each part, when first asked (the extractor's side).

    Counts can be answered without the columns, and the columns without any record, so a budget
    reads no more of the tree than it needs.
    """

    def columns(self) -> tuple[list[str], list[CallKind]]:
        """Names and kinds of every call attempt, in call order."""
        ...

    def call_counts(self) -> tuple[int, int]:
        """How many attempts succeeded and how many failed (output functions and deferred calls left out)."""
        ...

    def request_total(self) -> int: ...

    def agent_structure(self) -> AgentStructure: ...

    def make_call(self, index: int) -> ToolCall:
        """The record of call `index` in call order."""
        ...

    def call_arguments(self, index: int) -> tuple[dict[str, Any] | None, str | None]:
        """`make_call(index)`'s `arguments` and `arguments_problem`, reading nothing else."""
        ...

    def make_requests(self) -> tuple[ModelRequest, ...]: ...

    def notes(self) -> tuple[str, ...]: ...

    def families(self) -> list[str]:
        """The instrumentation families whose spans the trace holds."""
        ...

    def unrecognised(self) -> str | None:
        """What the spans look like, when there are none, or none is an agent run, a tool call or a
        model request; `None` otherwise."""
        ...

    def account(self) -> TraceAccount:
        """What the trace held and where each fact came from (tool spans, model spans, the join)."""
        ...

    def unrecorded(self, what: Recorded) -> str | None:
        """Why the trace cannot tell how many `what` the agent made (`None` when it can)."""
        ...


class Trajectory:
    """Everything extracted from one span tree (or one conversation), in the order things happened.

    Built from records (`Trajectory(tool_calls=..., model_requests=...)`) or, by the extractor,
    from a `TrajectorySource` that makes each part on first use: a count reads no columns, a
    scoring pass over 2,000 calls touches a list of names, not 2,000 objects, and only
    `ArgumentCorrectness`'s few calls are ever parsed. Treat it as read-only.
    """

    # One is made per tree: slots make that (and every read of its parts) a little cheaper.
    __slots__ = (
        '__weakref__',
        '_agent_names',
        '_kinds',
        '_memo',
        '_name_lists',
        '_names',
        '_notes',
        '_records',
        '_request_total',
        '_requests',
        '_selections',
        '_source',
        '_structure',
        '_unrecognised',
    )

    def __init__(
        self,
        tool_calls: Iterable[ToolCall] = (),
        model_requests: Iterable[ModelRequest] = (),
        agents: Iterable[AgentRun] = (),
        notes: Iterable[str] = (),
    ) -> None:
        calls = list(tool_calls)
        requests = tuple(model_requests)
        self._source: TrajectorySource | None = None
        self._notes: tuple[str, ...] | None = tuple(notes)
        self._names: list[str] | None = [c.name for c in calls]
        self._kinds: list[CallKind] = ['output' if c.is_output_function else c.status for c in calls]
        self._records: list[ToolCall | None] = list(calls)
        self._requests: tuple[ModelRequest, ...] | None = requests
        self._request_total: int | None = len(requests)
        self._structure: AgentStructure | None = AgentStructure(
            tuple(agents), [c.agent_path for c in calls], [r.agent_path for r in requests]
        )
        self._selections: dict[_SelectionKey, list[int]] = {}
        self._unrecognised: str | object | None = _UNKNOWN
        self._agent_names: set[str] | None = None
        self._name_lists: dict[_SelectionKey, list[str]] = {}
        self._memo: dict[Hashable, Any] = {}

    @classmethod
    def from_source(cls, source: TrajectorySource) -> Trajectory:
        """A trajectory whose parts are made by `source` on demand (the extractor's form)."""
        trajectory = cls.__new__(cls)  # every field set here: made for each tree, so kept cheap
        trajectory._source = source
        trajectory._notes = None
        trajectory._names = None
        trajectory._kinds = []
        trajectory._records = []
        trajectory._requests = None
        trajectory._request_total = None
        trajectory._structure = None
        trajectory._selections = {}
        trajectory._unrecognised = _UNKNOWN
        trajectory._agent_names = None
        trajectory._name_lists = {}
        trajectory._memo = {}
        return trajectory

    def memo(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """`make()`, made once per trajectory and `key`: what the evaluators of one case derive
        alike from it (a name list's counts, its text in a reason) is derived once. The trajectory
        is read-only, so a derived value never goes stale."""
        value = self._memo.get(key, _UNKNOWN)
        if value is _UNKNOWN:
            value = self._memo[key] = make()
        return value  # type: ignore[no-any-return]

    def memoised(self, key: Hashable) -> Any:
        """What `memo(key, ...)` made, or `None` when nothing was made for `key` yet."""
        return self._memo.get(key)

    @property
    def notes(self) -> tuple[str, ...]:
        """Spans that looked like tool calls but could not be read, with the reason they were skipped."""
        if self._notes is None:
            assert self._source is not None
            self._notes = self._source.notes()
        return self._notes

    def _columns(self) -> list[str]:
        """The names column (loading the kinds with it)."""
        if self._names is None:
            assert self._source is not None
            names, self._kinds = self._source.columns()
            self._records = [None] * len(names)
            self._names = names
        return self._names

    @property
    def families(self) -> tuple[str, ...]:
        """The instrumentation families recognised in the spans (`'pydantic-ai'`, `'otel-genai'`,
        `'openinference'`, ...), in the order they are asked; empty for a trajectory not read from spans."""
        return () if self._source is None else tuple(self._source.families())

    @property
    def unrecognised(self) -> str | None:
        """Why nothing was extracted from a trace that has spans, or `None`.

        Set when the trace holds no span, or no span is a recognised agent run, tool call or model
        request: the agent was not instrumented, or the trace is from an instrumentation this
        library does not read, and a score of it would say nothing about the agent. It names the
        spans' commonest names and attribute namespaces.
        """
        if self._source is None:
            return None
        if self._unrecognised is _UNKNOWN:
            self._unrecognised = self._source.unrecognised()
        return self._unrecognised  # type: ignore[return-value]

    def unrecorded(self, what: Recorded) -> str | None:
        """Why this trace cannot say how many `what` ('tool calls' or 'model requests') the agent
        made, or `None` when it can: a check that would pass on their absence fails with this reason.

        Set when the trace holds no span or nothing recognised (`unrecognised`); for tool calls, when
        the model responses issued calls but no tool span was recognised; for model requests, when
        tool calls or agent runs were recognised but no model-request span (the model is not
        instrumented). A trajectory built from records or a conversation always can.
        """
        if self._source is None:
            return None
        key = ('unrecorded', what)
        found = self._memo.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._memo[key] = self._source.unrecorded(what)
        return found  # type: ignore[no-any-return]

    @property
    def account(self) -> TraceAccount | None:
        """What the trace held, and where each fact came from (`TraceAccount`); `None` for a
        trajectory built from records or a conversation, which has no trace."""
        return None if self._source is None else self._source.account()

    @property
    def agents(self) -> tuple[AgentRun, ...]:
        """Every agent run, in start order."""
        return self._agent_structure().agents

    def _agent_structure(self) -> AgentStructure:
        if self._structure is None:
            assert self._source is not None
            self._structure = self._source.agent_structure()
        return self._structure

    def __repr__(self) -> str:
        return f'Trajectory({len(self._columns())} tool call(s), {self.request_count()} model request(s))'

    # -- tool calls ----------------------------------------------------------------------------

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call attempt, output functions and deferred calls included, in call order."""
        return tuple(self._call(i) for i in range(len(self._columns())))

    def calls(
        self,
        *,
        include_failed: bool = False,
        agent: str | None = None,
        include_subagents: bool = True,
        name: str | None = None,
    ) -> CallList:
        """The tool calls an evaluator scores: never output functions or deferred calls.

        Failed attempts count only with `include_failed`; `agent` narrows to one agent's calls
        (and its sub-agents' unless `include_subagents=False`); `name` to one tool. The result is a
        sequence whose records are made when read, so picking the last of 200 calls makes one.
        """
        return CallList(self, self._select(include_failed, agent, include_subagents, name))

    def call_names(
        self, *, include_failed: bool = False, agent: str | None = None, include_subagents: bool = True
    ) -> list[str]:
        """The names of `calls(...)`, without making the records (cached: evaluators share them)."""
        key = (include_failed, agent, include_subagents, None)
        selected = self._name_lists.get(key)
        if selected is None:
            names = self._columns()
            if agent is None and include_subagents:  # the common case, in one pass
                kinds = self._kinds
                kept = kinds.count('ok') + (kinds.count('failed') if include_failed else 0)
                if kept == len(names):  # every call kept (counted in C): the names as they are
                    selected = names.copy()
                else:
                    allowed = ('ok', 'failed') if include_failed else ('ok',)
                    selected = [n for n, kind in zip(names, kinds, strict=True) if kind in allowed]
            else:
                selected = [names[i] for i in self._select(include_failed, agent, include_subagents, None)]
            self._name_lists[key] = selected
        return selected

    def call_count(
        self, *, include_failed: bool = False, agent: str | None = None, include_subagents: bool = True
    ) -> int:
        """`len(calls(...))`, without making the records."""
        if agent is None and include_subagents:
            if self._names is None:  # a budget alone: the source counts without making the columns
                assert self._source is not None
                ok, failed = self._source.call_counts()
                return ok + (failed if include_failed else 0)
            kinds = self._kinds
            return kinds.count('ok') + (kinds.count('failed') if include_failed else 0)
        return len(self._select(include_failed, agent, include_subagents, None))

    def _select(self, include_failed: bool, agent: str | None, include_subagents: bool, name: str | None) -> list[int]:
        key = (include_failed, agent, include_subagents, name)
        selected = self._selections.get(key)
        if selected is None:
            allowed = ('ok', 'failed') if include_failed else ('ok',)
            names = self._columns()
            kinds = self._kinds
            if name is None:
                selected = [i for i, kind in enumerate(kinds) if kind in allowed]
            else:
                selected = [i for i, n in enumerate(names) if n == name and kinds[i] in allowed]
            if agent is not None or not include_subagents:
                paths = self._agent_structure().call_paths
                selected = [i for i in selected if belongs_to(paths[i], agent, include_subagents)]
            self._selections[key] = selected
        return selected

    def call_positions(
        self, include_failed: bool, agent: str | None, include_subagents: bool, name: str | None
    ) -> list[int]:
        """Where `calls(...)`'s items are among all calls (cached; do not modify): for a look-up of
        one item without making a sequence of them."""
        return self._select(include_failed, agent, include_subagents, name)

    def call_arguments(self, position: int) -> tuple[dict[str, Any] | None, str | None]:
        """The parsed arguments of the call at `position` (see `call_positions`) and why they are
        `None`, as its record says, without making the record."""
        return self._call_arguments(position)

    def _call(self, index: int) -> ToolCall:
        record = self._records[index]
        if record is None:
            assert self._source is not None
            record = self._records[index] = self._source.make_call(index)
        return record

    def _call_arguments(self, index: int) -> tuple[dict[str, Any] | None, str | None]:
        record = self._records[index]
        if record is not None:
            return record.arguments, record.arguments_problem
        assert self._source is not None
        return self._source.call_arguments(index)

    # -- model requests ------------------------------------------------------------------------

    @property
    def model_requests(self) -> tuple[ModelRequest, ...]:
        """Every model request, in start order."""
        if self._requests is None:
            assert self._source is not None
            self._requests = self._source.make_requests()
        return self._requests

    def requests(self, *, agent: str | None = None, include_subagents: bool = True) -> list[ModelRequest]:
        """The model requests made by `agent` (every agent when `None`)."""
        return [r for r in self.model_requests if belongs_to(r.agent_path, agent, include_subagents)]

    def request_count(self, *, agent: str | None = None, include_subagents: bool = True) -> int:
        """`len(requests(...))`, without making the records."""
        if agent is None and include_subagents:
            if self._request_total is None:
                assert self._source is not None
                self._request_total = self._source.request_total()
            return self._request_total
        paths = self._agent_structure().request_paths
        return sum(1 for path in paths if belongs_to(path, agent, include_subagents))

    # -- turns ---------------------------------------------------------------------------------

    def turns(self) -> list[Trajectory]:
        """One trajectory per turn of a conversation: each outermost agent run, in start order.

        A multi-turn case (several runs in one task, several traces of one conversation, or a
        message history with several user prompts) scores turn by turn. Calls and requests belong
        to the last outermost run that started before them (those before every run, to the first);
        without agent runs, or with one, the whole trajectory is the one turn.
        """
        outer = sorted((run for run in self.agents if len(run.path) <= 1), key=lambda run: run.start)
        if len(outer) <= 1:
            return [self]
        starts = [run.start for run in outer]

        def turn_of(start: datetime) -> int:
            return max(bisect_right(starts, start) - 1, 0)

        requests: list[list[ModelRequest]] = [[] for _ in outer]
        renumbered: dict[int, tuple[int, int]] = {}  # a request's index in the trajectory -> (turn, index in it)
        for index, request in enumerate(self.model_requests):
            turn = turn_of(request.start)
            renumbered[index] = (turn, len(requests[turn]))
            requests[turn].append(request)
        calls: list[list[ToolCall]] = [[] for _ in outer]
        for call in self.tool_calls:
            turn = turn_of(call.start)
            if call.issued_by is not None:
                issuer = renumbered.get(call.issued_by)
                call = replace(call, issued_by=issuer[1] if issuer is not None and issuer[0] == turn else None)
            calls[turn].append(call)
        runs: list[list[AgentRun]] = [[] for _ in outer]
        for run in self.agents:
            runs[turn_of(run.start)].append(run)
        return [
            Trajectory(turn_calls, turn_requests, turn_runs, self.notes)
            for turn_calls, turn_requests, turn_runs in zip(calls, requests, runs, strict=True)
        ]

    # -- agents --------------------------------------------------------------------------------

    @property
    def agent_names(self) -> list[str]:
        """Distinct agent names, sorted."""
        return sorted(self._all_agent_names())

    def has_agent(self, name: str) -> bool:
        return name in self._all_agent_names()

    def _all_agent_names(self) -> set[str]:
        # Asked by the evaluator base and again by the metric it calls: build the set once.
        if self._agent_names is None:
            structure = self._agent_structure()
            names = {run.name for run in structure.agents}
            for path in (*structure.call_paths, *structure.request_paths):
                names.update(path)
            self._agent_names = names
        return self._agent_names
