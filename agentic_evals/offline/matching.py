"""Which loaded trace belongs to which case of a dataset.

Which trace belongs to which case, in order of preference:

1. a root span whose `case_name` attribute equals the case name (pydantic-evals' case spans
   carry it, so a trace exported from a pydantic-evals run matches itself);
2. a trace whose file name without extensions equals the case name;
3. a trace id in the case's metadata: `metadata['trace_id']` or `metadata.trace_id`
   (32 hex characters, case-insensitive).

The first rule that finds any trace decides; two traces found by it make the case ambiguous, an
`AmbiguousTraceError` (scoring one of them silently could hide the other, a regression, say). A
case with no trace becomes a failure in the report, with the rules it tried.

Traces stream: without a dataset each is scored as soon as it is loaded and then dropped; with
one, only traces that match a case are kept until they are scored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_evals import Case
from pydantic_evals.otel.span_tree import SpanTree

from ..conventions.pydantic_evals import CASE_NAME
from ..errors import AgenticEvalsError
from ..trajectory.run_io import trace_inputs

CASE_NAME_ATTRIBUTE = CASE_NAME
_RULES = (f'{CASE_NAME} attribute', 'file name', 'metadata trace_id')


class TraceLike(Protocol):
    """What scoring needs of a loaded trace (`agentic_evals.traces.LoadedTrace` is one)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def tree(self) -> SpanTree: ...

    @property
    def name(self) -> str: ...


class AmbiguousTraceError(AgenticEvalsError, ValueError):
    """Cases that each match more than one trace by the same rule; `str()` lists them all."""


@dataclass(frozen=True)
class CaseMatch:
    """A case and its trace (`None` when none was found), with the rule that paired them."""

    case: Case[Any, Any, Any]
    trace: TraceLike | None
    why: str


@dataclass
class TraceMatcher:
    """Pairs streamed traces with a dataset's cases, keeping only traces that match one.

    `offer` each trace as it is loaded, then `matches()`; `unmatched` names the traces no case
    wanted (their trees are not kept).
    """

    cases: Sequence[Case[Any, Any, Any]]
    unmatched: list[str] = field(default_factory=list[str])
    """`'name (trace id)'` of every offered trace that matches no case."""

    def __post_init__(self) -> None:
        self._names = [case.name or f'Case {i + 1}' for i, case in enumerate(self.cases)]
        self._by_name: dict[str, int] = {name: i for i, name in enumerate(self._names)}
        self._by_id: dict[str, int] = {}
        for index, case in enumerate(self.cases):
            wanted = _metadata_trace_id(case.metadata)
            if wanted is not None:
                self._by_id.setdefault(wanted, index)
        # case index -> rule rank -> the traces that rule found for it
        self._found: dict[int, dict[int, list[TraceLike]]] = {}

    def offer(self, trace: TraceLike) -> bool:
        """Keep `trace` if it matches a case (by any rule); returns whether it was kept."""
        hits: list[tuple[int, int]] = []
        for root in trace.tree.roots:
            value = root.attributes.get(CASE_NAME_ATTRIBUTE)
            if isinstance(value, str) and value in self._by_name:
                hits.append((self._by_name[value], 0))
        if trace.name in self._by_name:
            hits.append((self._by_name[trace.name], 1))
        if trace.trace_id.lower() in self._by_id:
            hits.append((self._by_id[trace.trace_id.lower()], 2))
        for case_index, rank in dict.fromkeys(hits):
            self._found.setdefault(case_index, {}).setdefault(rank, []).append(trace)
        if not hits:
            self.unmatched.append(f'{trace.name} ({trace.trace_id})')
        return bool(hits)

    def matches(self) -> list[CaseMatch]:
        """Every case with its trace, in case order; raises `AmbiguousTraceError` first if any is ambiguous."""
        result: list[CaseMatch] = []
        ambiguous: list[str] = []
        for index, case in enumerate(self.cases):
            found = self._found.get(index, {})
            if not found:
                result.append(CaseMatch(case, None, self._tried(index)))
                continue
            rank = min(found)
            traces = found[rank]
            if len(traces) > 1:
                listed = ', '.join(f'{t.name} ({t.trace_id})' for t in traces)
                ambiguous.append(
                    f'case {self._names[index]!r} matches {len(traces)} traces by {_RULES[rank]}: {listed}'
                )
            result.append(CaseMatch(case, traces[0], _RULES[rank]))
        if ambiguous:
            raise AmbiguousTraceError('; '.join(ambiguous))
        return result

    def _tried(self, index: int) -> str:
        name = self._names[index]
        wanted = _metadata_trace_id(self.cases[index].metadata)
        tried = f'no root span with {CASE_NAME}={name!r}, no trace file named {name!r}'
        return tried + (f', no trace with id {wanted!r}' if wanted else ', no trace_id in the metadata')


def match_traces(cases: Sequence[Case[Any, Any, Any]], traces: Iterable[TraceLike]) -> list[CaseMatch]:
    """Pair each case with its trace by the rules in the module docstring."""
    matcher = TraceMatcher(cases)
    for trace in traces:
        matcher.offer(trace)
    return matcher.matches()


def _metadata_trace_id(metadata: object) -> str | None:
    value = metadata.get('trace_id') if isinstance(metadata, Mapping) else getattr(metadata, 'trace_id', None)
    return value.lower() if isinstance(value, str) else None


def case_from_trace(trace: TraceLike, *, name: str | None = None) -> Case[Any, Any, Any]:
    """The case a trace stands for without a dataset: named after its root's `case_name` (else its file),
    inputs from its agent span, its trace id in the metadata."""
    if name is None:
        roots = trace.tree.roots
        name = next((v for r in roots if isinstance(v := r.attributes.get(CASE_NAME_ATTRIBUTE), str)), trace.name)
    return Case(name=name, inputs=trace_inputs(trace.tree), metadata={'trace_id': trace.trace_id})
