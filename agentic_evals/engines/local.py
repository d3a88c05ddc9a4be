"""The local engine: traces scored in this process, or in `workers` processes of the standard library's pool.

Every case's row goes to a `ReportBuilder` (spooled to disk, aggregated as it comes), so memory
holds one trace per process and a key per case, never the report. With a dataset, cases are
decided from the traces' hits in a first pass (see `work`); only traces a weaker rule than
`case_name` decided are read a second time.

With `workers` > 1, each worker reads every file's trace ids (cheap: no JSON is parsed) and decodes
and scores only its share of the traces (by trace id), writing its rows to a spool file of its own
that the driver folds into the report; the report is the one a single process makes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import AgenticEvalsError
from ..offline.matching import (
    CasePlan,
    Decision,
    TraceLike,
    group_conversations,
    is_side_trace,
    trace_label,
    without_side_traces,
)
from ..reports.stream import ReportBuilder, Row
from ..traces import load_traces
from ..traces._load import load_partition
from . import work
from .work import Job, TraceHits, first_pass, missing_rows, pending, score_trace, second_pass


@dataclass
class Listener:
    """What the engine tells its caller as it goes: a trace loaded (with its warnings), a case scored,
    a warning about no one trace. Every callback may be left out."""

    loaded: Callable[[int], None] | None = None
    """Called with how many traces were just read."""
    trace_warnings: Callable[[str, str, Sequence[str]], None] | None = None
    """Called with a trace's name, id and warnings, for each trace that has any."""
    scored: Callable[[int], None] | None = None
    """Called with how many cases were just scored."""
    warning: Callable[[str], None] | None = None


@dataclass
class Outcome:
    """What a run found besides the rows: how many traces it read, and those no case matched."""

    traces: int = 0
    unmatched: list[str] = field(default_factory=list)
    """The first few unmatched traces' labels; `unmatched_count` counts them all."""
    unmatched_count: int = 0


def run_local(
    job: Job, sources: Sequence[str], builder: ReportBuilder, *, workers: int = 1, listener: Listener | None = None
) -> Outcome:
    """Score the traces of `sources` into `builder`; raises `FileError` for an unusable file and
    `AmbiguousTraceError` for a case two traces match by the same best rule."""
    listener = listener or Listener()
    if workers > 1:
        return _Pool(job, sources, builder, workers, listener).run()
    outcome = Outcome()

    def traces(on_warning: Callable[[str], None] | None) -> Iterator[TraceLike]:
        loaded: Iterable[TraceLike] = load_traces(*sources, on_warning=on_warning)
        if job.group_by == 'conversation':
            loaded = group_conversations(loaded)
        return iter(loaded)

    def announced(stream: Iterator[TraceLike]) -> Iterator[tuple[int, TraceLike]]:
        for arrival, trace in enumerate(without_side_traces(stream)):
            outcome.traces += 1
            if listener.loaded is not None:
                listener.loaded(1)
            warnings: Sequence[str] = getattr(trace, 'warnings', ())  # a conversation has none of its own
            if warnings and listener.trace_warnings is not None:
                listener.trace_warnings(trace.name, trace.trace_id, warnings)
            yield arrival, trace

    if job.index is None:
        for arrival, trace in announced(traces(listener.warning)):
            builder.add(*score_trace(job, trace, (arrival,)))
            _scored(listener, 1)
        return outcome
    plan = CasePlan(job.index)
    _first(job, (trace for _, trace in announced(traces(listener.warning))), plan, builder, listener)
    decided = plan.decide()
    # The second read of the same files: their warnings were given by the first.
    _finish(job, plan, decided, builder, outcome, listener, lambda wanted: _second(job, traces(_quiet), wanted))
    return outcome


def _quiet(message: str) -> None:
    """The warnings of a file read again, which its first read gave."""


def _first(job: Job, traces: Iterable[TraceLike], plan: CasePlan, builder: ReportBuilder, listener: Listener) -> None:
    """The first pass, in a function of its own so that no trace outlives it."""
    for trace in traces:
        hits, rows = first_pass(job, trace, 0)
        _offer(plan, trace, hits)
        _add(builder, rows, listener)


def _offer(plan: CasePlan, trace: TraceLike, hits: TraceHits | None) -> None:
    if hits is None:
        plan.unmatch(trace_label(trace))
    else:
        plan.offer(hits.trace_id, hits.label, hits.hits)


def _add(builder: ReportBuilder, rows: Iterable[Row], listener: Listener) -> None:
    count = 0
    for key, entry in rows:
        builder.add(key, entry)
        count += 1
    if count:
        _scored(listener, count)


def _scored(listener: Listener, count: int) -> None:
    if listener.scored is not None:
        listener.scored(count)


