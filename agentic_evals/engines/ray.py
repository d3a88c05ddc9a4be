"""The Ray engine: trace files read, grouped by trace id and scored on a Ray cluster, with the local run's report.

The pipeline is Ray Data's: one task per file decodes it into per-trace parts (`traces._parts`),
Ray's shuffle (`groupby` on the trace id) brings each trace's parts together wherever its spans
were written (the Collector's batching and rotation spread a trace over lines and files), and the
workers join, extract and score. The driver receives only rows (one per case, a few hundred bytes
each) and folds them into the `ReportBuilder`, so it holds aggregates, never every case; with
`results`, the workers also write every result to part files in a directory.

Each trace gets the key of the place `load_traces` would yield it in (see `traces._parts.trace_key`),
so cases sort, and repeated names are told apart, exactly as in the local run. With a dataset, a
first pass reports each trace's hits (and scores the cases its root's `case_name` decides), the
driver's `CasePlan` decides the rest, and a second pass scores the traces those need from the
parts kept in Ray's object store. Tasks are retried when a worker dies; they have no side effects
but the results files, whose names come from their content, so a retried task rewrites the same
files. LLM judges call models: with any judge in the suite, scoring runs in an actor pool of
`judge_concurrency` actors, the limit on calls in flight.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import pickle
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import AgenticEvalsError
from ..offline.matching import CasePlan, is_side_trace, trace_label
from ..reports.stream import Key, ReportBuilder, Row, result_records
from ..traces._parts import FileOutcome, Part, expand_files, file_warnings, first_error, join, read_file, trace_key
from .local import Listener, Outcome, _add, _finish
from .work import Job, TraceHits, first_pass, score_trace, second_pass

INSTALL = "--engine ray needs Ray: pip install 'agentic-evals-otel[ray]'"
"""What a run without the `ray` extra is told, on one line."""

JUDGE_CONCURRENCY = 4
"""Judge actors scoring at once by default: each has one case (so its judges' model calls) in flight."""

# Kinds of the rows a stage sends on: the `kind` column, with a pickled payload in `data`.
_PART, _OUTCOME, _TRACE, _ROW, _HITS, _UNMATCHED, _TRACE_WARNINGS, _NOTE, _LOADED = range(9)

_JUDGE_CPUS = 0.1
"""What a judge actor reserves: it mostly waits for a model, and whole CPUs for the pool would leave the
tasks that feed it none on a small cluster (the run would wait for ever)."""

_SETTINGS = ('enable_progress_bars', 'shuffle_strategy')
"""The Ray Data settings a run changes, and puts back after it (the caller's process may use Ray Data too)."""

_PARTS = 'part-'
"""How the results part files' names start (files of an earlier run with this prefix are replaced)."""


class RayMissing(AgenticEvalsError):
    """Ray (the `ray` extra) is not installed."""


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise RayMissing(INSTALL) from None
    return ray


def run_ray(
    job: Job,
    sources: Sequence[str],
    builder: ReportBuilder,
    *,
    address: str | None = None,
    results: str | None = None,
    results_format: str = 'jsonl',
    listener: Listener | None = None,
    judge_concurrency: int = JUDGE_CONCURRENCY,
) -> Outcome:
    """Score the traces of `sources` (paths, globs, `s3://` or `gs://` URIs) on Ray, into `builder`.

    Connects to the cluster at `address` (`ray.init(address=...)`, e.g. `ray://head:10001` or
    `auto`), uses the one this process already joined, or starts a local one for the run. Raises
    `FileError` for an unusable file (the same line as the local run) and `AmbiguousTraceError` for
    a case two traces match by the same best rule. With `results`, a directory (or object-store
    prefix) gets every result as records in part files (`jsonl` or `parquet`).
    """
    ray = _ray()
    if job.group_by is not None:
        raise ValueError('group_by needs every trace in one process: use the local engine')
    if results_format not in ('jsonl', 'parquet'):
        raise ValueError(f'results_format is jsonl or parquet, not {results_format!r}')
    listener = listener or Listener()
    warn = listener.warning or _log
    specs = expand_files(sources, warn)
    started = _connect(ray, address)
    context = ray.data.DataContext.get_current()
    saved = {name: getattr(context, name) for name in _SETTINGS if hasattr(context, name)}
    try:
        context.enable_progress_bars = False
        if 'shuffle_strategy' in saved:
            # Sort-based: tasks only. The hash shuffle starts an actor per partition, which costs
            # tens of seconds on a small cluster before the first group is scored.
            context.shuffle_strategy = 'sort_shuffle_pull_based'
        run = _Run(ray, job, builder, listener, warn, len(specs), judge_concurrency, results, results_format)
        return run.run(specs)
    finally:
        for name, value in saved.items():
            setattr(context, name, value)
        if started:
            ray.shutdown()


def _log(message: str) -> None:
    logging.getLogger('agentic_evals.traces').warning('%s', message)


def _connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at `address` or start a local one (unless this process is in one); whether we started it."""
    # Ray's notes (the cluster started, progress bars off) are not the run's: warnings only, and not that one.
    logging.getLogger('ray.data').setLevel(logging.WARNING)
    logging.getLogger('ray.data._internal.progress').setLevel(logging.ERROR)
    if ray.is_initialized():
        return False
    package = Path(__file__).resolve().parent.parent
    address = address or os.environ.get('RAY_ADDRESS') or None
    if address is not None:
        # Another machine: it gets this package uploaded; its Python has the dependencies (see docs/scale.md).
        ray.init(
            address=address,
            runtime_env={'py_modules': [str(package)]},
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    else:
        # The same interpreter on this machine: the package (even an uninstalled clone) is on its path.
        paths = [str(package.parent), *(path for path in sys.path if path)]
        env = {'PYTHONPATH': os.pathsep.join(dict.fromkeys(paths))}
        ray.init(
            runtime_env={'env_vars': env}, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING
        )
    return True


class _Run:
    def __init__(
        self,
        ray: Any,
        job: Job,
        builder: ReportBuilder,
        listener: Listener,
        warn: Callable[[str], None],
        files: int,
        judge_concurrency: int,
        results: str | None,
        results_format: str,
    ) -> None:
        self.ray = ray
        self.job = job
        self.builder = builder
        self.listener = listener
        self.warn = warn
        self.files = files
        self.judges = _has_judges(job)
        self.judge_concurrency = max(1, judge_concurrency)
        self.results = _results_directory(results) if results is not None else None
        self.results_format = results_format
        self.outcome = Outcome()

    def run(self, specs: Sequence[Any]) -> Outcome:
        data = self.ray.data
        if not specs:
            return self.outcome
        files = data.from_items([{'spec': pickle.dumps(spec)} for spec in specs], override_num_blocks=len(specs))
        parts = files.flat_map(_read_rows).materialize()
        outcomes = [pickle.loads(row['data']) for row in _kind(parts, _OUTCOME).iter_rows()]
        error = first_error(outcomes)
        if error is not None:
            raise error
        for warning in file_warnings(outcomes):
            self.warn(warning)
        parts = _kind(parts, _PART)
        job = self.job
        if job.index is None:
            self._consume(self._scored(parts, _Score(job, self.files, None)))
            return self.outcome
        plan = CasePlan(job.index)
        hits: list[tuple[Key, TraceHits]] = []
        unmatched: list[tuple[Key, str]] = []
        self._consume(self._scored(parts, _Score(job, self.files, None)), hits=hits, unmatched=unmatched)
        for _, found in sorted(hits, key=lambda pair: pair[0]):
            plan.offer(found.trace_id, found.label, found.hits)
        del hits
        unmatched.sort(key=lambda pair: pair[0])
        for _, label in unmatched[:5]:
            plan.unmatch(label)
        if len(unmatched) > 5:
            plan.unmatch(unmatched[5][1], len(unmatched) - 5)
        decided = plan.decide()

        def second(wanted: dict[str, list[int]]) -> list[Row]:
            keep = frozenset(wanted)
            chosen = parts.map_batches(_trace_filter(keep), batch_format='pyarrow')
            self._consume(self._scored(chosen, _Score(job, self.files, wanted)), announce=False)
            return []

        _finish(job, plan, decided, self.builder, self.outcome, self.listener, second)
        return self.outcome

    def _scored(self, parts: Any, score: _Score) -> Any:
        """Parts grouped by trace id, joined, scored: the rows the driver reads (results written on the way)."""
        joined = parts.groupby('trace_id').map_groups(_function(_Join(self.files)), batch_format='numpy')
        if self.judges:
            scored = joined.map_batches(
                _Scorer,
                fn_constructor_args=(score,),
                batch_format='numpy',
                batch_size=1,
                concurrency=self.judge_concurrency,
                num_cpus=_JUDGE_CPUS,
            )
        else:
            scored = joined.map_batches(_function(score), batch_format='numpy')
        if self.results is not None:
            write = _WriteResults(self.results, self.results_format)
            scored = scored.map_batches(_function(write), batch_format='numpy')
        return scored

    def _consume(
        self,
        rows: Any,
        *,
        hits: list[tuple[Key, TraceHits]] | None = None,
        unmatched: list[tuple[Key, str]] | None = None,
        announce: bool = True,
    ) -> None:
        listener = self.listener
        for row in rows.iter_rows():
            kind = int(row['kind'])
            item = pickle.loads(row['data'])
            if kind == _ROW:
                _add(self.builder, [item], listener)
            elif kind == _LOADED:
                if announce:
                    self.outcome.traces += item
                    if listener.loaded is not None:
                        listener.loaded(item)
            elif kind == _HITS and hits is not None:
                hits.append(item)
            elif kind == _UNMATCHED and unmatched is not None:
                unmatched.append(item)
            elif kind == _TRACE_WARNINGS:
                if announce and listener.trace_warnings is not None:
                    listener.trace_warnings(*item)
            elif kind == _NOTE and announce:
                self.warn(item)


def _function(call: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`call` as a plain function: Ray Data takes a class as an actor pool's and wants a function otherwise.

    Tasks, and so these functions, are retried when a worker dies (Ray's default: three times).
    """

    def batch(rows: dict[str, Any]) -> dict[str, Any]:
        return call(rows)

    return batch


def _has_judges(job: Job) -> bool:
    """Whether any evaluator calls a model (ours or pydantic-evals' `LLMJudge`)."""
    from pydantic_evals.evaluators import LLMJudge

    from ..evaluators.judges.base import JudgeEvaluator

    evaluators = list(job.evaluators)
    for case in job.cases:
        evaluators.extend(case.evaluators)
    return any(isinstance(evaluator, (JudgeEvaluator, LLMJudge)) for evaluator in evaluators)


def _results_directory(results: str) -> str:
    """The results directory (created, its earlier part files removed), as a URI or an absolute path."""
    from pyarrow import fs

    target = results if '://' in results else os.path.abspath(results)
    filesystem, path = fs.FileSystem.from_uri(target)
    info = filesystem.get_file_info(path)
    if info.type == fs.FileType.File:
        raise AgenticEvalsError(f'{results}: --results with --engine ray names a directory, and this is a file')
    filesystem.create_dir(path, recursive=True)
    for found in filesystem.get_file_info(fs.FileSelector(path)):
        if found.type == fs.FileType.File and found.base_name.startswith(_PARTS):
            filesystem.delete_file(found.path)
    return target


def _kind(dataset: Any, kind: int) -> Any:
    import pyarrow.compute as pc

    def keep(table: Any) -> Any:
        return table.filter(pc.equal(table['kind'], kind))

    return dataset.map_batches(keep, batch_format='pyarrow')


def _trace_filter(keep: frozenset[str]) -> Callable[[Any], Any]:
    def chosen(table: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        return table.filter(pc.is_in(table['trace_id'], value_set=pa.array(sorted(keep), pa.string())))

    return chosen


def _batch(kinds: list[int], data: list[bytes]) -> dict[str, Any]:
    import numpy as np

    return {'kind': np.array(kinds, dtype=np.int8), 'data': np.array(data, dtype=object)}


def _read_rows(row: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One file's parts (then its outcome), as rows to shuffle by trace id."""
    for item in read_file(pickle.loads(row['spec'])):
        if isinstance(item, FileOutcome):
            yield {'kind': _OUTCOME, 'trace_id': '', 'data': pickle.dumps(item, pickle.HIGHEST_PROTOCOL)}
        else:
            yield {'kind': _PART, 'trace_id': item.trace_id, 'data': pickle.dumps(item, pickle.HIGHEST_PROTOCOL)}


class _Join:
    """One trace's parts to its `LoadedTrace` and key (or the warnings of a trace without spans)."""

    def __init__(self, files: int) -> None:
        self.files = files

    def __call__(self, group: dict[str, Any]) -> dict[str, Any]:
        parts: list[Part] = [pickle.loads(data) for data in group['data']]
        notes: list[str] = []
        trace = join(parts, notes.append)
        kinds = [_NOTE] * len(notes)
        data = [pickle.dumps(note) for note in notes]
        if trace is not None:
            kinds.append(_TRACE)
            data.append(pickle.dumps((trace_key(parts, self.files), trace), pickle.HIGHEST_PROTOCOL))
        return _batch(kinds, data)


class _Score:
    """Scores the joined traces of a batch: every trace (no dataset), the first pass, or the second (`wanted`)."""

    def __init__(self, job: Job, files: int, wanted: dict[str, list[int]] | None) -> None:
        self.job = job
        self.files = files
        self.wanted = wanted

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        kinds: list[int] = []
        data: list[bytes] = []
        traces = 0

        def send(kind: int, item: object) -> None:
            kinds.append(kind)
            data.append(pickle.dumps(item, pickle.HIGHEST_PROTOCOL))

        job = self.job
        for kind, payload in zip(batch['kind'], batch['data'], strict=True):
            if kind != _TRACE:
                kinds.append(int(kind))
                data.append(payload)
                continue
            key, trace = pickle.loads(payload)
            traces += 1
            if self.wanted is not None:
                for row in second_pass(job, trace, self.wanted.get(trace.trace_id, ())):
                    send(_ROW, row)
                continue
            if trace.warnings:
                send(_TRACE_WARNINGS, (trace.name, trace.trace_id, trace.warnings))
            if is_side_trace(trace):
                continue
            if job.index is None:
                send(_ROW, score_trace(job, trace, key))
                continue
            hits, rows = first_pass(job, trace, 0)
            if hits is None:
                send(_UNMATCHED, (key, trace_label(trace)))
            else:
                send(_HITS, (key, hits))
            for row in rows:
                send(_ROW, row)
        if traces:
            send(_LOADED, traces)
        return _batch(kinds, data)


class _Scorer:
    """An actor of the judges' pool: scores one batch at a time, so the pool's size bounds the model calls."""

    def __init__(self, score: _Score) -> None:
        self.score = score

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return self.score(batch)


class _WriteResults:
    """Writes the result records of a batch's rows to one part file, named after its content, and passes the rows on."""

    def __init__(self, directory: str, format: str) -> None:
        self.directory = directory
        self.format = format

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        records: list[dict[str, Any]] = []
        digest = hashlib.sha256()
        for kind, payload in zip(batch['kind'], batch['data'], strict=True):
            if kind == _ROW:
                digest.update(payload)
                _, entry = pickle.loads(payload)
                records.extend(result_records(entry))
        if records:
            self._write(records, f'{_PARTS}{digest.hexdigest()[:32]}.{self.format}')
        return batch

    def _write(self, records: list[dict[str, Any]], name: str) -> None:
        from pyarrow import fs

        if self.format == 'jsonl':
            content = ''.join(json.dumps(record) + '\n' for record in records).encode()
        else:
            content = _parquet(records)
        filesystem, root = fs.FileSystem.from_uri(self.directory)
        final = f'{root.rstrip("/")}/{name}'
        temporary = f'{final}.tmp'
        with filesystem.open_output_stream(temporary, compression=None) as out:
            out.write(content)
        filesystem.move(temporary, final)


def _parquet(records: list[dict[str, Any]]) -> bytes:
    """Records as Parquet; `value` as JSON text, since one column cannot hold booleans, numbers and strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = ('case', 'trace_id', 'kind', 'name', 'evaluator', 'value', 'reason')
    table = pa.table(
        {
            column: pa.array(
                [json.dumps(record[column]) if column == 'value' else record[column] for record in records],
                pa.string(),
            )
            for column in columns
        }
    )
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()
