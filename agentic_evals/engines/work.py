"""What a worker does with one trace, the same in every engine (one process, a pool, a Ray cluster).

A `Job` is everything scoring needs and pickles. Without a dataset each trace is its own case
(`score_trace`). With one, which trace a case is scored on can only be decided once every trace
has been seen (a stronger rule may find another one later), and holding every matched tree until
then would cost about 190 KB a trace. So a first pass (`first_pass`) reads only each trace's
*hits* (the cases it may be, `offline.matching.CaseIndex`), and scores at once the cases it
matches by the strongest rule, its root's `case_name`: no later trace can take those from it (a
second one would make the run ambiguous, an error). The driver's `CasePlan` then decides the
rest, and `second_pass` scores the traces those need, read again. Traces exported from
pydantic-evals carry `case_name`, so they are read once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_evals import Case
from pydantic_evals.evaluators import Evaluator
from pydantic_evals.reporting import ReportCase, ReportCaseFailure

from ..offline.evaluate import GroupBy, score_case
from ..offline.matching import CaseIndex, Decision, Hit, TraceLike, case_from_trace, trace_label
from ..offline.suite import Suite
from ..reports.case_trace import case_details
from ..reports.document import CaseFailure, CaseResult, entry_of
from ..reports.stream import Key, Row


@dataclass(frozen=True)
class Job:
    """What scoring a trace needs, in every engine: the suite, whether to draw each case's timeline and
    alignments (only the JSON and HTML reports and the events show them), how traces are grouped."""

    suite: Suite
    details: bool = False
    group_by: GroupBy | None = None
    index: CaseIndex | None = field(default=None, compare=False)
    """The dataset's matching tables (`None` without a dataset); built by `Job.of`."""

    @classmethod
    def of(cls, suite: Suite, *, details: bool = False, group_by: GroupBy | None = None) -> Job:
        index = CaseIndex(suite.dataset.cases) if suite.dataset is not None else None
        return cls(suite, details, group_by, index)

    @property
    def cases(self) -> Sequence[Case[Any, Any, Any]]:
        return self.suite.dataset.cases if self.suite.dataset is not None else ()

    @property
    def evaluators(self) -> Sequence[Evaluator[Any, Any, Any]]:
        """The evaluators every case runs (a dataset's cases add their own)."""
        if self.suite.dataset is not None:
            return self.suite.dataset.evaluators
        return self.suite.evaluators


@dataclass(frozen=True)
class TraceHits:
    """A trace that may be some case's, as the first pass reports it to the driver's `CasePlan`."""

    arrival: int
    trace_id: str
    label: str
    hits: tuple[Hit, ...]


_loop: asyncio.AbstractEventLoop | None = None


def _run(result: Any) -> Any:
    """Run a coroutine on this process's one event loop: a loop per trace would cost more than scoring."""
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop.run_until_complete(result)


def forget_loop() -> None:
    """Drop the event loop this process inherited: the next trace makes its own."""
    global _loop
    _loop = None


def _entry(job: Job, case: Case[Any, Any, Any], trace: TraceLike) -> CaseResult | CaseFailure:
    result: ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any] = _run(score_case(case, trace, job.evaluators))
    details = case_details(trace.tree, result) if job.details and isinstance(result, ReportCase) else None
    return entry_of(result, details)


def score_trace(job: Job, trace: TraceLike, key: Key) -> Row:
    """Without a dataset: the trace scored as its own case (a repeated name is told apart later, in key
    order, by `reports.stream.ReportBuilder`)."""
    return key, _entry(job, case_from_trace(trace), trace)


def first_pass(job: Job, trace: TraceLike, arrival: int) -> tuple[TraceHits | None, list[Row]]:
    """With a dataset: the trace's hits (`None` when it matches no case) and the rows of the cases it
    decides already, by its root's `case_name`."""
    assert job.index is not None
    hits = job.index.hits(trace)
    if not hits:
        return None, []
    cases = job.cases
    rows: list[Row] = [((index,), _entry(job, cases[index], trace)) for index, rank in hits if rank == 0]
    return TraceHits(arrival, trace.trace_id, trace_label(trace), tuple(hits)), rows


def pending(decided: Mapping[int, Decision]) -> dict[str, list[int]]:
    """Trace id -> the cases still to score on it: those a weaker rule than `case_name` decided."""
    wanted: dict[str, list[int]] = {}
    for index, decision in decided.items():
        if decision.rank > 0:
            wanted.setdefault(decision.trace_id, []).append(index)
    return wanted


def second_pass(job: Job, trace: TraceLike, cases: Sequence[int]) -> list[Row]:
    """The rows of the cases the plan gave this trace after the first pass."""
    dataset_cases = job.cases
    rows: list[Row] = [((index,), _entry(job, dataset_cases[index], trace)) for index in cases]
    return rows


def missing_rows(job: Job, decided: Mapping[int, Decision]) -> Iterator[Row]:
    """A failure row for every case no trace was found for, saying which rules it tried."""
    assert job.index is not None
    for index, case in enumerate(job.cases):
        if index not in decided:
            result = _run(score_case(case, None, job.evaluators, why=job.index.tried(index)))
            yield (index,), entry_of(result)