def _second(job: Job, traces: Iterator[TraceLike], wanted: dict[str, list[int]]) -> Iterator[Row]:
    for trace in traces:
        cases = wanted.pop(trace.trace_id, None)
        if cases is not None:
            yield from second_pass(job, trace, cases)
            if not wanted:
                return


def _finish(
    job: Job,
    plan: CasePlan,
    decided: dict[int, Decision],
    builder: ReportBuilder,
    outcome: Outcome,
    listener: Listener,
    second: Callable[[dict[str, list[int]]], Iterable[Row]],
) -> None:
    """After the first pass: the cases decided by a weaker rule scored, the cases without a trace failed."""
    wanted = pending(decided)
    if wanted:
        _add(builder, second(wanted), listener)
    _add(builder, missing_rows(job, decided), listener)
    outcome.unmatched = plan.unmatched
    outcome.unmatched_count = plan.unmatched_count


_POLL = 0.2
"""Seconds between looks at the workers' counters for the progress display."""

# The pool: each worker process gets the job once (inherited, or pickled where processes are spawned).
_job: Job | None = None
_counters: Any = None
"""Traces read and rows made by every worker, shared with the driver for its progress display."""


def _stop(pool: ProcessPoolExecutor) -> None:
    """End `pool` at once: running tasks killed (their workers ignore Ctrl-C), queued ones cancelled."""
    terminate = getattr(pool, 'terminate_workers', None)  # Python 3.14+; it shuts the pool down too
    if terminate is not None:
        terminate()
        return
    processes: dict[int, multiprocessing.Process] = getattr(pool, '_processes', None) or {}  # before: private
    for process in list(processes.values()):
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _init_worker(job: Job, counters: Any) -> None:
    global _job, _counters
    # Ctrl-C reaches every process of the terminal's group: the driver stops the workers itself
    # (`_stop`), so theirs would only print a traceback each.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, 'pthread_sigmask'):  # started with it blocked (`_sigint_held`): a pending one is dropped
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _job, _counters = job, counters
    work.forget_loop()  # a forked worker must not share its parent's event loop (and its epoll instance)


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Ctrl-C held back in this thread while it starts workers: a process starts with its parent's
    signal mask, so a Ctrl-C pressed before a new worker ignores it (`_init_worker`) waits there and
    is dropped, instead of a traceback from a worker still starting; here it is delivered on exit."""
    if not hasattr(signal, 'pthread_sigmask'):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@dataclass
class _Share:
    """What one worker sends back for its share of the traces: its rows spooled in a file, and the rest."""

    rows: str
    """The spool file: the rows, and (place, name, trace id, warnings) of each trace that has warnings."""
    count: int
    traces: int
    hits: list[TraceHits]
    unmatched: list[str]
    unmatched_count: int
    warnings: list[str]


def _work(sources: Sequence[str], part: int, parts: int, wanted: dict[str, list[int]] | None, directory: str) -> _Share:
    """One worker's share: every trace whose id falls in partition `part` (first pass, or second with `wanted`)."""
    job = _job
    assert job is not None
    warnings: list[str] = []
    fd, path = tempfile.mkstemp(prefix='rows-', dir=directory)
    share = _Share(path, 0, 0, [], [], 0, warnings)
    try:
        with os.fdopen(fd, 'wb') as out:
            _share(job, sources, part, parts, wanted, share, out)
    except BaseException:
        _remove(path)
        raise
    return share


def _count(which: int, count: int) -> None:
    counter = _counters[which]
    with counter.get_lock():
        counter.value += count


def _share(
    job: Job,
    sources: Sequence[str],
    part: int,
    parts: int,
    wanted: dict[str, list[int]] | None,
    share: _Share,
    out: IO[bytes],
) -> None:
    warnings = share.warnings

    def write(rows: Iterable[Row]) -> None:
        count = 0
        for row in rows:
            pickle.dump(row, out, protocol=pickle.HIGHEST_PROTOCOL)
            count += 1
        share.count += count
        _count(1, count)

    for arrival, trace in load_partition(*sources, part=part, parts=parts, on_warning=warnings.append):
        if wanted is not None:
            cases = wanted.get(trace.trace_id)
            if cases is not None:
                write(second_pass(job, trace, cases))
            continue
        share.traces += 1
        _count(0, 1)
        if trace.warnings:  # in the spool, with the trace's place: a run of bad traces must not fill memory
            pickle.dump((arrival, trace.name, trace.trace_id, trace.warnings), out, protocol=pickle.HIGHEST_PROTOCOL)
            share.count += 1
        if is_side_trace(trace):
            continue
        if job.index is None:
            write([score_trace(job, trace, (arrival,))])
            continue
        hits, rows = first_pass(job, trace, arrival)
        if hits is None:
            if len(share.unmatched) < 5:
                share.unmatched.append(trace_label(trace))
            share.unmatched_count += 1
        else:
            share.hits.append(hits)
        write(rows)


class _Pool:
    def __init__(self, job: Job, sources: Sequence[str], builder: ReportBuilder, workers: int, listener: Listener):
        self.job = job
        self.sources = sources
        self.builder = builder
        self.workers = workers
        self.listener = listener
        self.seen: set[str] = set()
        """Warnings already passed on: every worker reads every file's ids, so file warnings come N times."""

    def run(self) -> Outcome:
        if self.job.group_by is not None:
            raise ValueError('group_by needs every trace in one process: use one worker')
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context('fork' if 'fork' in methods else 'spawn')
        outcome = Outcome()
        self.counters = (context.Value('q', 0), context.Value('q', 0))
        self.shown = [0, 0]
        initargs = (self.job, self.counters)
        with (
            tempfile.TemporaryDirectory(prefix='agentic-evals-rows-') as self.directory,  # a killed worker's file too
            ProcessPoolExecutor(self.workers, context, initializer=_init_worker, initargs=initargs) as pool,
        ):
            try:
                return self._score(pool, outcome)
            except BaseException:
                _stop(pool)  # leaving the pool waits for its tasks: a Ctrl-C must not wait for every share
                raise

    def _score(self, pool: ProcessPoolExecutor, outcome: Outcome) -> Outcome:
        """Both passes over the traces, in `pool`'s workers."""
        shares = self._gather(pool, None)
        outcome.traces = sum(s.traces for s in shares)
        if self.job.index is None:
            return outcome
        plan = CasePlan(self.job.index)
        for hits in sorted((h for s in shares for h in s.hits), key=lambda h: h.arrival):
            plan.offer(hits.trace_id, hits.label, hits.hits)
        for share in shares:
            if share.unmatched_count:
                plan.unmatch(share.unmatched[0], share.unmatched_count)
        decided = plan.decide()

        def second(wanted: dict[str, list[int]]) -> list[Row]:
            self._gather(pool, wanted)
            return []

        _finish(self.job, plan, decided, self.builder, outcome, self.listener, second)
        return outcome

    def _gather(self, pool: ProcessPoolExecutor, wanted: dict[str, list[int]] | None) -> list[_Share]:
        """Run every partition, folding each share's rows into the builder as its worker finishes."""
        with _sigint_held():  # the first submit starts the workers
            futures = [
                pool.submit(_work, self.sources, part, self.workers, wanted, self.directory)
                for part in range(self.workers)
            ]
        shares: dict[Future[_Share], _Share] = {}
        waiting = set(futures)
        try:
            while waiting:
                done, waiting = wait(waiting, timeout=_POLL, return_when=FIRST_COMPLETED)
                self._progress()
                for future in done:
                    try:
                        shares[future] = future.result()
                    except BrokenProcessPool:
                        raise AgenticEvalsError(
                            'a worker process died (killed, or out of memory?); run again, with fewer --workers'
                        ) from None
            ordered = [shares[future] for future in futures]  # by partition: the same messages, in one order
            self._fold(ordered)
        finally:
            for future in waiting:
                future.cancel()
            for share in shares.values():
                _remove(share.rows)
        return ordered

    def _progress(self) -> None:
        """Pass on how many traces the workers read and rows they made since the last look."""
        for which, callback in enumerate((self.listener.loaded, self.listener.scored)):
            now = self.counters[which].value
            if now > self.shown[which] and callback is not None:
                callback(now - self.shown[which])
            self.shown[which] = now

    def _fold(self, shares: list[_Share]) -> None:
        """The shares' rows into the builder; their warnings passed on as one process would give them: the
        files' first (each once: every worker reads every file's ids), then the traces', in their order."""
        listener = self.listener
        for share in shares:
            for warning in share.warnings:
                if warning not in self.seen:
                    self.seen.add(warning)
                    if listener.warning is not None:
                        listener.warning(warning)
        warned: list[tuple[int, str, str, Sequence[str]]] = []
        for share in shares:
            _add(self.builder, self._read(share, warned), Listener())  # counted already, as the workers made them
        if listener.trace_warnings is not None:
            for _, name, trace_id, warnings in sorted(warned, key=lambda item: item[0]):
                listener.trace_warnings(name, trace_id, warnings)

    def _read(self, share: _Share, warned: list[tuple[int, str, str, Sequence[str]]]) -> Iterator[Row]:
        """The share's rows; the trace warnings spooled between them go to `warned`."""
        with open(share.rows, 'rb') as spool:
            for _ in range(share.count):
                item = pickle.load(spool)
                if len(item) == 4:
                    warned.append(item)
                else:
                    yield item


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
